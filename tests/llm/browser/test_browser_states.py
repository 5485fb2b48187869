"""Page states on a real page: each blocking state stops the prompt with its own message.

Logged out, account picker, bot check, limit (before and after sending), error
toast, a connection dropped mid-answer, and an answer that never finishes:
each ends in an LLMError (exit code 3) that says what to do, with a screenshot
and the page HTML saved as evidence, and the backend stays usable afterwards.
Also `verifybot login`'s wait: done when the page shows the user logged in,
and the profile keeps the session for the next run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from browser_fixtures import site_config
from chatsite import SCENARIOS, ChatSite

from verifybot_tui.core.base.errors import EXIT_LLM, LLMError
from verifybot_tui.llm.browser import BrowserLLM, login

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.timeout(120)]


def assert_evidence(err: LLMError) -> None:
    kinds = sorted(Path(p).suffix for p in err.evidence)
    assert kinds == [".html", ".png"], err.evidence
    for p in err.evidence:
        assert Path(p).stat().st_size > 0
        assert Path(p).parent.parts[-2:] == ("runs", "log")


@pytest.mark.parametrize(("scenario", "options", "says", "state"), [
    ("login_buttons", {}, "Run `verifybot login --llm site`", "logged_out"),
    ("answer", {"require_login": True}, "Not logged in to chatgpt", "logged_out"),
    ("account_picker", {}, "pick your account", "logged_out"),
    ("bot_check", {}, "set headless = false in [llm.site]", "error"),
    # the 2026 gate, found by its markers whatever the title's language
    ("bot_check", {"lang": "ko"}, 'shows a bot check ("잠시만 기다리십시오…")', "error"),
    ("bot_check", {"lang": "it"}, 'shows a bot check ("Solo un momento...")', "error"),
    ("limit_banner", {}, "Wait for the limit to reset", "error"),
    ("limit", {}, "reached our limit", "error"),
    ("error", {}, "Something went wrong", "error"),
    ("drop", {}, "Network connection lost", "error"),
])
async def test_each_page_state_has_its_own_message(site_llm: BrowserLLM, chatsite: ChatSite,
                                                   scenario: str, options: dict, says: str,
                                                   state: str) -> None:
    chatsite.configure(scenario, **options)
    await site_llm.new_chat()
    with pytest.raises(LLMError) as e:
        await site_llm.ask("hello?")
    assert says in e.value.message
    assert e.value.exit_code == EXIT_LLM
    assert site_llm.state == state
    assert_evidence(e.value)
    # the same backend answers again once the site is fine
    chatsite.configure("answer")
    await site_llm.new_chat()
    answer = await site_llm.ask("hello again")
    assert answer.markdown == SCENARIOS["answer"].replies[0].markdown
    assert site_llm.state == "idle"


async def test_an_answer_that_never_finishes_times_out_naming_what_it_waited_for(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("never")
    await site_llm.new_chat()
    site_llm.answer_timeout = 1.5
    streamed: list[str] = []
    try:
        with pytest.raises(LLMError) as e:
            await site_llm.ask("will you ever finish?", streamed.append)
    finally:
        site_llm.answer_timeout = 30
    msg = e.value.message
    assert "within 1.5 s" in msg
    assert "the stop button / busy marker to go away" in msg
    assert "finished-action buttons" in msg
    assert streamed and streamed[-1] == "This answer never finishes"
    assert_evidence(e.value)


async def test_a_cancelled_ask_stops_the_answer_and_the_next_prompt_goes_through(
        site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("never")
    await site_llm.new_chat()
    streaming = asyncio.Event()
    task = asyncio.create_task(site_llm.ask("a long one", lambda _text: streaming.set()))
    await asyncio.wait_for(streaming.wait(), 10)
    before = len(chatsite.finishes)
    task.cancel()  # the user stops the loop
    with pytest.raises(asyncio.CancelledError):
        await task
    assert site_llm.state == "idle"
    answer = await site_llm.ask("next one, same chat")
    assert answer.markdown == SCENARIOS["never"].replies[1].markdown
    # the site was told to stop: the first answer ended there, partial
    assert chatsite.finishes[before]["stopped"] is True
    assert chatsite.prompts[-1].conversation_id == chatsite.prompts[-2].conversation_id


async def test_a_truncated_prompt_is_refused(site_llm: BrowserLLM, chatsite: ChatSite) -> None:
    chatsite.configure("answer", max_prompt=500)
    await site_llm.new_chat()
    sent = len(chatsite.prompts)
    with pytest.raises(LLMError) as e:
        await site_llm.ask("x" * 400 + "\n" + "y" * 400)
    assert "holds 500 of the 801 characters" in e.value.message
    assert "truncated" in e.value.message
    assert len(chatsite.prompts) == sent  # nothing was sent
    assert_evidence(e.value)


async def test_login_waits_for_the_page_to_show_the_user_logged_in(
        chatsite: ChatSite, tmp_path: Path, renderer: str) -> None:
    chatsite.configure("answer", require_login=True, auto_login_after=0.5)
    cfg = site_config(chatsite, tmp_path / "profile")
    await login(cfg, tmp_path / "ws", timeout=30, headless=True)
    # the session lives in the profile: the next run is logged in without the login page
    chatsite.configure("answer", require_login=True)
    llm = BrowserLLM(cfg, tmp_path / "ws", answer_timeout=30, page_timeout=15)
    try:
        answer = await llm.ask("am I logged in?")
    finally:
        await llm.close()
    assert answer.markdown == SCENARIOS["answer"].replies[0].markdown
    assert chatsite.prompts[-1].text == "am I logged in?"


async def test_login_gives_up_after_its_timeout(chatsite: ChatSite, tmp_path: Path,
                                                renderer: str) -> None:
    chatsite.configure("answer", require_login=True)
    with pytest.raises(LLMError) as e:
        await login(site_config(chatsite, tmp_path / "p"), tmp_path / "ws",
                    timeout=1.0, headless=True)
    assert "Not logged in to chatgpt after 1 s" in e.value.message
    assert "logged_out" in e.value.message
    assert "verifybot login --llm site" in e.value.message
