"""Recipes' relative paths resolve against the recipe's folder, wherever they are run from.

A session replayed with a relative path, written as a recipe into another folder
by `recipe new` run from yet another folder, runs from `/`; a relative `board`
names the file beside the recipe, not one under ~/.config/verifybot.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest
from cli_runs import run_cli
from project import EXAMPLES

from verifybot_tui.core.settings.config import Config, TargetConfig
from verifybot_tui.core.verify.recipe import load_recipe, with_board
from verifybot_tui.targets.mcu.boards import load_board


def test_a_recipe_from_a_relative_replay_session_runs_from_the_root(tmp_path: Path) -> None:
    here = tmp_path / "session"
    (here / "examples").mkdir(parents=True)
    (here / "examples" / "rocket.md").write_bytes((EXAMPLES / "rocket.md").read_bytes())
    ws = tmp_path / "ws4"
    proc = run_cli("run", "Simulate a small rocket launched straight up and print its apogee",
                   "--llm", "replay:examples/rocket.md", "--target", "local", "--yes",
                   "--expect", "contains:Apogee", "--workspace", str(ws), cwd=here)
    assert proc.returncode == 0, proc.stderr
    # recipe new from the workspace (not where the session ran), into a third folder
    (ws / "elsewhere").mkdir()
    proc = run_cli("recipe", "new", "1", "-o", "elsewhere/r.toml", "--workspace", str(ws),
                   cwd=ws)
    assert proc.returncode == 0, proc.stderr
    recipe = ws / "elsewhere" / "r.toml"
    llm = tomllib.loads(recipe.read_text())["llm"]
    spec = Path(llm.removeprefix("replay:"))
    found = spec if spec.is_absolute() else recipe.parent / spec
    assert found.resolve() == (here / "examples" / "rocket.md").resolve(), llm
    proc = run_cli("recipe", "run", str(recipe), "--workspace", str(ws), cwd=Path("/"))
    # the replay was read and its program ran (its verdict is the recipe's business)
    assert "cannot read" not in proc.stderr and proc.returncode in (0, 1), proc.stderr
    assert "Apogee" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


def test_a_relative_board_is_the_file_beside_the_recipe(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "project"
    (folder / "boards").mkdir(parents=True)
    (folder / "boards" / "my.toml").write_text(
        'extends = "netduinoplus2"\ndescription = "my board beside the recipe"\n')
    (folder / "r.toml").write_text('name = "blink"\nprompt = "blink"\ntarget = "stm32"\n'
                                   'board = "boards/my.toml"\n')
    cfg = Config()
    cfg.targets["stm32"] = TargetConfig(kind="mcu", name="stm32")
    monkeypatch.chdir(tmp_path)  # the recipe named relative to here, as `recipe run` gets it
    recipe = load_recipe(Path("project/r.toml"))
    monkeypatch.chdir(os.sep)  # then read from elsewhere: the path must not depend on it
    cfg2, name = with_board(cfg, recipe)
    board = cfg2.targets[name].board
    assert Path(board) == folder / "boards" / "my.toml"
    assert load_board(board).description == "my board beside the recipe"
