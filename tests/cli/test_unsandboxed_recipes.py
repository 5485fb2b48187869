"""A recipe or benchmark from others that would run the answers it brings where nothing is
sandboxed (over SSH, on a real board, sandbox = "off"), or read a transcript or board file
from outside its folder, is shown and approved like a command; `run --resume` opens only
the chat site's own pages. Through the real CLI (and the real browser driver)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from cli_runs import answers, give_to_nobody, python_answer, run_as_nobody, run_cli
from project import ROOT

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.settings.config import LLMConfig

CONFIG = """\
[targets.pi]
kind = "ssh"
host = "127.0.0.1"
port = 9
user = "pi"

[targets.open]
kind = "local"
sandbox = "off"
"""


def shared_recipe(folder: Path, target: str, marker: Path, **keys: str) -> Path:
    """A recipe folder as shared: its own answer (which leaves ``marker``) and a target."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.md").write_text(answers(python_answer(
        f"open({str(marker)!r}, 'w').write('ran')\nprint('done')")))
    lines = ['name = "r"', 'prompt = "p"', 'llm = "replay:a.md"', f'target = "{target}"',
             "max_retries = 0", "timeout = 10", *(f'{k} = "{v}"' for k, v in keys.items())]
    path = folder / "r.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(("target", "where"), [
    ("pi", "over SSH on 127.0.0.1, where nothing is sandboxed"),
    ("open", 'here with sandbox = "off"'),
])
def test_a_recipe_that_runs_its_own_answers_unsandboxed_is_refused_unasked(
        tmp_path: Path, target: str, where: str) -> None:
    config = tmp_path / "mine.toml"
    config.write_text(CONFIG)
    marker = tmp_path / "ran-unsandboxed"
    recipe = shared_recipe(tmp_path / "shared", target, marker)
    r = run_cli("recipe", "run", str(recipe), "--config", str(config),
                "--workspace", str(tmp_path / "ws"), cwd=tmp_path, stdin="")
    assert r.returncode == 2, r.stderr
    assert f"{recipe}: target = {target} (runs the answers it brings " in r.stderr
    assert where in r.stderr and "--trust" in r.stderr
    assert not marker.exists() and not (tmp_path / "ws" / "raw_md").exists()
    if target == "open":  # approved (--trust): it runs as the user said, and says so
        ok = run_cli("recipe", "run", str(recipe), "--config", str(config), "--trust",
                     "--workspace", str(tmp_path / "ws"), cwd=tmp_path, stdin="")
        assert "r: PASSED" in ok.stderr, ok.stderr  # (recipe run's 0 is for VERIFIED)
        assert "the sandbox is OFF" in ok.stderr and marker.exists()


def test_the_same_recipe_on_a_sandboxed_target_asks_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    recipe = shared_recipe(tmp_path / "shared", "local", marker)
    r = run_cli("recipe", "run", str(recipe), "--workspace", str(tmp_path / "ws"),
                cwd=tmp_path, stdin="")
    assert "r: PASSED" in r.stderr, r.stderr
    assert "file from others" not in r.stderr
    assert not marker.exists()  # it ran in the sandbox: the private /tmp took the write


def test_paths_out_of_the_recipes_folder_are_asked_about(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "a.md").write_text(answers(python_answer("print('hi')")))
    shutil.copy(ROOT / "verifybot_tui" / "targets" / "mcu" / "boards" / "netduinoplus2.toml",
                elsewhere / "board.toml")
    recipe = shared_recipe(tmp_path / "shared", "local", tmp_path / "m")
    recipe.write_text(recipe.read_text().replace("replay:a.md", "replay:../elsewhere/a.md"))
    r = run_cli("recipe", "run", str(recipe), "--workspace", str(tmp_path / "ws"),
                cwd=tmp_path, stdin="")
    assert r.returncode == 2
    assert "llm = replay:../elsewhere/a.md (reads a transcript from outside the recipe's " \
           "folder)" in r.stderr
    board = shared_recipe(tmp_path / "shared2", "local", tmp_path / "m", board="../elsewhere/"
                          "board.toml")
    board.write_text(board.read_text().replace('target = "local"\n', ""))
    r = run_cli("recipe", "run", str(board), "--workspace", str(tmp_path / "ws"),
                cwd=tmp_path, stdin="")
    assert r.returncode == 2
    assert "board = ../elsewhere/board.toml (reads a board file from outside" in r.stderr


def test_a_benchmark_checked_on_an_unsandboxed_target_is_refused(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(ROOT / "benchmarks" / "embedded" / "modbus-crc16-local",
                    bench / "modbus-crc16-local")
    config = tmp_path / "mine.toml"
    config.write_text('[targets.local]\nsandbox = "off"\n')
    r = run_cli("compare", "--check", str(bench), "--config", str(config), "--out",
                str(tmp_path / "out"), "--workspace", str(tmp_path / "ws"), cwd=tmp_path,
                stdin="")
    assert r.returncode == 2, r.stderr
    assert "runs the answers it brings (replay:solution.md, wrong.md) here with sandbox = " \
           '"off"' in r.stderr
    assert "verifybot compare --check DIR --trust" in r.stderr
    assert not (tmp_path / "out" / "compare.json").exists()


async def test_resume_opens_only_the_sites_own_pages(tmp_path: Path) -> None:
    from verifybot_tui.llm.browser.driver import BrowserLLM

    driver = BrowserLLM(LLMConfig(name="chatgpt", site="chatgpt", url="https://chatgpt.com/"),
                        tmp_path)
    await driver.resume("https://chatgpt.com/c/6745-abc")  # its own: taken
    assert driver.conversation_url == "https://chatgpt.com/c/6745-abc"
    for url in ("https://evil.example/c/1", "http://chatgpt.com/c/1",
                "https://chatgpt.com.evil.example/c/1", "file:///etc/passwd",
                "https://user@evil.example/c/1"):
        with pytest.raises(LLMError, match="not opened: the conversation"):
            await driver.resume(url)


def test_a_recipe_that_recipe_new_wrote_is_the_users_own(tmp_path: Path) -> None:
    """Nothing the user wrote is asked about: `recipe new` from the user's own session."""
    config = tmp_path / "mine.toml"
    config.write_text(CONFIG)
    (tmp_path / "a.md").write_text(answers(python_answer("print('done')")))
    ws = str(tmp_path / "ws")
    ran = run_cli("run", "p", "--config", str(config), "--target", "open", "--llm",
                  "replay:a.md", "--yes", "--workspace", ws, cwd=tmp_path, stdin="")
    assert ran.returncode == 0, ran.stderr
    new = run_cli("recipe", "new", "-o", "mine.recipe.toml", "--config", str(config),
                  "--workspace", ws, cwd=tmp_path, stdin="")
    assert new.returncode == 0, new.stderr
    r = run_cli("recipe", "run", "mine.recipe.toml", "--config", str(config), "--workspace",
                ws, cwd=tmp_path, stdin="")
    assert "file from others" not in r.stderr
    assert ": PASSED" in r.stderr, r.stderr
    # The same text changed by someone else is theirs again.
    path = tmp_path / "mine.recipe.toml"
    path.write_text(path.read_text().replace('prompt = "p"', 'prompt = "q"'))
    again = run_cli("recipe", "run", "mine.recipe.toml", "--config", str(config),
                    "--workspace", ws, cwd=tmp_path, stdin="")
    assert again.returncode == 2 and "runs the answers it brings" in again.stderr


def test_as_an_unprivileged_user_the_recipe_is_refused_the_same() -> None:
    """VerifyBot run as nobody (setpriv): the same question, the same refusal."""
    top = Path(tempfile.mkdtemp(prefix="vb-nobody-"))
    try:
        config = top / "mine.toml"
        config.write_text(CONFIG)
        marker = top / "ran-unsandboxed"
        recipe = shared_recipe(top / "shared", "open", marker)
        give_to_nobody(top)
        xdg = str(top / "xdg")
        r = run_as_nobody("recipe", "run", str(recipe), "--config", str(config),
                          "--workspace", str(top / "ws"), cwd=top,
                          env={"HOME": str(top), "XDG_CONFIG_HOME": xdg,
                               "XDG_STATE_HOME": xdg, "XDG_DATA_HOME": xdg})
        assert r.returncode == 2, r.stderr
        assert f"{recipe}: target = open (runs the answers it brings" in r.stderr
        assert not marker.exists()
    finally:
        shutil.rmtree(top, ignore_errors=True)
