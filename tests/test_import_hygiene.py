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

ROOT = Path(__file__).resolve().parent.parent
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


def test_the_tree_keeps_its_contracts() -> None:
    out = _lint(ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 kept, 0 broken" in out.stdout


def test_a_core_module_importing_a_target_breaks_the_layers(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    clean = _lint(tree)  # the copy itself is linted (not the installed package) and passes
    assert clean.returncode == 0, clean.stdout + clean.stderr
    (tree / "verifybot_tui" / "core" / "wrong.py").write_text(
        "from verifybot_tui.targets.local import LocalTarget\n")
    broken = _lint(tree)
    assert broken.returncode != 0
    assert "front ends above llm/targets above core BROKEN" in broken.stdout
    assert "verifybot_tui.core.wrong -> verifybot_tui.targets.local" in broken.stdout


def test_core_loading_textual_breaks_the_headless_contract(tmp_path: Path) -> None:
    tree = _copy(tmp_path)
    (tree / "verifybot_tui" / "core" / "wrong.py").write_text(
        "from verifybot_tui.core import config\nimport textual.app\n")
    broken = _lint(tree)
    assert broken.returncode != 0
    assert "core imports no UI, browser or SSH library BROKEN" in broken.stdout
    assert "verifybot_tui.core.wrong -> textual" in broken.stdout
