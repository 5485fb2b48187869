"""A recipe's compiler and flags reach the build, and compiles-clean reads what it says.

Real gcc on this machine (and on the sshd "Pi" in test_recipe_ssh.py): a program with an
unused variable fails under -Wall -Werror; under -Wall alone it builds, but the warning
the compiler wrote still fails compiles-clean; the clean program passes both.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_runs import C_ANSWER, CLEAN, UNUSED, answers, c_request, clean, run_cli

from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.local.target import LocalTarget

# scripts/test installs gcc; without it these tests fail saying so, never skip.
assert shutil.which("gcc"), "gcc is needed (scripts/test installs it: apt install gcc)"


async def run_local(tmp_path: Path, code: str, run_id: str, flags: list[str],
                    compiler: str = "") -> RunResult:
    target = LocalTarget(TargetConfig(name="local"), tmp_path / "ws")
    try:
        return await target.run(c_request(code, run_id, flags, compiler), lambda s, t: None)
    finally:
        await target.close()


async def test_werror_fails_the_build_of_an_unused_variable(tmp_path: Path) -> None:
    result = await run_local(tmp_path, UNUSED, "w_1", ["-Wall", "-Werror"])
    assert result.compile_failed and "-Wall -Werror" in result.command
    assert "unused variable" in result.stderr
    check = clean(result)
    assert not check.met and "the build failed" in check.evidence


async def test_a_warning_of_a_build_that_passed_fails_compiles_clean(tmp_path: Path) -> None:
    result = await run_local(tmp_path, UNUSED, "w_2", ["-Wall"])
    assert result.exit_code == 0 and not result.compile_failed and result.stdout == "hi\n"
    assert "unused variable" in result.build_stderr and result.stderr == ""
    check = clean(result)
    assert not check.met and check.evidence.startswith("the compiler warned:")
    assert "unused variable" in check.evidence


async def test_the_clean_program_passes_under_werror(tmp_path: Path) -> None:
    result = await run_local(tmp_path, CLEAN, "w_3", ["-Wall", "-Werror"], compiler="gcc")
    assert result.exit_code == 0 and result.stdout == "hi\n" and result.build_stderr == ""
    assert result.command.startswith("gcc -Wall -Werror -o prog main.c -lm && ")
    assert clean(result).met


async def test_an_unknown_compiler_is_reported_not_run(tmp_path: Path) -> None:
    result = await run_local(tmp_path, CLEAN, "w_4", [], compiler="no-such-cc")
    assert result.exit_code != 0 and "no-such-cc is not installed" in result.stderr


RECIPE = """\
name = "werror"
prompt = "Print hi in C"
target = "local"
llm = "replay:werror.md"
judge = "off"
max_retries = 2
compiler = "gcc"
flags = ["-Wall", "-Werror"]
"""


def test_a_recipe_run_fails_the_warning_then_verifies_the_clean_fix(tmp_path: Path) -> None:
    (tmp_path / "werror.md").write_text(answers(C_ANSWER.format(UNUSED),
                                                C_ANSWER.format(CLEAN)))
    (tmp_path / "werror.toml").write_text(RECIPE)
    r = run_cli("recipe", "run", "werror.toml", "--json", "--workspace", str(tmp_path / "ws"),
                cwd=tmp_path, stdin="")
    assert r.returncode == 0, r.stderr[-3000:]
    (row,) = json.loads(r.stdout)["recipes"]
    assert (row["status"], row["attempts"]) == ("VERIFIED", 2)
    transcript = (tmp_path / "ws" / row["transcript"]).read_text()
    assert "- command: gcc -Wall -Werror -o prog " in transcript
    feedback = transcript.split("(feedback)")[1]
    assert "error: unused variable" in feedback  # the first build's error went back


def test_a_recipe_without_werror_fails_the_warning_as_a_criterion(tmp_path: Path) -> None:
    (tmp_path / "werror.md").write_text(answers(C_ANSWER.format(UNUSED),
                                                C_ANSWER.format(CLEAN)))
    (tmp_path / "werror.toml").write_text(RECIPE.replace('"-Wall", "-Werror"', '"-Wall"'))
    r = run_cli("recipe", "run", "werror.toml", "--json", "--workspace", str(tmp_path / "ws"),
                cwd=tmp_path, stdin="")
    assert r.returncode == 0, r.stderr[-3000:]
    (row,) = json.loads(r.stdout)["recipes"]
    assert (row["status"], row["attempts"]) == ("VERIFIED", 2)
    record = json.loads((tmp_path / "ws" / row["transcript"]).read_text()
                        .rsplit("```json\n", 1)[1].split("```")[0])
    first = record["attempts"][0]
    assert (first["exit_code"], first["verdict"]) == (0, "criteria_unmet")
    transcript = (tmp_path / "ws" / row["transcript"]).read_text()
    feedback = transcript.split("(feedback)")[1]
    assert "the compiler warned:" in feedback and "unused variable" in feedback
