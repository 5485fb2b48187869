"""``compare --report DIR`` on a results folder from someone else (an unpacked archive, a
shared disk): VerifyBot writes there only through fresh files, refuses a symlink where a
report file goes, and refuses a compare.json whose fields are not one line each (its
``started`` once put a line into ``~/.bashrc``). Tried as root and as an ordinary user.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from other_users import USER_IDS, USERS, give, open_folder, verifybot_as

from verifybot_tui.core.verify.compare.matrix import Cell, Matrix


def _report(folder: Path, started: str = "2026-11-29T03:00:00+00:00") -> Path:
    m = Matrix(started=started, recipes=["sum"], llms=["a"], cells=[
        Cell(recipe="sum", llm="a", run=1, status="VERIFIED", attempts=1, verified_at=1,
             seconds=2.5, model="gpt-5", max_attempts=3)])
    folder.mkdir()
    (folder / "compare.json").write_text(m.json_text(), encoding="utf-8")
    return folder


@pytest.mark.parametrize("user", USERS, ids=USER_IDS)
def test_a_symlink_where_a_report_file_goes_is_refused_and_followed_nowhere(user) -> None:
    with open_folder() as home:
        bashrc = home / ".bashrc"
        bashrc.write_text("# the user's own\n")
        out = _report(home / "unpacked")
        (out / "compare.md").symlink_to(bashrc)
        give(user, home)
        done = verifybot_as(user, "compare", "--report", str(out), cwd=home)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "compare.md is a symlink" in done.stderr and "Traceback" not in done.stderr
        assert bashrc.read_text() == "# the user's own\n"
        assert (out / "compare.md").is_symlink()


@pytest.mark.parametrize("user", USERS, ids=USER_IDS)
def test_a_planted_temporary_name_is_not_written_through(user) -> None:
    """The old writer went through DIR/.compare.md.tmp: a link planted there is untouched."""
    with open_folder() as home:
        bashrc = home / ".bashrc"
        bashrc.write_text("# the user's own\n")
        out = _report(home / "unpacked")
        for name in ("compare.md", "index.html", "compare.json"):
            (out / f".{name}.tmp").symlink_to(bashrc)
        give(user, home)
        done = verifybot_as(user, "compare", "--report", str(out), cwd=home)
        assert done.returncode == 0, done.stdout + done.stderr
        assert bashrc.read_text() == "# the user's own\n"
        md = out / "compare.md"
        assert md.is_file() and not md.is_symlink() and "| sum | a | 1 | VERIFIED |" in (
            md.read_text())
        assert os.stat(md).st_uid == user
        assert sorted(p.name for p in out.iterdir() if p.name.endswith(".tmp")) == [
            ".compare.json.tmp", ".compare.md.tmp", ".index.html.tmp"]  # only the planted


@pytest.mark.parametrize("user", USERS, ids=USER_IDS)
@pytest.mark.parametrize("started", ["2026-11-29\necho PWNED >> ~/.bashrc",
                                     "2026-11-29\r# x", "now\u2028then"])
def test_a_report_field_of_more_than_one_line_is_refused(user, started) -> None:
    with open_folder() as home:
        out = _report(home / "unpacked", started=started)
        give(user, home)
        done = verifybot_as(user, "compare", "--report", str(out), cwd=home)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "is not a compare report: started is not one line of text" in done.stderr
        assert not (out / "compare.md").exists() and not (out / "index.html").exists()


def test_a_cell_field_of_more_than_one_line_is_refused() -> None:
    with open_folder() as home:
        out = _report(home / "unpacked")
        data = json.loads((out / "compare.json").read_text())
        data["cells"][0]["model"] = "gpt\n| forged | row |"
        (out / "compare.json").write_text(json.dumps(data))
        done = verifybot_as(0, "compare", "--report", str(out), cwd=home)
        assert done.returncode == 2 and "cells[0].model is not one line" in done.stderr
        assert not (out / "compare.md").exists()
