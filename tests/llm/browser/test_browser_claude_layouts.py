"""Claude's two pages on the test site, built after the real ones.

"2025": the page of 2025-26 (body.font-ui, the answer div[data-is-streaming] under
div.contents under div.group, which also holds the action bar; a thinking row whose
text sits in .font-ui; code under a header whose label is text). "hub": the 2026-10
layout (transcript rows in a feed; the answer ONE [data-cds="AssistantMessage"]
holding a [data-cds="TurnStatus"] thinking row with its text in a Prose block, the
answer's Prose blocks and its own toolbar; the user's row has a Copy button of its
own). On both: the answer exact by the copy button and by the DOM, the thinking
text in no answer and in no streamed text, the assistant's copy button never the
user's; a saved hub page read by `doctor --page`.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import open_llm
from chatsite import SCENARIOS, ChatSite
from chatsite.scenarios import ARTIFACT_ANSWER
from project import verifybot_cmd

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

THOUGHT = "THINKING: the user wants a program"


def script(name: str) -> str:
    return SCENARIOS[name].replies[0].markdown


@pytest.mark.parametrize("copy", [True, False], ids=["copy-button", "dom-fallback"])
@pytest.mark.parametrize("layout", ["2025", "hub"])
async def test_claude_answer_exact_without_its_thinking(chatsite: ChatSite, tmp_path: Path,
                                                        layout: str, copy: bool) -> None:
    chatsite.configure("code_blocks", copy_button=copy, claude_layout=layout)
    async with open_llm(chatsite, tmp_path, "claude") as llm:
        texts: list[str] = []
        answer = await llm.ask("claude, write code", texts.append)
        on_page = await llm.page.evaluate("() => document.body.textContent")
        renderer = llm.renderer
    assert renderer == ("claude_hub" if layout == "hub" else "claude_2026")
    assert answer.markdown == script("code_blocks")
    assert THOUGHT in on_page  # the thinking row is there, and read by nobody
    assert texts and not any(THOUGHT in t for t in texts)


@pytest.mark.parametrize("layout", ["2025", "hub"])
async def test_claude_copy_button_is_the_assistants_not_the_users(
        chatsite: ChatSite, tmp_path: Path, layout: str) -> None:
    chatsite.configure("answer", claude_layout=layout)
    async with open_llm(chatsite, tmp_path, "claude") as llm:
        answer = await llm.ask("the user's own text")
        probe = await llm.page.evaluate("() => window.__vb.probe()")
        copies = await llm.page.evaluate(
            "() => document.querySelectorAll('button[aria-label=\"Copy\"]').length")
    assert answer.markdown == script("answer")
    assert copies == 2  # the user's and the answer's
    assert probe["signals"]["copy_button"]["count"] == 1
    assert probe["signals"]["finished_markers"]["count"] == 1


async def test_claude_hub_artifact_code_comes_from_the_conversation_json(
        chatsite: ChatSite, tmp_path: Path) -> None:
    chatsite.configure("artifact", claude_layout="hub")
    async with open_llm(chatsite, tmp_path, "claude") as llm:
        answer = await llm.ask("an artifact please")
    assert answer.markdown == ARTIFACT_ANSWER


async def test_doctor_page_reads_a_saved_hub_page(chatsite: ChatSite, tmp_path: Path) -> None:
    chatsite.configure("code_blocks", claude_layout="hub")
    async with open_llm(chatsite, tmp_path, "claude") as llm:
        answer = await llm.ask("claude, write code")
        saved = tmp_path / "hub.html"
        saved.write_text(await llm.page.content(), encoding="utf-8")
    proc = await asyncio.to_thread(
        subprocess.run, [*verifybot_cmd(), "doctor", "--page", str(saved), "--site", "claude",
                         "--json"], capture_output=True, text=True, timeout=150)
    got = json.loads(proc.stdout)
    assert got["renderer"] == "claude_hub" and got["state"] == "ready"
    assert got["finished"] is True and got["copy_button"] is True
    assert "MISS" not in got["signals"].values(), got["signals"]
    assert got["answer"] == answer.markdown
    assert THOUGHT not in got["answer"]
