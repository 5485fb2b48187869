"""Every path an answer names stays inside the project, however it names it.

A block's file name was confined from the start; a follow-up can also name files in a
diff's header (``+++ b/../x``) and in its prose ("rename `a.py` to `../../x.py`"). Those
are planned before anyone approves the version, and saved at once: a path that leaves
the project must change nothing, and the save itself refuses one, whatever planned it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifybot_tui.core.answers.tree_changes import plan_update
from verifybot_tui.core.store.workspace import Workspace

TREE = {"main.py": "import util\nprint(util.x())\n", "util.py": "def x():\n    return 1\n"}


def test_a_rename_out_of_the_project_changes_nothing() -> None:
    for target in ("../../evil.py", "/tmp/abs.py", "~/.bashrc"):
        update = plan_update(TREE, f"Rename `util.py` to `{target}`.\n")
        assert update.changes == (), target
        assert update.apply(TREE) == TREE
        if not target.startswith("~"):  # a ~ path is not read as a file name at all
            assert any("not renamed" in note for note in update.notes), update.notes


def test_a_diff_whose_path_leaves_the_project_changes_nothing() -> None:
    answer = ("Apply this:\n\n```diff\n--- a/util.py\n+++ b/../../evil2.py\n"
              "@@ -1,2 +1,2 @@\n def x():\n-    return 1\n+    return 2\n```\n")
    update = plan_update(TREE, answer)
    assert any("evil2.py: not saved" in note for note in update.notes), update.notes
    assert all(".." not in c.path and not c.path.startswith("/") for c in update.changes)
    after = update.apply(TREE)
    assert set(after) <= {"main.py", "util.py"}, after


def test_the_save_refuses_a_name_that_leaves_programs(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    assert ws.save_program("src/main.py", 1, "x = 1\n").is_relative_to(ws.programs)
    for name in ("../../evil.py", "/tmp/abs.py"):
        with pytest.raises(ValueError, match="leads out of programs/"):
            ws.save_program(name, 2, "x = 1\n")
    assert not (tmp_path / "evil_2.py").exists() and not (tmp_path.parent / "evil_2.py").exists()
