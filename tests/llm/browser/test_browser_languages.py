"""The chat pages in any UI language, with their dialogs, on the test site in Chromium.

The real pages follow the account's language (the real captures are Korean:
복사 = Copy): every button is found by structure or icon first, texts are a hint.
A page in a language VerifyBot has no texts for ("it" here) still runs the loop;
a state only its text could tell is reported as a message VerifyBot cannot read,
with evidence, never guessed. A "what's new" dialog covering the page is closed
by its own button and the transcript says so; a login dialog stays a page
state. Enter may insert a newline: the send button is clicked, never Enter.
Each test runs on chatgpt's legacy page and on its app-shell page.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from browser_fixtures import finished_when_returned, open_llm
from chatsite import SCENARIOS, ChatSite

from verifybot_tui.core.base.errors import EXIT_LLM, LLMError
from verifybot_tui.llm.browser import BrowserLLM

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.timeout(180)]

MULTI_LINE = "line one\n\n  indented `code` line\nlast line"


def script(name: str, i: int = 0) -> str:
    return SCENARIOS[name].replies[i].markdown


async def ask_new(llm: BrowserLLM, site: ChatSite, scenario: str, prompt: str = "go",
                  **options):  # noqa: ANN003, ANN201
    site.configure(scenario, **options)
    await llm.new_chat()
    return await llm.ask(prompt)


@pytest.mark.parametrize("lang", ["ko", "de", "it"])
@pytest.mark.parametrize("copy", [True, False], ids=["copy-button", "dom-fallback"])
async def test_the_answer_in_any_ui_language(chatsite: ChatSite, site_llm: BrowserLLM,
                                             lang: str, copy: bool) -> None:
    # "it": no texts in the profile; send, finish, copy and the DOM fallback still work
    answer = await ask_new(site_llm, chatsite, "code_blocks", lang=lang, copy_button=copy)
    assert answer.markdown == script("code_blocks")
    assert answer.details == ""  # no dialog was closed


@pytest.mark.parametrize("lang", ["ko", "it"])
async def test_thinking_without_a_stop_button_never_finishes_early_in_any_language(
        chatsite: ChatSite, site_llm: BrowserLLM, lang: str) -> None:
    # only the activity header (shimmering, in the page's language) says busy, the
    # action row flashes, "Answer now" shows: the answer is returned once finished
    for _ in range(3):
        before = len(chatsite.finishes)
        answer = await ask_new(site_llm, chatsite, "thinking", lang=lang,
                               no_stop_while_thinking=True, flash_actions=True,
                               answer_now=True)
        assert answer.markdown == script("thinking")
        assert await finished_when_returned(site_llm, chatsite, before)


@pytest.mark.parametrize(("lang", "title", "button"), [
    ("de", "Neu in ChatGPT", "Schließen"),  # its label is in the German texts
    ("it", "Novità di ChatGPT", "Chiudi"),  # no Italian texts: its icon-only close button
])
async def test_a_whats_new_dialog_open_at_load_is_closed_and_noted(
        chatsite: ChatSite, site_llm: BrowserLLM, lang: str, title: str, button: str) -> None:
    before = len(chatsite.prompts)
    answer = await ask_new(site_llm, chatsite, "answer", "through the dialog", lang=lang,
                           dialog="whats_new")
    assert answer.markdown == script("answer")
    assert [p.text for p in chatsite.prompts[before:]] == ["through the dialog"]
    assert answer.details == f'closed a dialog on the page: "{title}" (by its "{button}" button)'
    assert await site_llm.page.evaluate("() => !document.querySelector('[role=dialog]')")


async def test_a_login_dialog_is_not_answered_but_reported(chatsite: ChatSite,
                                                           site_llm: BrowserLLM) -> None:
    before = len(chatsite.prompts)
    with pytest.raises(LLMError) as e:
        await ask_new(site_llm, chatsite, "answer", "not sent", dialog="login")
    assert "Not logged in" in e.value.message and "verifybot login" in e.value.message
    assert e.value.exit_code == EXIT_LLM
    assert len(chatsite.prompts) == before
    assert await site_llm.page.evaluate("() => !!document.querySelector('[role=dialog]')")


async def test_a_dialog_with_no_close_button_is_a_message_verifybot_cannot_read(
        chatsite: ChatSite, site_llm: BrowserLLM) -> None:
    before = len(chatsite.prompts)
    with pytest.raises(LLMError) as e:
        await ask_new(site_llm, chatsite, "answer", "not sent", dialog="no_close")
    assert "the page shows a message VerifyBot cannot read" in e.value.message
    assert "What's new in ChatGPT" in e.value.message
    assert sorted(Path(p).suffix for p in e.value.evidence) == [".html", ".png"]
    assert len(chatsite.prompts) == before


async def test_a_notice_in_a_language_without_texts_is_reported_never_guessed(
        chatsite: ChatSite, site_llm: BrowserLLM) -> None:
    with pytest.raises(LLMError) as e:
        await ask_new(site_llm, chatsite, "answer", lang="it",
                      alert="Hai raggiunto il limite di messaggi. Riprova più tardi.")
    assert "cannot read" in e.value.message and "Hai raggiunto il limite" in e.value.message
    assert e.value.evidence
    # the same kind of notice in a language with texts is read for what it is
    with pytest.raises(LLMError) as e:
        await ask_new(site_llm, chatsite, "answer", lang="ko",
                      alert="메시지 한도에 도달했습니다. 몇 분 후에 다시 시도하세요.")
    assert "reports a usage limit" in e.value.message
    # a status line (a live region announcing what happens) asks nothing: the run goes on
    answer = await ask_new(site_llm, chatsite, "answer", lang="it",
                           banner="ChatGPT sta scrivendo una risposta")
    assert answer.markdown == script("answer")


async def test_enter_inserting_a_newline_does_not_matter_the_send_button_is_clicked(
        chatsite: ChatSite, site_llm: BrowserLLM) -> None:
    answer = await ask_new(site_llm, chatsite, "answer", MULTI_LINE, enter_newline=True,
                           lang="ko")
    assert answer.markdown == script("answer")
    assert chatsite.received()[-1] == MULTI_LINE


async def test_a_stopped_answer_is_stopped_by_its_localized_stop_button(
        chatsite: ChatSite, site_llm: BrowserLLM) -> None:
    chatsite.configure("never", lang="it")
    await site_llm.new_chat()
    task = asyncio.create_task(site_llm.ask("go on forever"))
    while not (site_llm.state == "streaming" and site_llm._obs.text):
        await asyncio.sleep(0.05)
    assert site_llm._obs.stop  # found by its icon: "Interrompi" is in no text table
    while not task.done():  # (3.11's wait_for can drop a cancel that meets a push)
        task.cancel()
        await asyncio.sleep(0.05)
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(50):
        if chatsite.finishes and chatsite.finishes[-1].get("stopped"):
            break
        await asyncio.sleep(0.1)
    assert chatsite.finishes[-1]["stopped"] is True


async def test_an_older_page_answer_in_several_assistant_nodes_is_read_whole(
        chatsite: ChatSite, tmp_path: Path) -> None:
    # one section[data-turn="assistant"]: intro node, "Thought for 3s" node, body node
    async with open_llm(chatsite, tmp_path) as llm:
        for copy in (False, True):
            answer = await ask_new(llm, chatsite, "code_blocks", renderer="legacy",
                                   multi_node=True, copy_button=copy, lang="ko")
            assert answer.markdown == script("code_blocks")
        nodes = await llm.page.evaluate(
            "() => document.querySelectorAll('section[data-turn=\"assistant\"] "
            "[data-message-author-role=\"assistant\"]').length")
    assert nodes == 3
