"""Answers read from a real Chromium page: exact markdown, streaming, and the finish signal.

Against the local chat site: the markdown must equal the scripted answer byte
for byte (fences, language tags, tabs, trailing spaces, HTML-special
characters) whether it comes from the site's copy button or from the DOM, in
both code-block layouts and both turn layouts; text must reach on_text while it
is written; and an answer must never be taken before the site shows it is done,
however long the model pauses.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from chatsite import SCENARIOS, ChatSite

from verifybot_tui.llm.browser import BrowserLLM

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.timeout(120)]


def script(name: str, i: int = 0) -> str:
    return SCENARIOS[name].replies[i].markdown


async def finish_time(site: ChatSite, before: int) -> float:
    """When the page showed its finish signals (epoch s); the page posts it right then."""
    deadline = time.monotonic() + 5
    while len(site.finishes) <= before:
        assert time.monotonic() < deadline, "the site never reported the answer finished"
        await asyncio.sleep(0.01)
    return site.finishes[before]["t"] / 1000


async def ask_new(llm: BrowserLLM, site: ChatSite, scenario: str, prompt: str = "go",
                  on_text=None, **options):  # noqa: ANN001, ANN003, ANN201
    site.configure(scenario, **options)
    await llm.new_chat()
    return await llm.ask(prompt, on_text)


@pytest.mark.parametrize("copy", [True, False], ids=["copy-button", "dom-fallback"])
@pytest.mark.parametrize("turns", ["section", "article"])
@pytest.mark.parametrize("layout", ["cm", "hljs"])
async def test_the_answer_is_the_scripts_markdown_byte_for_byte(
        site_llm: BrowserLLM, chatsite: ChatSite, layout: str, turns: str, copy: bool) -> None:
    answer = await ask_new(site_llm, chatsite, "code_blocks", code_layout=layout,
                           turn_layout=turns, copy_button=copy)
    assert answer.markdown == script("code_blocks")
    assert answer.conversation_url == site_llm.conversation_url
    assert "/c/" in answer.conversation_url and "WEB:" not in answer.conversation_url


@pytest.mark.parametrize("copy", [True, False], ids=["copy-button", "dom-fallback"])
async def test_a_very_long_answer_arrives_whole(site_llm: BrowserLLM, chatsite: ChatSite,
                                                copy: bool) -> None:
    answer = await ask_new(site_llm, chatsite, "long", copy_button=copy)
    assert len(answer.markdown) > 60_000
    assert answer.markdown == script("long")


async def test_text_reaches_on_text_while_it_is_written(site_llm: BrowserLLM,
                                                        chatsite: ChatSite) -> None:
    seen: list[tuple[float, str]] = []
    before = len(chatsite.finishes)
    answer = await ask_new(site_llm, chatsite, "stream",
                           on_text=lambda text: seen.append((time.time(), text)))
    finished = await finish_time(chatsite, before)
    assert answer.markdown == script("stream")
    assert len(seen) >= 5
    # whole text so far, growing, and most of it seen before the answer was done
    words = script("stream").split("\n\n")[0]
    prose = [text for _, text in seen if "```" not in text]  # before the code block shows
    assert all(script("stream").startswith(text) for text in prose)
    assert [len(t) for t in prose] == sorted(len(t) for t in prose)
    # Seen while it was still being written: growing text reported before the page
    # finished (no margin of time: a loaded machine polls later, never less truly).
    early = {len(t) for at, t in seen if at < finished and len(t) < len(words)}
    assert len(early) >= 2, (early, len(words))


@pytest.mark.parametrize(("scenario", "options"), [
    ("pause_before", {}),
    ("pause_during", {}),
    # the action buttons show early: only the stop button says "busy"
    ("pause_during", {"result_streaming": False, "early_actions": True}),
    # ... and it keeps data-testid="send-button": only its label says Stop
    ("pause_during", {"result_streaming": False, "early_actions": True,
                      "stop_label_on_send": True}),
])
async def test_pauses_never_finish_early(site_llm: BrowserLLM, chatsite: ChatSite,
                                         scenario: str, options: dict) -> None:
    before = len(chatsite.finishes)
    answer = await ask_new(site_llm, chatsite, scenario, **options)
    returned = time.time()
    assert answer.markdown == script(scenario)
    assert returned >= await finish_time(chatsite, before), "returned before the site finished"


async def test_a_downgrade_notice_is_not_a_limit(site_llm: BrowserLLM,
                                                 chatsite: ChatSite) -> None:
    answer = await ask_new(site_llm, chatsite, "downgrade")
    assert answer.markdown == script("downgrade")


async def test_follow_ups_and_resume_stay_in_one_conversation(site_llm: BrowserLLM,
                                                              chatsite: ChatSite) -> None:
    first = await ask_new(site_llm, chatsite, "two_answers", prompt="first question")
    second = await site_llm.ask("follow-up question")
    assert (first.markdown, second.markdown) == (script("two_answers", 0),
                                                 script("two_answers", 1))
    assert first.conversation_url == second.conversation_url
    # a new chat, then back to the saved one: its old turns load, the prompt lands there
    await site_llm.new_chat()
    assert site_llm.conversation_url is None
    await site_llm.resume(first.conversation_url)
    third = await site_llm.ask("third question")
    assert third.markdown == script("two_answers", 1)
    assert third.conversation_url == first.conversation_url
    sent = chatsite.prompts[-3:]
    assert [p.text for p in sent] == ["first question", "follow-up question", "third question"]
    assert len({p.conversation_id for p in sent}) == 1
    assert first.conversation_url.endswith(sent[0].conversation_id)
    assert site_llm.state == "idle"



@pytest.mark.parametrize("copy", [True, False], ids=["copy-button", "dom-fallback"])
async def test_claude_variant_end_to_end(chatsite: ChatSite, claude: BrowserLLM,
                                         copy: bool) -> None:
    texts: list[str] = []
    answer = await ask_new(claude, chatsite, "code_blocks", "claude, write code", texts.append,
                           copy_button=copy)
    assert answer.markdown == script("code_blocks")
    assert texts, "no streamed text"
    assert "/claude/chat/" in answer.conversation_url
    chatsite.configure("two_answers")
    follow = await claude.ask("and a follow-up")
    assert follow.markdown == script("code_blocks")  # the conversation keeps its script
    assert follow.conversation_url == answer.conversation_url
    assert [p.text for p in chatsite.prompts[-2:]] == ["claude, write code", "and a follow-up"]
    assert {p.variant for p in chatsite.prompts[-2:]} == {"claude"}
