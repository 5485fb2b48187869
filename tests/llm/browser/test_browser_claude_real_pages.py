"""`verifybot doctor --page` on the pages saved from the real claude.ai (2025-11 to 2026-07).

The pages live in ../shared/reference/real-pages/claude/ (public exporters' fixtures,
not ours to copy). What they showed, and what is checked here against each:
the assistant's copy button sits under the answer's grandparent; the page's <body>
carries .font-ui (an exclusion must never match an answer's ancestor); a code block's
header label ("javascript") is not a paragraph of the answer; the marker of a
finished answer is on the answer element itself. The expected code is read from the
saved HTML with a regular expression, independently of the driver's page script.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from project import verifybot_cmd
from shared_data import REFERENCE

from verifybot_tui.core.answers.extract import extract

pytestmark = [pytest.mark.browser, pytest.mark.needs_shared, pytest.mark.timeout(180)]

CLAUDE = REFERENCE / "real-pages" / "claude"
# Every Claude page that has an assistant action bar (all three do).
PAGES = ["tochi-claude.html", "ylce-claude-001.html", "ylce-claude-2025-code.html"]
# The thinking / activity rows' own words, which must never be in an answer.
THINKING = ["Thought for 3s", "Thought for 1s", "구조화하며 다이어그램 배치와 검증",
            "훈련과 추론 역학을 비교하며"]


def doctor(page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), "doctor", "--page", str(page), "--site", "claude",
                           *extra], capture_output=True, text=True, timeout=150,
                          stdin=subprocess.DEVNULL)


DoctorJson = Callable[[Path], subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def doctor_json() -> DoctorJson:
    """`doctor --page PAGE --site claude --json`, run once per page in the module:
    several tests check different parts of the same report, and a run costs a
    browser launch."""
    runs: dict[Path, subprocess.CompletedProcess[str]] = {}

    def run(page: Path) -> subprocess.CompletedProcess[str]:
        if page not in runs:
            runs[page] = doctor(page, "--json")
        return runs[page]

    return run


def saved_code(page: Path) -> list[tuple[str, str]]:
    """(language, code) of each block as the saved HTML holds it."""
    text = page.read_text(encoding="utf-8")
    return [(m.group(1), html.unescape(re.sub(r"<[^>]+>", "", m.group(2))))
            for m in re.finditer(r'<pre class="code-block__code[^>]*><code class="language-'
                                 r'([\w-]+)"[^>]*>(.*?)</code></pre>', text, re.S)]


@pytest.mark.parametrize("name", PAGES)
def test_copy_button_finished_and_no_thinking_on_every_real_claude_page(
        doctor_json: DoctorJson, name: str) -> None:
    proc = doctor_json(CLAUDE / name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = json.loads(proc.stdout)
    assert got["renderer"] == "claude_2026"
    assert got["copy_button"] is True and got["signals"]["copy_button"] == "HIT"
    # the marker is on the answer element itself: HIT, as "finished" says
    assert got["finished"] is True and got["signals"]["finished_markers"] == "HIT"
    assert got["answer"]
    for words in THINKING:
        assert words not in got["answer"]
    assert not [line for line in got["answer"].splitlines() if line.strip() == "javascript"]


def test_the_answers_read_are_the_last_turns_text(doctor_json: DoctorJson) -> None:
    got = json.loads(doctor_json(CLAUDE / "tochi-claude.html").stdout)
    assert got["answer"] == "Hey! What's on your mind?"
    got = json.loads(doctor_json(CLAUDE / "ylce-claude-001.html").stdout)
    # five .standard-markdown blocks, in order, the first and the last
    assert got["answer"].startswith("좋은 범위의 질문이라 말하고 싶지만")
    assert got["answer"].count("### ") >= 5


def test_every_code_block_of_the_real_claude_page_exactly(doctor_json: DoctorJson) -> None:
    page = CLAUDE / "ylce-claude-2025-code.html"
    expected = saved_code(page)
    assert len(expected) == 5 and "```" in expected[4][1]  # Claude's own fences in the 5th
    got = json.loads(doctor_json(page).stdout)
    blocks = extract(got["answer"]).blocks
    assert [(b.language, b.code.removesuffix("\n")) for b in blocks] == expected


def test_doctor_page_lines_on_a_real_claude_page() -> None:
    proc = doctor(CLAUDE / "tochi-claude.html")
    out = proc.stdout
    assert 'HIT  finished_markers: [data-is-streaming="false"]' in out
    assert 'HIT  copy_button: button[data-testid="action-bar-copy"]' in out
    assert "finished yes; assistant's copy button found" in out
