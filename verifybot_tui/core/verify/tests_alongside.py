"""Tests written alongside the program (``[run] ask_for_tests``).

The first prompt asks for a test file next to the program; after the program's run
passes, the tests run on the same target, in the same folder, and a failing (or
missing) test file fails the run like an unmet criterion, with the tests' output as
the evidence. A pytest file is run through a two-line runner, so the target needs
pytest only when the LLM chose it.
"""

from __future__ import annotations

import re
from pathlib import Path

from verifybot_tui.core.base.ports import ProgramFile

RUNNER = "_verifybot_run_tests.py"

PROMPT = ("Also write tests for the program in a separate file named test_main.py (and name "
          "the program main.py), each file in its own fenced block with its file name in bold "
          "on its own line before it. The tests run after the program, in the same folder: "
          "either a plain Python script with assert statements that exits non-zero when a "
          "check fails, or pytest tests.")


def test_file(files: list[ProgramFile], entry: str) -> ProgramFile | None:
    """The answer's test file: a Python file named test_*.py or *_test.py, not the entry."""
    for f in files:
        stem = Path(f.name).stem
        if f.name != entry and f.name.endswith(".py") and (
                stem.startswith("test_") or stem.endswith("_test")):
            return f
    return None


# pytest style: it imports pytest, or defines test functions that only pytest would call
# (run as a plain script, such a file would define them and exit 0 having checked nothing).
_PYTEST_STYLE = re.compile(r"^\s*(?:import pytest|from pytest\b)|^(?:async )?def test_\w*\(",
                           re.M)


def uses_pytest(test: ProgramFile) -> bool:
    return bool(_PYTEST_STYLE.search(test.content))


def runnable(files: list[ProgramFile], test: ProgramFile) -> tuple[list[ProgramFile], str]:
    """The files to put in place and the entry that runs the tests.

    pytest runs in the run folder only: ``--rootdir .`` and ``--confcutdir .`` keep a
    workspace's own pytest settings and conftest.py out of the LLM's tests, and no
    cache folder is left among the run's files.
    """
    if not uses_pytest(test):
        return files, test.name
    runner = ProgramFile(RUNNER, RUNNER,
                         "import sys\nimport pytest\n\n"
                         "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '--rootdir', "
                         f"'.', '--confcutdir', '.', {test.name!r}]))\n", "python")
    return [*files, runner], RUNNER
