"""Following the README inside a clone must not leave traps for the test command."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from project import EXAMPLES, ROOT, verifybot_cmd

RUFF = Path(sys.executable).parent / "ruff"


def test_the_readme_example_run_in_a_clone_leaves_nothing_lint_or_git_sees(tmp_path: Path):
    clone = tmp_path / "clone"
    clone.mkdir()
    shutil.copy(ROOT / "pyproject.toml", clone)
    shutil.copy(ROOT / ".gitignore", clone)
    (clone / "pkg").mkdir()
    (clone / "pkg" / "ok.py").write_text('"""Fine."""\n')
    # The README's offline example, run from the clone's root as a new user would.
    proc = subprocess.run(
        [*verifybot_cmd(), "run", "Print the total number of words in a short text and its 3 "
         "most common words", "--llm", f"replay:{EXAMPLES / 'word_count.md'}", "--target",
         "local", "--yes"], cwd=clone, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert any((clone / "programs").iterdir())
    # The LLM's first version is deliberately buggy; add one that breaks lint rules too.
    (clone / "programs" / "lint_bait_1.py").write_text("import os, sys\nx=1 ;\n")
    lint = subprocess.run([str(RUFF), "check", "."], cwd=clone, capture_output=True,
                          text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=clone, capture_output=True, text=True, check=True).stdout
    leftovers = [line for line in status.splitlines()
                 if not line.endswith((".gitignore", "pyproject.toml", "ok.py"))]
    assert leftovers == [], "workspace files show up as changes to commit"
    script = (ROOT / "scripts" / "test").read_text()
    ruff_line = next(line for line in script.splitlines() if "ruff check" in line)
    assert " ." not in ruff_line.split("ruff check")[1], "scripts/test lints project paths"
