"""`verifybot recipe run/new` end to end: real CLI, replayed LLM and judge, real local runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_runs import run_cli
from junit import check_junit_shape
from project import EXAMPLES

from verifybot_tui.core.verify.recipe import load_recipe


def copy_examples(tmp_path: Path) -> Path:
    ex = tmp_path / "examples"
    ex.mkdir()
    for name in ("rocket.md", "rocket.toml", "squares.md", "squares_judge.md", "squares.toml"):
        shutil.copy(EXAMPLES / name, ex / name)
    return ex


def test_all_verified_exits_0_with_a_junit_report(tmp_path: Path):
    ex = copy_examples(tmp_path)
    r = run_cli("recipe", "run", str(ex / "rocket.toml"), str(ex / "squares.toml"),
                "--junit", "r.xml", "--parallel", "2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = [line.split()[:3] for line in r.stdout.splitlines()[1:3]]
    assert rows == [["rocket-apogee", "VERIFIED", "2"], ["sum-of-squares", "VERIFIED", "4"]]
    assert r.stdout.splitlines()[-1] == "2 of 2 verified"
    root = check_junit_shape((tmp_path / "r.xml").read_text())
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "0", "0")
    # The headless run took every judge path: FAIL, REVISE, unparsable (a failure), PASS.
    assert "judge: UNPARSABLE" in r.stderr and "judge: REVISE" in r.stderr


def test_one_failed_exits_1_and_the_junit_names_it(tmp_path: Path):
    ex = copy_examples(tmp_path)
    strict = ex / "strict.toml"
    strict.write_text((ex / "rocket.toml").read_text()
                      .replace('name = "rocket-apogee"', 'name = "rocket-strict"')
                      .replace("max_retries = 2", "max_retries = 0"))
    r = run_cli("recipe", "run", str(ex / "rocket.toml"), str(strict), "--junit", "r.xml",
                "--json", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    report = json.loads(r.stdout)
    assert [x["status"] for x in report["recipes"]] == ["VERIFIED", "FAILED"]
    assert report["all_verified"] is False
    root = check_junit_shape((tmp_path / "r.xml").read_text())
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("2", "1", "0")
    (failed,) = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert failed.get("name") == "rocket-strict"
    assert '"Apogee: 0.0 m": read 0.0, not between 100 and 5000' in failed.find("failure").text


def test_a_bad_recipe_stops_everything_with_exit_2(tmp_path: Path):
    ex = copy_examples(tmp_path)
    bad = ex / "bad.toml"
    bad.write_text('name = "x"\nprompt = "y"\ntarget = "mars"\n')
    r = run_cli("recipe", "run", str(ex / "rocket.toml"), str(bad), cwd=tmp_path)
    assert r.returncode == 2
    assert f"{bad}: key 'target' names 'mars', but there is no [targets.mars]" in r.stderr
    assert not (tmp_path / "raw_md").exists()  # not even the good one ran


def test_recipe_new_writes_a_recipe_from_the_last_session(tmp_path: Path):
    r = run_cli("run", "Simulate a small rocket launched straight up and print its apogee",
                "--llm", f"replay:{EXAMPLES / 'rocket.md'}", "--yes", "--expect",
                "range:Apogee: ([0-9.]+) m:100..5000", "--max-retries", "1", "--timeout", "7.5",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_cli("recipe", "new", "-o", "again.toml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    again = load_recipe(tmp_path / "again.toml")
    assert (again.max_retries, again.timeout) == (1, 7.5)  # the session's limits kept
    assert [c.text for c in again.criteria] == ["range:Apogee: ([0-9.]+) m:100..5000"]
    r = run_cli("recipe", "run", "again.toml", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "VERIFIED" in r.stdout.splitlines()[1]
    assert run_cli("recipe", "new", "99", cwd=tmp_path).returncode == 2
