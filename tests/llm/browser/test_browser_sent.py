"""What other drivers learned the hard way, on the test site in a real Chromium.

A send the page swallowed is caught within [llm] send_timeout (clicked once more,
then an error with evidence), never after the answer timeout; a usage-limit or
model-unavailable notice ends the prompt at once with the site's own words; an
answer that failed with a Retry button is an error seen within seconds, and
auto_retry clicks it once. Each runs on both chatgpt pages (legacy, app-shell),
with a large answer timeout, so a wait for it would show. The send checks run with a
send_timeout of a few seconds (the key a user sets too): the default's 10 s, paid twice
per page, would only slow the suite, and what is checked is what happens at the limit.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from browser_fixtures import *  # noqa: F403
from browser_fixtures import with_settings
from chatsite import SCENARIOS, ChatSite

from verifybot_tui.core.base.errors import EXIT_LLM, LLMError
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser import BrowserLLM

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.timeout(120)]

BIG = 120.0  # the answer timeout in these tests: nothing here may wait for it
SEND = 3.0  # [llm] send_timeout where a send check runs out (the default is 10 s)


def assert_evidence(err: LLMError) -> None:
    kinds = sorted(Path(p).suffix for p in err.evidence)
    assert kinds == [".html", ".png"], err.evidence
    for p in err.evidence:
        assert Path(p).stat().st_size > 0
        assert Path(p).parent.parts[-2:] == ("runs", "log")


async def ask_timed(llm: BrowserLLM, prompt: str) -> tuple[LLMError, float]:
    llm.answer_timeout = BIG
    started = time.monotonic()
    try:
        with pytest.raises(LLMError) as e:
            await llm.ask(prompt)
    finally:
        llm.answer_timeout = 30
    return e.value, time.monotonic() - started


async def test_a_send_the_page_swallowed_is_clicked_once_more(site_llm: BrowserLLM,
                                                              chatsite: ChatSite) -> None:
    chatsite.configure("answer", swallow_send=1)
    await site_llm.new_chat()
    sent = len(chatsite.prompts)
    with with_settings(site_llm, send_timeout=4.0):  # clicked again after 2 s
        answer = await site_llm.ask("the first click is lost")
    assert answer.markdown == SCENARIOS["answer"].replies[0].markdown
    assert chatsite.received()[sent:] == ["the first click is lost"]  # sent once, not twice
    assert "clicked it once more" in answer.details


async def test_a_send_that_does_nothing_fails_with_evidence_not_at_the_timeout(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("answer", swallow_send=99)
    await site_llm.new_chat()
    sent = len(chatsite.prompts)
    with with_settings(site_llm, send_timeout=SEND):
        err, took = await ask_timed(site_llm, "nobody hears this")
    assert LLMConfig().send_timeout == 10  # the default
    assert "The prompt was not sent" in err.message
    assert f"{SEND:g} s after clicking send" in err.message
    assert "(clicked twice)" in err.message
    assert "the prompt box still holds 17 characters" in err.message
    assert err.exit_code == EXIT_LLM
    assert_evidence(err)
    assert len(chatsite.prompts) == sent
    # caught by the send check, nowhere near the answer timeout
    assert SEND <= took < BIG / 4, took


async def test_a_message_shown_with_the_composer_still_full_is_not_proof(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("answer", keep_box=True)
    await site_llm.new_chat()
    with with_settings(site_llm, send_timeout=SEND):
        err, took = await ask_timed(site_llm, "shown, but still in the box")
    assert "The prompt shows on the page, but the prompt box still holds 27 characters" \
        f" {SEND:g} s after sending" in err.message
    assert_evidence(err)
    assert took < BIG / 4, took


@pytest.mark.parametrize("notice", [
    "GPT-5 Pro isn't available right now. Limit reached. Try again after 4:00 PM.",
    "You've hit your usage limit for GPT-5 Thinking.",
])
async def test_a_limit_shown_before_sending_ends_the_prompt_unsent(
        site_llm: BrowserLLM, chatsite: ChatSite, notice: str) -> None:
    chatsite.configure("answer", alert=notice)
    await site_llm.new_chat()
    sent = len(chatsite.prompts)
    err, took = await ask_timed(site_llm, "hello?")
    assert notice in err.message  # the site's own words
    assert err.exit_code == EXIT_LLM
    assert len(chatsite.prompts) == sent  # never sent
    assert_evidence(err)
    assert took < BIG / 4, took


async def test_a_limit_shown_once_the_prompt_is_typed_stops_it_before_the_click(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    notice = "Limit reached for GPT-5 Thinking. Try again after 4:00 PM."
    chatsite.configure("answer", limit_on_type=notice)
    await site_llm.new_chat()
    sent = len(chatsite.prompts)
    err, took = await ask_timed(site_llm, "typed, never sent")
    assert notice in err.message
    assert err.exit_code == EXIT_LLM
    assert len(chatsite.prompts) == sent
    assert_evidence(err)
    assert took < BIG / 4, took


async def test_a_limit_shown_just_after_sending_ends_it_at_once(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("limit")
    await site_llm.new_chat()
    err, took = await ask_timed(site_llm, "one more?")
    assert "You've reached our limit of messages per hour" in err.message
    assert err.exit_code == EXIT_LLM
    assert_evidence(err)
    assert took < BIG / 4, took


async def test_an_error_with_a_retry_button_is_seen_within_seconds(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("retry")
    await site_llm.new_chat()
    err, took = await ask_timed(site_llm, "this one fails")
    assert "There was an error generating a response" in err.message
    assert 'shows a "Retry" button' in err.message
    assert "auto_retry = true" in err.message
    assert err.exit_code == EXIT_LLM
    assert_evidence(err)
    assert took < 5, took


async def test_auto_retry_clicks_retry_once_and_reads_the_answer(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("retry")
    await site_llm.new_chat()
    sent = len(chatsite.prompts)
    site_llm.answer_timeout = BIG
    try:
        with with_settings(site_llm, auto_retry=True):
            answer = await site_llm.ask("fails once, then works")
    finally:
        site_llm.answer_timeout = 30
    assert answer.markdown == SCENARIOS["retry"].replies[1].markdown
    assert len(chatsite.prompts) == sent + 1  # retried on the page, not sent again
    assert '"Retry" button once (auto_retry)' in answer.details
