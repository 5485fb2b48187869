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
import os
import re
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import site_config_file
from chatsite import SCENARIOS, ChatSite
from chatsite.scenarios import ARTIFACT_ANSWER, FAILING, WORKING, Reply, Scenario
from project import verifybot_cmd

from verifybot_tui.llm.browser import BrowserLLM

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]
# The tests on the module's one browser run on the module's event loop.
on_module_loop = pytest.mark.asyncio(loop_scope="module")

THOUGHT = "THINKING: the user wants a program"



async def ask_new(llm: BrowserLLM, site: ChatSite, scenario: str, prompt: str,
                  on_text=None, **options):  # noqa: ANN001, ANN003, ANN201
    site.configure(scenario, **options)
    await llm.new_chat()
    return await llm.ask(prompt, on_text)


def script(name: str) -> str:
    return SCENARIOS[name].replies[0].markdown


def sent_prompts(transcript: Path) -> list[str]:
    """The prompts as the transcript records them (each inside its own fence)."""
    text = transcript.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"^## Prompt \d+ \([^)]*\)\n\n(`{3,})text\n", text, re.M):
        fence = m.group(1)
        end = text.index("\n" + fence + "\n", m.end() - 1)
        out.append(text[m.end():end + 1])
    return out


@on_module_loop
@pytest.mark.parametrize("copy", [True, False], ids=["copy-button", "dom-fallback"])
@pytest.mark.parametrize("layout", ["2025", "hub"])
async def test_claude_answer_exact_without_its_thinking(chatsite: ChatSite, claude: BrowserLLM,
                                                        layout: str, copy: bool) -> None:
    texts: list[str] = []
    answer = await ask_new(claude, chatsite, "code_blocks", "claude, write code", texts.append,
                           copy_button=copy, claude_layout=layout)
    on_page = await claude.page.evaluate("() => document.body.textContent")
    renderer = claude.renderer
    assert renderer == ("claude_hub" if layout == "hub" else "claude_2026")
    assert answer.markdown == script("code_blocks")
    assert THOUGHT in on_page  # the thinking row is there, and read by nobody
    assert texts and not any(THOUGHT in t for t in texts)


@on_module_loop
@pytest.mark.parametrize("layout", ["2025", "hub"])
async def test_claude_copy_button_is_the_assistants_not_the_users(
        chatsite: ChatSite, claude: BrowserLLM, layout: str) -> None:
    answer = await ask_new(claude, chatsite, "answer", "the user's own text",
                           claude_layout=layout)
    probe = await claude.page.evaluate("() => window.__vb.probe()")
    copies = await claude.page.evaluate(
        "() => document.querySelectorAll('button[aria-label=\"Copy\"]').length")
    assert answer.markdown == script("answer")
    assert copies == 2  # the user's and the answer's
    assert probe["signals"]["copy_button"]["count"] == 1
    assert probe["signals"]["finished_markers"]["count"] == 1


@on_module_loop
async def test_claude_hub_artifact_code_comes_from_the_conversation_json(
        chatsite: ChatSite, claude: BrowserLLM) -> None:
    answer = await ask_new(claude, chatsite, "artifact", "an artifact please",
                           claude_layout="hub")
    assert answer.markdown == ARTIFACT_ANSWER


@on_module_loop
async def test_doctor_page_reads_a_saved_hub_page(chatsite: ChatSite, claude: BrowserLLM,
                                                  tmp_path: Path) -> None:
    answer = await ask_new(claude, chatsite, "code_blocks", "claude, write code",
                           claude_layout="hub")
    saved = tmp_path / "hub.html"
    saved.write_text(await claude.page.content(), encoding="utf-8")
    proc = await asyncio.to_thread(
        subprocess.run, [*verifybot_cmd(), "doctor", "--page", str(saved), "--site", "claude",
                         "--json"], capture_output=True, text=True, timeout=150)
    got = json.loads(proc.stdout)
    assert got["renderer"] == "claude_hub" and got["state"] == "ready"
    assert got["finished"] is True and got["copy_button"] is True
    assert "MISS" not in got["signals"].values(), got["signals"]
    assert got["answer"] == answer.markdown
    assert THOUGHT not in got["answer"]


def test_the_whole_loop_on_the_hub_page_ends_verified_with_prompts_byte_exact(
        chatsite: ChatSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # fail, the error fed back in the same chat, fix, the same-chat judge's PASS: VERIFIED;
    # every answer comes with a thinking row whose words must stay out of every answer.
    monkeypatch.setitem(SCENARIOS, "hub_loop",
                        Scenario([Reply(FAILING), Reply(WORKING), Reply("PASS")]))
    chatsite.configure("hub_loop", claude_layout="hub")
    before = len(chatsite.prompts)
    config = site_config_file(tmp_path, chatsite.claude_url, site="claude")
    ws = tmp_path / "ws"
    proc = subprocess.run(
        [*verifybot_cmd(), "run", "Print whether the config says ok", "--llm", "site",
         "--target", "local", "--yes", "--workspace", str(ws), "--config", str(config),
         "--expect", "contains:True", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=150, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "VERIFIED" and record["message"] == "the judge says PASS"
    assert len(record["attempts"]) == 2
    received = chatsite.prompts[before:]
    assert len(received) == 3 and {p.variant for p in received} == {"claude"}
    assert len({p.conversation_id for p in received}) == 1  # one chat throughout
    assert "JSONDecodeError" in received[1].text  # the failure went back
    (transcript,) = sorted((ws / "raw_md").glob("*.md"))
    text = transcript.read_text(encoding="utf-8")
    sent = sent_prompts(transcript)
    assert len(sent) == 3
    for recorded, got in zip(sent, received, strict=True):
        assert recorded == (got.text if got.text.endswith("\n") else got.text + "\n")
    assert "renderer claude_hub" in text and THOUGHT not in text
    code = WORKING.split("```python\n", 1)[1].rsplit("```", 1)[0]
    (v2,) = sorted((ws / "programs").glob("*_2.py"))
    assert v2.read_text(encoding="utf-8") == code
