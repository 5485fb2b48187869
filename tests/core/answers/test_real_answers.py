"""Real multi-file answers (../shared/reference/real-answers): saved as a person would.

Each answer was written by ChatGPT, GPT-4, Bard or gpt-engineer and committed by
its user to a public repository; EXPECTED.json says what a careful person saves
from it. Every named file must get its path (or one of its ``alt_paths``) with
the right first line, an ``implied`` file any sane name, and no ``not_files``
block may become a file. The answers are read from ../shared, never copied here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from shared_data import REFERENCE

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.answers.programs import program_files
from verifybot_tui.core.answers.tree_changes import plan_update
from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.llm.replay import parse_answers

pytestmark = pytest.mark.needs_shared

ANSWERS = REFERENCE / "real-answers"
_MARKER_RE = re.compile(r"^(?:<{7} SEARCH|>{7} REPLACE)\s*$")  # "=======" may underline a title


def _expected() -> dict[str, dict]:  # type: ignore[type-arg]
    if not ANSWERS.is_dir():
        return {}
    return json.loads((ANSWERS / "EXPECTED.json").read_text())["answers"]  # type: ignore[no-any-return]


@dataclass
class Reading:
    files: list[ProgramFile]
    wrong: list[str]  # one line per named file not saved as expected, or not_file saved
    named: int  # named (not implied) files expected
    right: int  # of those, saved with their path and first line


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0]


def saved_files(answer: str) -> list[ProgramFile]:
    """The files a new chat's first attempt holds: the answer applied to an empty
    project tree (edits made into the files they make), the unnamed programs named
    as the loop names them."""
    ex = extract(answer)
    update = plan_update({}, answer, ex)
    assert not update.problems, update.problems
    tree = update.apply({})
    files, _ = program_files(ex, "answer")
    named = {b.filename for b in ex.blocks if b.filename}
    out = [f for f in files if f.name not in named]
    out += [ProgramFile(name=p, saved_name=p, content=t, language="") for p, t in tree.items()]
    return out


def _firsts(exp: dict) -> set[str]:  # type: ignore[type-arg]
    """The first line a person saves; the block's own first line only when it is the
    file's name in a comment (``# .env.example``), which a person may keep."""
    firsts = {exp["first_line"]}
    block_first = exp.get("block_first_line", "")
    base = exp["path"].rsplit("/", 1)[-1]
    if block_first and base in block_first and block_first.lstrip()[:1] in "#/;<-":
        firsts.add(block_first)
    return firsts


def read_answer(name: str, want: dict) -> Reading:  # type: ignore[type-arg]
    answers = parse_answers((ANSWERS / f"{name}.md").read_text())
    assert answers, name
    files = saved_files(answers[0])
    by_name = {f.name: f for f in files}
    wrong: list[str] = []
    named = right = 0
    for exp in want["files"]:
        firsts = _firsts(exp)
        if exp.get("implied"):
            if not any(_first_line(f.content) in firsts for f in files):
                wrong.append(f"{name}: the implied file of line {exp['block_line']} is not saved")
            continue
        named += 1
        paths = [exp["path"], *exp.get("alt_paths", [])]
        got = next((by_name[p] for p in paths if p in by_name), None)
        if got is None:
            same = [f.name for f in files if _first_line(f.content) in firsts]
            wrong.append(f"{name}: {exp['path']} (line {exp['block_line']}) is not saved; "
                         f"its first line is in {same or 'no file'}")
        elif _first_line(got.content) not in firsts:
            wrong.append(f"{name}: {got.name} starts {_first_line(got.content)!r}, "
                         f"not {exp['first_line']!r}")
        else:
            right += 1
    for f in files:
        marked = [ln for ln in f.content.split("\n") if _MARKER_RE.match(ln)]
        if marked:
            wrong.append(f"{name}: {f.name} holds the edit marker {marked[0]!r}")
    expected_firsts = {e["first_line"] for e in want["files"]} | {
        e.get("block_first_line", "") for e in want["files"]}
    for nf in want.get("not_files", []):
        first = nf["first_line"]
        if first in expected_firsts:
            continue  # a not_file that starts like a real file: judged by the files above
        for f in files:
            if _first_line(f.content).strip() == first.strip():
                wrong.append(f"{name}: the {nf['kind']} at line {nf['block_line']} became "
                             f"{f.name}")
    return Reading(files, wrong, named, right)


EXPECTED = _expected()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_named_file_gets_its_path_and_nothing_else_becomes_a_file(name: str) -> None:
    reading = read_answer(name, EXPECTED[name])
    assert reading.wrong == [], "\n".join(reading.wrong)


def test_the_count_of_named_files_right() -> None:
    """The figure the issue reports ("60 of 104 saved with the content a person saves"):
    all of them, here, named and saved with their first line."""
    assert EXPECTED, f"no answers in {ANSWERS}"
    readings = [read_answer(n, w) for n, w in sorted(EXPECTED.items())]
    named = sum(r.named for r in readings)
    right = sum(r.right for r in readings)
    print(f"{right} of {named} named files saved with their path and first line")
    assert right == named


def test_the_reading_is_of_the_real_files() -> None:
    """Not a test that cannot fail: the answers are there and hold the expected lines."""
    assert len(EXPECTED) >= 9
    for name in EXPECTED:
        assert Path(ANSWERS / f"{name}.md").is_file(), name
