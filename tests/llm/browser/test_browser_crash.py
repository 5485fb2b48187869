"""A browser that dies mid-answer: a clear error now, a relaunch into the same chat next.

The browser is killed with SIGKILL (as a crash or the user closing it would
end it), or its tab's renderer crashes. The error must come at once (not at
the answer timeout), the next prompt must start a new browser on the same
profile (its stale lock files cleaned up) and land in the same conversation.
A second browser on a profile already in use is refused with a clear message.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from browser_fixtures import kill_browser, open_llm
from chatsite import SCENARIOS, ChatSite

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.llm.browser.chromium import profile_dir, read_lock

pytestmark = [pytest.mark.browser, pytest.mark.asyncio(loop_scope="module"),
              pytest.mark.timeout(120)]


async def test_browser_killed_mid_answer_then_relaunched_into_the_same_chat(
        chatsite: ChatSite, tmp_path: Path, renderer: str) -> None:
    chatsite.configure("slow")
    async with open_llm(chatsite, tmp_path) as llm:
        killed: list[float] = []

        def on_text(text: str) -> None:
            if not killed and len(text) > 20:
                kill_browser(llm)
                killed.append(time.monotonic())

        with pytest.raises(LLMError) as e:
            await llm.ask("first question", on_text)
        assert killed and time.monotonic() - killed[0] < 5  # at once, not at the timeout
        url = llm.conversation_url
        assert url and "/c/" in url
        assert "browser was closed (or crashed)" in e.value.message and url in e.value.message
        assert e.value.evidence and all(Path(p).exists() for p in e.value.evidence)
        assert llm.state == "error"
        stale = read_lock(profile_dir(llm.config))
        assert stale is not None  # the killed browser left its lock behind

        answer = await llm.ask("second question")
        assert answer.markdown == SCENARIOS["slow"].replies[1].markdown
        assert answer.conversation_url == url
        assert read_lock(profile_dir(llm.config)).pid != stale.pid
    first, second = chatsite.prompts[-2:]
    assert (first.text, second.text) == ("first question", "second question")
    assert first.conversation_id == second.conversation_id


async def test_tab_crash_mid_answer_is_reported_and_recovered(chatsite: ChatSite,
                                                              tmp_path: Path,
                                                              renderer: str) -> None:
    chatsite.configure("slow")
    async with open_llm(chatsite, tmp_path) as llm:
        crashed: list[bool] = []

        def on_text(text: str) -> None:
            if not crashed and len(text) > 20:
                crashed.append(True)
                # the renderer dies as on an out-of-memory crash
                asyncio.get_running_loop().create_task(crash(llm.page))

        with pytest.raises(LLMError) as e:
            await llm.ask("question", on_text)
        assert "crashed" in e.value.message
        answer = await llm.ask("again")
        assert answer.markdown == SCENARIOS["slow"].replies[1].markdown
    assert chatsite.prompts[-1].conversation_id == chatsite.prompts[-2].conversation_id


async def crash(page) -> None:  # noqa: ANN001
    cdp = await page.context.new_cdp_session(page)
    try:
        await cdp.send("Page.crash")
    except Exception:  # noqa: BLE001 - the session dies with the page, as intended
        pass


async def test_a_profile_in_use_by_another_browser_is_refused(chatsite: ChatSite,
                                                              tmp_path: Path) -> None:
    chatsite.configure("answer")
    async with open_llm(chatsite, tmp_path) as first:
        async with open_llm(chatsite, tmp_path, start=False) as second:
            with pytest.raises(LLMError) as e:
                await second.start()
        owner = read_lock(profile_dir(first.config))
        assert f"pid {owner.pid}" in e.value.message
        assert "in use by another browser" in e.value.message
        # the first browser was not disturbed
        answer = await first.ask("still here?")
        assert answer.markdown == SCENARIOS["answer"].replies[0].markdown
