"""Today's chat pages and their traps, on the test site in a real Chromium.

chatgpt.com serves two pages (legacy, app-shell) and the driver picks one by
what the page shows; the app-shell page hides earlier routes in the DOM,
windows the thread, drops backticks from the prompt's bubble, shows gapped
CodeMirror blocks and a placeholder URL; reasoning models think with flashing
action rows; answers get cut off or fail in the turn; Claude's 2026 page puts
an answer in several blocks and code in artifacts. Each test asserts what the
user gets: the exact answer, or an error that says what happened.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from browser_fixtures import RENDERERS, finished_when_returned, open_llm, with_settings
from chatsite import SCENARIOS, ChatSite
from chatsite.scenarios import ARTIFACT_ANSWER, CUT_AT

from verifybot_tui.core.base.errors import EXIT_LLM, LLMError
from verifybot_tui.llm.browser import BrowserLLM

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.timeout(180)]


def script(name: str, i: int = 0) -> str:
    return SCENARIOS[name].replies[i].markdown


async def ask_new(llm: BrowserLLM, site: ChatSite, scenario: str, prompt: str = "go",
                  **options):  # noqa: ANN003, ANN201
    site.configure(scenario, **options)
    await llm.new_chat()
    return await llm.ask(prompt)


# One browser per site for the tests that need nothing of their own (no launch or
# login to watch): each sets its scenario and opens a new chat, as a user does between
# prompts, and an error in one (a delivery failure, a stuck block, a limit) must leave
# the browser usable for the next, as it must in the app. Keys the driver reads at each
# prompt or new chat are set for the test with with_settings(); a launch costs seconds
# on a loaded machine, so only tests with a site file of their own or that watch the
# first launch keep their own browser.
@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def chatgpt(chatsite: ChatSite,
                  tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserLLM]:
    chatsite.configure("answer")
    async with open_llm(chatsite, tmp_path_factory.mktemp("chatgpt")) as llm:
        yield llm



# --- renderers ---------------------------------------------------------------------


async def test_the_renderer_is_chosen_by_the_page_and_again_after_navigation(
        chatsite: ChatSite, chatgpt: BrowserLLM) -> None:
    seen = []
    for page in ["legacy", "app_shell", "legacy"]:
        answer = await ask_new(chatgpt, chatsite, "answer", renderer=page)
        assert answer.markdown == script("answer")
        seen.append((chatgpt.renderer, answer.renderer))
    assert seen == [("legacy", "legacy"), ("app_shell", "app_shell"), ("legacy", "legacy")]


async def test_no_renderer_matching_is_an_error_that_names_them_with_evidence(
        chatsite: ChatSite, tmp_path: Path) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('extends = "chatgpt"\n[renderers.app_shell]\nsignature = ["#gone-1"]\n'
                    '[renderers.legacy]\nsignature = ["#gone-2"]\n')
    chatsite.configure("answer")
    async with open_llm(chatsite, tmp_path, start=False, page_timeout=3,
                        settings={"site": str(mine)}) as llm:
        with pytest.raises(LLMError) as e:
            await llm.ask("anyone there?")
    msg = e.value.message
    assert "no renderer" in msg and "app_shell: #gone-1" in msg and "legacy: #gone-2" in msg
    assert "verifybot doctor --site" in msg
    assert e.value.exit_code == EXIT_LLM
    assert sorted(Path(p).suffix for p in e.value.evidence) == [".html", ".png"]
    assert not chatsite.prompts or chatsite.prompts[-1].text != "anyone there?"


async def test_a_users_file_extends_one_renderer(chatsite: ChatSite, tmp_path: Path) -> None:
    # The app-shell send button "changed": the user's file names the new one.
    mine = tmp_path / "mine.toml"
    mine.write_text('extends = "chatgpt"\n[renderers.app_shell.selectors]\n'
                    "send_button = ['form[data-chatgpt-composer] button[aria-label=\"Send\"]']\n")
    chatsite.configure("answer", renderer="app_shell")
    async with open_llm(chatsite, tmp_path, start=False, page_timeout=10,
                        settings={"site": str(mine)}) as llm:
        answer = await llm.ask("through my own profile")
    assert answer.markdown == script("answer") and answer.renderer == "app_shell"
    assert llm.profile.renderer("app_shell").sel("send_button") == [
        'form[data-chatgpt-composer] button[aria-label="Send"]']
    assert llm.profile.renderer("legacy").sel("send_button")[0] == '[data-testid="send-button"]'


# --- the app-shell page's traps ------------------------------------------------------


async def test_app_shell_windowed_chat_with_a_hidden_route_and_backtickless_bubbles(
        chatsite: ChatSite, tmp_path: Path) -> None:
    # after in-app navigations: 4 earlier routes mounted, hidden, ours marked active
    chatsite.configure("two_answers", renderer="app_shell", window=2, url_delay=1.0,
                       hidden_route=True)
    async with open_llm(chatsite, tmp_path) as llm:
        prompts = [f"question {i}: use `x{i}` and `y`" for i in range(5)]
        urls = set()
        for i, prompt in enumerate(prompts):
            answer = await llm.ask(prompt)
            assert answer.markdown == script("two_answers", min(i, 1))
            assert "OLD ANSWER" not in answer.markdown
            urls.add(answer.conversation_url)
        # only two exchanges mounted, the hidden routes' threads still in the DOM
        mounted = await llm.page.evaluate(
            "() => document.querySelectorAll('[data-app-shell-active-page=\"true\"] "
            "[data-turn-key]').length")
        hidden = await llm.page.evaluate(
            "() => document.querySelectorAll('[data-app-shell-active-page=\"false\"] "
            "[data-turn-key]').length")
        assert (mounted, hidden) == (2, 4)
    assert [p.text for p in chatsite.prompts[-5:]] == prompts
    assert len({p.conversation_id for p in chatsite.prompts[-5:]}) == 1
    (url,) = urls  # the placeholder /c/local-chatgpt%3A... was never recorded
    assert "local-chatgpt" not in url and url.endswith(chatsite.prompts[-1].conversation_id)


@pytest.mark.parametrize("layout", ["cm", "hljs", "bare"], ids=["codemirror", "pre", "bare"])
async def test_app_shell_dom_fallback_reads_all_three_code_renderings(
        chatsite: ChatSite, chatgpt: BrowserLLM, layout: str) -> None:
    answer = await ask_new(chatgpt, chatsite, "code_blocks", renderer="app_shell",
                           code_layout=layout, copy_button=False)
    assert answer.markdown == script("code_blocks")


async def test_a_gapped_codemirror_block_is_scrolled_through_byte_exact(
        chatsite: ChatSite, chatgpt: BrowserLLM) -> None:
    answer = await ask_new(chatgpt, chatsite, "long_cm", renderer="app_shell",
                           code_layout="cm", copy_button=False)
    shown = await chatgpt.page.evaluate(
        "() => [document.querySelectorAll('.cm-line').length, "
        "document.querySelectorAll('.cm-gap').length]")  # opened directly: one route
    assert answer.markdown == script("long_cm")
    assert answer.markdown.count("\n") > 150
    lines, gaps = shown
    assert lines < 60 and gaps >= 1, "the page must show the block with gaps"


async def test_a_codemirror_block_that_will_not_fill_is_an_error_never_shorter_code(
        chatsite: ChatSite, chatgpt: BrowserLLM) -> None:
    with pytest.raises(LLMError) as e:
        await ask_new(chatgpt, chatsite, "long_cm", renderer="app_shell", code_layout="cm",
                      copy_button=False, cm_stuck=True)
    msg = e.value.message
    assert "block 1 (python)" in msg and "lines shown" in msg
    assert "Nothing was extracted" in msg


# --- reasoning models ----------------------------------------------------------------


async def test_thinking_phases_and_flashing_action_rows_never_finish_early(
        chatsite: ChatSite, chatgpt: BrowserLLM) -> None:
    """20 answers (10 per chatgpt page) where only "Thinking" says the model is busy:
    no stop button while it thinks, the action row flashing, "Answer now" shown."""
    early = []
    states: list[str] = []
    llm = chatgpt
    for page in RENDERERS:
        for _ in range(10):
            chatsite.configure("thinking", renderer=page, no_stop_while_thinking=True,
                               flash_actions=True, answer_now=True)
            await llm.new_chat()
            before = len(chatsite.finishes)
            task = asyncio.create_task(llm.ask("think first"))
            while not task.done():
                states.append(llm.state)
                await asyncio.sleep(0.05)
            answer = task.result()
            finished = await finished_when_returned(llm, chatsite, before)
            if answer.markdown != script("thinking") or not finished:
                early.append((page, answer.markdown[:60], finished))
    assert early == []
    thinking = [s for s in states if s.startswith("thinking (")]
    assert thinking and thinking[0] == "thinking (0 s)"
    # "streaming" may show for a poll before the page's "Thinking" is observed; what
    # matters is that the thinking phase is followed by the answer streaming in.
    assert "streaming" in states[states.index(thinking[0]):]


# --- cut-off and failed answers -----------------------------------------------------


@pytest.mark.parametrize("page", ["legacy", "app_shell", "claude"])
@pytest.mark.parametrize("copy", [True, False], ids=["copy-button", "dom-fallback"])
async def test_a_cut_off_answer_is_continued_and_joined_exactly(
        chatsite: ChatSite, chatgpt: BrowserLLM, claude: BrowserLLM, page: str,
        copy: bool) -> None:
    llm = claude if page == "claude" else chatgpt
    answer = await ask_new(llm, chatsite, "cut", "a long answer please",
                           renderer="app_shell" if page == "app_shell" else "legacy",
                           copy_button=copy)
    assert answer.markdown == script("cut")
    assert chatsite.prompts[-1].text == "a long answer please"  # Continue sent no prompt


async def test_auto_continue_off_keeps_the_cut_answer(chatsite: ChatSite,
                                                      chatgpt: BrowserLLM) -> None:
    with with_settings(chatgpt, auto_continue=False):
        answer = await ask_new(chatgpt, chatsite, "cut", "a long answer please",
                               renderer="app_shell")
    assert answer.markdown == script("cut")[:CUT_AT]


@pytest.mark.parametrize("page", RENDERERS)
async def test_a_delivery_error_is_an_llm_error_saying_so(chatsite: ChatSite,
                                                          chatgpt: BrowserLLM,
                                                          page: str) -> None:
    with pytest.raises(LLMError) as e:
        await ask_new(chatgpt, chatsite, "delivery", renderer=page)
    assert 'could not deliver the answer: the page says "Message delivery timed out"' \
        in e.value.message
    assert "auto_retry = true" in e.value.message
    assert e.value.exit_code == EXIT_LLM and e.value.evidence


@pytest.mark.parametrize("lang", ["en", "it"])
@pytest.mark.parametrize("page", RENDERERS)
async def test_regenerate_on_error_retries_once(chatsite: ChatSite, chatgpt: BrowserLLM,
                                                page: str, lang: str) -> None:
    # app-shell: no retry test id; the action row's regenerate opens a menu (found by
    # its label, or, in a language without texts, as the row's first menu button)
    before = len(chatsite.prompts)
    with with_settings(chatgpt, regenerate_on_error=True):
        answer = await ask_new(chatgpt, chatsite, "delivery", "try hard", renderer=page,
                               lang=lang)
    assert answer.markdown == script("delivery", 1)
    assert [p.text for p in chatsite.prompts[before:]] == ["try hard"]


# --- Claude's 2026 page --------------------------------------------------------------


async def test_claude_answer_in_several_blocks_without_its_thinking(
        chatsite: ChatSite, claude: BrowserLLM) -> None:
    answer = await ask_new(claude, chatsite, "code_blocks", copy_button=False)
    blocks = await claude.page.evaluate(
        "() => document.querySelectorAll('[data-is-streaming] .standard-markdown').length")
    assert answer.markdown == script("code_blocks")
    assert blocks >= 4
    thought = await ask_new(claude, chatsite, "thinking", copy_button=False)
    assert thought.markdown == script("thinking")
    shown = await claude.page.evaluate("() => document.querySelector('.font-ui').textContent")
    assert "Let me think" in shown and "Let me think" not in thought.markdown


async def test_claude_copy_button_is_the_assistants_not_the_users(
        chatsite: ChatSite, claude: BrowserLLM) -> None:
    answer = await ask_new(claude, chatsite, "answer", prompt="the user's own text")
    copies = await claude.page.evaluate(
        "() => document.querySelectorAll('[data-testid=\"action-bar-copy\"]').length")
    assert answer.markdown == script("answer")
    assert copies == 2  # one on the user's message, one beside the answer


async def test_claude_artifact_code_comes_from_the_conversation_json(
        chatsite: ChatSite, claude: BrowserLLM) -> None:
    answer = await ask_new(claude, chatsite, "artifact")
    assert answer.markdown == ARTIFACT_ANSWER
    with pytest.raises(LLMError) as e:
        await ask_new(claude, chatsite, "artifact", artifact_api=False)
    assert "code is in a claude artifact" in e.value.message


async def test_claude_logged_out_markers_of_2026(chatsite: ChatSite, tmp_path: Path) -> None:
    chatsite.configure("answer", require_login=True)
    async with open_llm(chatsite, tmp_path, "claude", start=False) as llm:
        with pytest.raises(LLMError) as e:
            await llm.ask("hello?")
    assert "Not logged in to claude" in e.value.message
    assert "Continue with Google" in e.value.message


# --- page states ---------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "banner", "limit"), [
    ("chatgpt", "You are sending too many requests. Slow down.", True),
    ("chatgpt", "We have temporarily limited access to your account.", True),
    ("chatgpt", "Responses will use another model until 5 PM.", False),
    ("claude", "Message limit reached for Claude until 4 PM.", True),
    ("claude", "You are approaching your usage limit.", False),
    ("claude", "Tip: Long chats cause you to reach your usage limits faster.", False),
])
async def test_limits_apart_from_notices(chatsite: ChatSite, chatgpt: BrowserLLM,
                                         claude: BrowserLLM, variant: str, banner: str,
                                         limit: bool) -> None:
    llm = claude if variant == "claude" else chatgpt
    if limit:
        with pytest.raises(LLMError) as e:
            await ask_new(llm, chatsite, "answer", "hello?", banner=banner)
        assert "reports a usage limit" in e.value.message and banner[:20] in e.value.message
    else:
        answer = await ask_new(llm, chatsite, "answer", "hello?", banner=banner)
        assert answer.markdown == script("answer")


@pytest.mark.parametrize("page", RENDERERS)
async def test_bot_management_markers_on_a_working_page_are_not_a_bot_check(
        chatsite: ChatSite, chatgpt: BrowserLLM, page: str) -> None:
    answer = await ask_new(chatgpt, chatsite, "answer", renderer=page, bot_scripts=True)
    assert answer.markdown == script("answer")


@pytest.mark.parametrize("page", RENDERERS)
async def test_temporary_chats_and_the_model_picker(chatsite: ChatSite, chatgpt: BrowserLLM,
                                                    page: str) -> None:
    with with_settings(chatgpt, temporary=True, model="GPT-5 Thinking"):
        answer = await ask_new(chatgpt, chatsite, "two_answers", "a temporary question",
                               renderer=page)
        follow = await chatgpt.ask("and a follow-up")
    assert answer.resumable is False
    assert "temporary-chat=true" in answer.conversation_url
    assert follow.markdown == script("two_answers", 1)
    got = chatsite.prompts[-2:]
    assert [(p.model, p.temporary) for p in got] == [("GPT-5 Thinking", True)] * 2
    assert got[0].conversation_id == got[1].conversation_id


async def test_a_model_not_offered_lists_the_names_seen(chatsite: ChatSite,
                                                        chatgpt: BrowserLLM) -> None:
    with with_settings(chatgpt, model="GPT-9 Ultra"), pytest.raises(LLMError) as e:
        await ask_new(chatgpt, chatsite, "answer", "which model?", renderer="app_shell")
    msg = e.value.message
    assert "model = 'GPT-9 Ultra' is not offered" in msg
    assert "'GPT-5 Instant', 'GPT-5 Thinking', 'GPT-5 Pro'" in msg
