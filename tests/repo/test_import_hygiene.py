"""The layers are a contract import-linter checks, and the check can fail.

core/ is the loop both front ends share: a headless ``verifybot run`` on a
Pi-side box or in CI should not pay for (or depend on) the TUI, and core owns
its ports so that llm/ and targets/ depend on it, never the other way. The
contracts live in pyproject.toml ([tool.importlinter]) and scripts/test runs
them; these tests run them too, on the real tree and on a copy with one wrong
import added, so a contract that silently checks nothing would be caught.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from project import ROOT

LINT = Path(sys.executable).with_name("lint-imports")


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([str(LINT), "--no-cache", "--no-logo",
                           "--config", str(tree / "pyproject.toml")],
                          capture_output=True, text=True, timeout=120, cwd=tree, env=env)


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    tree.mkdir()
    shutil.copy(ROOT / "pyproject.toml", tree)
    shutil.copytree(ROOT / "verifybot_tui", tree / "verifybot_tui",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return tree


@pytest.fixture(scope="module")
def clean_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the tree, linted once (not the installed package): it passes."""
    tree = _copy(tmp_path_factory.mktemp("clean"))
    clean = _lint(tree)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    return tree


def test_the_tree_keeps_its_contracts() -> None:
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "18 kept, 0 broken" in out.stdout


ROOMS = "core rooms: loop above verify/answers above store/settings above base"


@pytest.mark.parametrize(("room", "wrong_import", "contract", "chain"), [
    ("core/base", "from verifybot_tui.targets.local.target import LocalTarget",
     "front ends above llm/targets above core", "verifybot_tui.targets.local.target"),
    ("core/settings", "import textual.app",
     "core imports no UI, browser or SSH library", "textual"),
    ("core/store", "from verifybot_tui.core.loop import events",
     ROOMS, "verifybot_tui.core.loop.events"),
    ("core/base", "from verifybot_tui.core.settings import config",
     ROOMS, "verifybot_tui.core.settings.config"),
    ("core/verify", "from verifybot_tui.core.answers import extract",
     ROOMS, "verifybot_tui.core.answers.extract"),
    ("core/verify", "from verifybot_tui.core.store import history",
     "verification knows nothing of storage", "verifybot_tui.core.store.history"),
    ("tui/widgets", "from verifybot_tui.targets import local",
     "widgets import no loop, backend or target", "verifybot_tui.targets.local"),
    ("tui/screens", "from verifybot_tui.cli import recipes",
     "the app imports nothing of the CLI", "verifybot_tui.cli.recipes"),
    ("mcp_server", "from verifybot_tui.cli import common",
     "the MCP server imports nothing of the CLI", "verifybot_tui.cli.common"),
    ("tui/screens", "from verifybot_tui.mcp_server import state",
     "the MCP server imports nothing of the CLI or the app, and the app nothing of it",
     "verifybot_tui.mcp_server.state"),
    ("targets/mcu/real", "from verifybot_tui.targets.mcu import target",
     "mcu rooms: target, farm, real boards, build, sources, build steps",
     "verifybot_tui.targets.mcu.target"),
], ids=["core-imports-a-target", "core-imports-textual", "store-imports-the-loop",
        "base-imports-settings", "verify-imports-answers", "verify-imports-store",
        "a-widget-imports-a-target", "the-app-imports-the-cli", "mcp-imports-the-cli",
        "the-app-imports-the-mcp-server", "a-real-board-imports-the-mcu-target"])
def test_a_wrong_import_breaks_a_contract(tmp_path: Path, clean_copy: Path, room: str,
                                          wrong_import: str, contract: str,
                                          chain: str) -> None:
    tree = tmp_path / "tree"  # the linted clean copy, with one wrong import added
    shutil.copytree(clean_copy, tree, ignore=shutil.ignore_patterns("__pycache__"))
    (tree / "verifybot_tui" / room / "wrong.py").write_text(wrong_import + "\n")
    broken = _lint(tree)
    assert broken.returncode != 0
    assert f"{contract} BROKEN" in broken.stdout
    module = "verifybot_tui." + room.replace("/", ".") + ".wrong"
    assert f"{module} -> {chain}" in broken.stdout
