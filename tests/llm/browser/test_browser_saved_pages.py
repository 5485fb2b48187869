"""`verifybot doctor --page --json` on pages saved from the real chatgpt.com.

The captures live in ../shared/reference/real-pages/ (saved by users of a public
exporter; not ours to copy into the repository, so they are read from there: the
CI clone has ../shared beside it; the tests that read them carry ``needs_shared``,
and a plain clone without ../shared deselects them and says so in the summary).
The real page is the standard: the renderer that claims each page, the finished
answer and the assistant's own copy button (not the user's, which carries the
same test id on the older page), every code block exact, and the app-shell
answer's inline code. The expected code is read from the saved HTML itself,
independently of the driver's page script.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from browser_fixtures import open_llm
from chatsite import SCENARIOS, ChatSite
from project import verifybot_cmd
from shared_data import REFERENCE

from verifybot_tui.core.answers.extract import extract

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

REAL = REFERENCE / "real-pages"
needs_shared = pytest.mark.needs_shared
PAGES = {
    "chatgpt-legacy/code-heavy.html": ("legacy", True),
    "chatgpt-legacy/short.html": ("legacy", True),
    "chatgpt-legacy/empty.html": ("legacy", False),
    "chatgpt-app-shell/attachment.html": ("app_shell", True),
}


def doctor(page: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), "doctor", "--page", str(page), *extra],
                          capture_output=True, text=True, timeout=150,
                          stdin=subprocess.DEVNULL)


DoctorJson = Callable[[Path], subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def doctor_json() -> DoctorJson:
    """`doctor --page PAGE --site chatgpt --json`, run once per page in the module:
    several tests check different parts of the same report, and a run costs a browser
    launch. (Without --site the site is chatgpt too: the lines test runs it so.)"""
    runs: dict[Path, subprocess.CompletedProcess[str]] = {}

    def run(page: Path) -> subprocess.CompletedProcess[str]:
        if page not in runs:
            runs[page] = doctor(page, "--site", "chatgpt", "--json")
        return runs[page]

    return run


def saved_code(page: Path) -> list[str]:
    """Each code block's text as the saved HTML holds it (the viewer's <code>)."""
    text = page.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r'id="code-block-viewer".*?<code[^>]*>(.*?)</code>', text, re.S):
        out.append(html.unescape(re.sub(r"<[^>]+>", "", m.group(1))))
    return out


@pytest.fixture(scope="module")
def real() -> Path:
    assert REAL.is_dir(), f"../shared/reference is there but holds no {REAL.name}/"
    return REAL


@needs_shared
@pytest.mark.parametrize("name", sorted(PAGES))
def test_doctor_page_json_on_the_real_captures(real: Path, doctor_json: DoctorJson,
                                               name: str) -> None:
    renderer, has_answer = PAGES[name]
    proc = doctor_json(real / name)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(proc.stdout.strip().splitlines()) == 1  # exactly one object
    got = json.loads(proc.stdout)
    assert sorted(got) == sorted(["renderer", "state", "finished", "copy_button", "signals",
                                  "answer"])
    assert got["renderer"] == renderer
    assert got["state"] == "ready"
    assert got["finished"] is has_answer
    assert got["copy_button"] is has_answer
    assert (got["answer"] is not None) is has_answer
    if has_answer:
        assert "MISS" not in got["signals"].values(), got["signals"]
        assert got["signals"]["copy_button"] == "HIT"
        assert got["signals"]["finished_markers"] == "HIT"
    else:
        assert got["signals"]["prompt_box"] == "HIT"
        assert got["signals"]["copy_button"] == "not testable here"


@needs_shared
@pytest.mark.parametrize("name", ["chatgpt-legacy/code-heavy.html", "chatgpt-legacy/short.html"])
def test_every_code_block_of_the_real_older_page_exactly(real: Path, doctor_json: DoctorJson,
                                                         name: str) -> None:
    expected = saved_code(real / name)
    assert expected and all(expected)
    got = json.loads(doctor_json(real / name).stdout)
    blocks = extract(got["answer"]).blocks
    assert [b.code.removesuffix("\n") for b in blocks] == expected
    if name.endswith("code-heavy.html"):
        # the README's figures: python 80 chars, javascript 78, bash 2
        assert [(b.language, len(b.code) - 1) for b in blocks] == [
            ("python", 80), ("javascript", 78), ("bash", 2)]


@needs_shared
def test_the_real_app_shell_answer_keeps_its_inline_code(real: Path,
                                                         doctor_json: DoctorJson) -> None:
    got = json.loads(doctor_json(real / "chatgpt-app-shell/attachment.html").stdout)
    assert "`fixture-note.txt`" in got["answer"]
    assert got["answer"].startswith("첨부된 `fixture-note.txt` 파일 확인.")
    # the user's row (copy message, share, edit) is not the assistant's
    assert got["signals"]["action_row"] == "HIT"


@needs_shared
def test_doctor_page_lines_say_renderer_state_signals_and_answer(real: Path) -> None:
    proc = doctor(real / "chatgpt-app-shell/attachment.html")
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "renderer app_shell" in out and "state    ready (page language ko-KR)" in out
    assert 'HIT  copy_button: action row > button[type="button"][aria-label="복사"]' in out
    assert "finished yes; assistant's copy button found" in out
    assert "첨부된 `fixture-note.txt` 파일 확인." in out


def test_doctor_page_on_a_missing_file_says_what_to_give(tmp_path: Path) -> None:
    proc = doctor(tmp_path / "nope.html", "--json")
    assert proc.returncode == 2
    assert "no such file" in proc.stdout


@pytest.mark.parametrize("lang", ["ko", "it"])
async def test_doctor_page_on_evidence_saved_from_a_real_shaped_page(
        chatsite: ChatSite, tmp_path: Path, lang: str) -> None:
    # The page as the driver saves it for evidence (page.content()), after an answer on
    # the app-shell page with 4 hidden routes (each with its own finished answer): the
    # doctor reads the active route's answer, never a hidden one's.
    chatsite.configure("code_blocks", renderer="app_shell", hidden_route=True, lang=lang,
                       code_layout="hljs")
    async with open_llm(chatsite, tmp_path) as llm:
        answer = await llm.ask("the code please")
        saved = tmp_path / "saved.html"
        saved.write_text(await llm.page.content(), encoding="utf-8")
    assert answer.markdown == SCENARIOS["code_blocks"].replies[0].markdown
    proc = await asyncio.to_thread(doctor, saved, "--json")
    got = json.loads(proc.stdout)
    assert got["renderer"] == "app_shell" and got["state"] == "ready"
    assert got["finished"] is True and got["copy_button"] is True
    assert "MISS" not in got["signals"].values(), got["signals"]
    assert got["answer"] == answer.markdown
