"""Version names that collide (issue 21): never a loop, never a disk fill.

Two names of one answer that become the same once numbered (``b.py`` beside
``b_1.py/x.py``; names sharing their first 245 bytes) used to make
``save_version`` retry forever, one new file per try. Each file now gets at most
one retry, then it is refused with a note; ``[run] max_files`` caps the files of
one answer; the clash check is linear.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifybot_tui.core.answers.extract import Extraction, extract
from verifybot_tui.core.answers.programs import program_files, save_version
from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.core.store.workspace import Workspace


def _files(*names: str) -> list[ProgramFile]:
    return [ProgramFile(name=n, saved_name=n, content=f"# {n}\n", language="python")
            for n in names]


def _count(root: Path) -> int:
    return sum(1 for p in root.rglob("*") if p.is_file())


@pytest.mark.timeout(20)
@pytest.mark.parametrize("names", [
    ("b.py", "b_1.py/x.py"),
    ("a" * 250 + "x.py", "a" * 250 + "y.py"),
])
def test_names_that_collide_once_numbered_are_refused_not_retried(
        tmp_path: Path, names: tuple[str, ...]) -> None:
    ws = Workspace(tmp_path / "ws").ensure()
    notes: list[str] = []
    n, saved = save_version(ws, _files(*names), "slug", 1, notes=notes)
    assert n == 1
    assert [f.name for f in saved] == [names[0]]
    assert len(notes) == 1 and names[1][:20] in notes[0] and "left out" in notes[0]
    assert _count(ws.programs) == 1 and _count(ws.claims) == 1


@pytest.mark.timeout(20)
def test_a_name_taken_on_disk_gets_one_retry_under_a_flat_name(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws").ensure()
    save_version(ws, _files("b.py"), "slug", 1, notes=[])  # programs/b_1.py, a file
    notes: list[str] = []
    n, saved = save_version(ws, _files("main.py", "b_1.py/x.py"), "slug", 1, notes=notes)
    assert n == 2 and [f.saved_name for f in saved] == ["main_2.py", "b_1.py_x_2.py"]
    assert notes == [] and _count(ws.programs) == 3


@pytest.mark.timeout(20)
def test_a_name_taken_twice_on_disk_is_refused_after_one_retry(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws").ensure()
    save_version(ws, _files("b.py"), "slug", 1, notes=[])  # programs/b_1.py, a file
    (ws.programs / "b_1.py_x_2.py").write_text("someone else's")
    notes: list[str] = []
    n, saved = save_version(ws, _files("main.py", "b_1.py/x.py"), "slug", 1, notes=notes)
    assert n == 2 and [f.name for f in saved] == ["main.py"]
    assert len(notes) == 1 and "b_1.py/x.py is left out" in notes[0]
    assert _count(ws.programs) == 3 and _count(ws.claims) == 2  # nothing more was tried


def test_max_files_caps_the_files_of_one_answer(tmp_path: Path) -> None:
    blocks = "".join(f"```python\n# file: m{i}.py\nprint({i})\n```\n\n" for i in range(30))
    ex = extract(blocks)
    files, entry = program_files(ex, "slug", max_files=10)
    assert len(files) == 10 and entry == "m0.py"
    assert any("20 more" in note and "max_files" in note for note in ex.notes)


def test_max_files_is_a_config_key() -> None:
    assert parse_config({"run": {"max_files": 12}}).run.max_files == 12
    from verifybot_tui.core.base.errors import ConfigError
    with pytest.raises(ConfigError, match="max_files"):
        parse_config({"run": {"max_files": 0}})


@pytest.mark.timeout(30)
def test_the_clash_check_is_linear() -> None:
    """40,000 named files, every one a folder of the next: quadratic would take minutes."""
    ex = Extraction(blocks=[], notes=[])
    files = _files(*[f"d{i}.py" for i in range(40_000)], *[f"d{i}.py/x.py" for i in range(40_000)])
    from verifybot_tui.core.answers.programs import without_clashes
    kept = without_clashes(files, ex.notes)
    assert len(kept) == 40_000 and len(ex.notes) == 40_000


def test_files_sharing_folders_are_all_kept_and_saved(tmp_path: Path) -> None:
    """Issue 29: tally/report/text.py was refused after tally/counting.py."""
    names = ("tally/__init__.py", "tally/counting.py", "tally/report/__init__.py",
             "tally/report/text.py", "src/a.c", "include/a.h", "main.py")
    from verifybot_tui.core.answers.programs import without_clashes
    notes: list[str] = []
    assert [f.name for f in without_clashes(_files(*names), notes)] == list(names)
    assert notes == []
    ws = Workspace(tmp_path / "ws").ensure()
    n, saved = save_version(ws, _files(*names), "slug", 1, notes=notes)
    assert notes == [] and len(saved) == len(names) and _count(ws.programs) == len(names)


@pytest.mark.parametrize("names", [("a/b.py", "a"), ("a", "a/b.py"), ("x/y", "x/y/z.py")])
def test_a_file_and_a_folder_of_one_name_is_a_true_clash(names: tuple[str, str]) -> None:
    from verifybot_tui.core.answers.programs import without_clashes
    notes: list[str] = []
    kept = without_clashes(_files(*names), notes)
    assert [f.name for f in kept] == [names[0]]
    assert len(notes) == 1 and f"{names[1]} is left out: {names[0]}" in notes[0]
