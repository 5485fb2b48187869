"""The project under test: where it lives and how its command is run.

Tests sit in folders that mirror the package (tests/core/verify/, tests/e2e/, ...),
so a path computed from a test file's own place would differ from folder to
folder; every test reads the tree's root from here instead.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # tests/support/project.py -> the clone
EXAMPLES = ROOT / "examples"
PACKAGE = ROOT / "verifybot_tui"


def verifybot_cmd() -> list[str]:
    """The installed entry point's equivalent, run by the test's own interpreter."""
    return [sys.executable, "-m", "verifybot_tui"]


def cli_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env


def need(*tools: str) -> None:
    """Fail (never skip) when a tool the test command installs is missing: a skipped
    test checks nothing, and scripts/test installs every one of them."""
    import shutil

    missing = [tool for tool in tools if shutil.which(tool) is None]
    assert not missing, f"{', '.join(missing)} missing: run the tests through scripts/test"
