"""A plain clone runs green: checks that read ../shared wait for it, and the run says so.

A small copy of the test set-up (pyproject, conftest, tests/support) with one
marked and one plain test is run by a real pytest, with pytest-xdist as
scripts/test runs it, first with nothing beside the copy, then with a
../shared/reference folder beside it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from project import ROOT

pytestmark = pytest.mark.timeout(240)

TESTS = '''
import pytest
from shared_data import REFERENCE

@pytest.mark.needs_shared
def test_reads_the_reference():
    assert REFERENCE.is_dir()

def test_plain():
    assert True
'''


def _clone(tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    (clone / "tests" / "x").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", clone)
    shutil.copy(ROOT / "tests" / "conftest.py", clone / "tests")
    shutil.copytree(ROOT / "tests" / "support", clone / "tests" / "support",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (clone / "tests" / "x" / "test_x.py").write_text(TESTS)
    return clone


# Installed plugins that have no part in what is checked here (the gate's hooks, the
# conftest's plugins and xdist): each of pytest's processes would import them, labgrid's
# alone for a second or more of a busy machine's time.
UNRELATED = ("labgrid", "textual-snapshot", "syrupy", "anyio")


def _pytest(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    off = [arg for name in UNRELATED for arg in ("-p", f"no:{name}")]
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *off,
                           "tests/x", *args], cwd=clone, capture_output=True, text=True,
                          timeout=200, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("workers", [["-n", "2", "--dist", "loadscope"], ["-n0"]])
def test_without_shared_the_marked_checks_are_deselected_and_the_summary_says_why(
        tmp_path: Path, workers: list[str]) -> None:
    proc = _pytest(_clone(tmp_path), *workers)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert ("1 check that reads the real pages, answers and firmware did not run: "
            f"{tmp_path / 'shared' / 'reference'} is missing") in proc.stdout, proc.stdout
    assert "1 passed" in proc.stdout and "error" not in proc.stdout.lower()


def test_with_shared_beside_the_clone_everything_runs_and_is_counted(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    (tmp_path / "shared" / "reference").mkdir(parents=True)
    proc = _pytest(clone, "-n", "2", "--dist", "loadscope")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"1 check that reads {tmp_path / 'shared' / 'reference'} ran (1 passed)" in proc.stdout
    assert "2 passed" in proc.stdout
