"""The app with the browser LLM against the local test chat site (headless Chromium).

The same user path as with the replay backend, through a real browser: the
answer streams from the page into the conversation, the failing program's
error goes back as feedback in the same chat, the fix works. Then the
browser dies mid-answer: an error, and the next prompt relaunches it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_fixtures import CHROMIUM, kill_browser
from chatsite import ChatSite
from proc_helpers import alive

from verifybot_tui.core.loop.events import AnswerText, Finished, PromptSent
from verifybot_tui.llm.browser.chromium import profile_dir, read_lock
from verifybot_tui.tui.widgets.conversation import ConversationPane
from verifybot_tui.tui.widgets.output import OutputPane

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]


def site_app(tui, site: ChatSite, tmp_path: Path, **kw):
    table = {"kind": "browser", "site": "chatgpt", "url": site.url, "headless": True,
             "browser_path": CHROMIUM, "profile_dir": str(tmp_path / "profile")}
    # The same-chat judge (the default for browser LLMs) has its own tests (test_verify_*).
    return tui.make_app(tui.ws, llm="site",
                        data={"llm": {"site": table}, "run": {"judge": "off"}}, **kw)



async def test_whole_loop_through_the_browser(tui, chatsite: ChatSite, tmp_path: Path,
                                              app_messages) -> None:
    chatsite.reset()
    chatsite.configure("fix_loop")
    app = site_app(tui, chatsite, tmp_path)
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: app.session.llm is not None
                           and app.session.llm.state == "idle", timeout=60, what="the browser")
        # The state comes first; the screen hears of it through a message, a moment later.
        await tui.wait_for(pilot, lambda: not tui.main(app).conversation.loading,
                           what="the loading indicator to go once the browser is idle")
        await tui.type_prompt(pilot, "parse some json")
        await tui.wait_approval(pilot, timeout=60)
        assert "json.loads" in tui.main(app).query_one(ConversationPane).answer_text or \
            any("json.loads" in e.text for e in seen if isinstance(e, AnswerText))
        await pilot.press("a")
        # the failure's feedback is shown before it is sent; ctrl+s sends it
        feedback = await tui.wait_feedback(pilot, timeout=60,
                                      what="the feedback for review")
        assert "JSONDecodeError" in feedback.prompt
        await pilot.press("ctrl+s")
        await tui.wait_approval(pilot, attempt=2, timeout=60, what="the fix")
        await pilot.press("a")
        await tui.wait_idle(pilot, timeout=60)
        assert "True" in tui.main(app).query_one(OutputPane).lines
        browser = read_lock(profile_dir(app.session.llm.config))
        assert browser is not None
    assert not alive(browser.pid), "quitting the app closed the browser"
    assert [f.status for f in seen if isinstance(f, Finished)] == ["PASSED"]
    assert [p.kind for p in seen if isinstance(p, PromptSent)] == ["initial", "feedback"]
    first, second = chatsite.prompts[-2:]
    assert first.conversation_id == second.conversation_id, "feedback went to the same chat"
    assert "JSONDecodeError" in second.text


async def test_browser_dies_mid_answer_and_the_next_prompt_relaunches(
        tui, chatsite: ChatSite, tmp_path: Path, app_messages, notices) -> None:
    chatsite.reset()
    chatsite.configure("slow")
    app = site_app(tui, chatsite, tmp_path)
    seen, hook = app_messages.events, app_messages.hook
    killed: list[int] = []
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: app.session.llm is not None
                           and app.session.llm.state == "idle", timeout=60, what="the browser")
        await tui.type_prompt(pilot, "first question")
        await tui.wait_for(pilot, lambda: any(isinstance(e, AnswerText) for e in seen), timeout=30,
                           what="the answer to start")
        killed.append(kill_browser(app.session.llm))
        await tui.wait_idle(pilot, timeout=30)
        assert [f.status for f in seen if isinstance(f, Finished)] == ["LLM_ERROR"]
        assert any("browser was closed" in n.message for n in notices)
        before = len(seen)
        await tui.type_prompt(pilot, "second question")
        await tui.wait_for(pilot, lambda: any(isinstance(e, AnswerText) for e in seen[before:]),
                           timeout=60, what="the relaunched browser's answer")
        owner = read_lock(profile_dir(app.session.llm.config))
        assert owner is not None and owner.pid != killed[0], "a new browser answered"
    first, second = chatsite.prompts[-2:]
    assert first.text.splitlines()[0] == "first question"
    assert second.text.endswith("second question")
    assert first.conversation_id == second.conversation_id, \
        "the relaunched browser reopened the same conversation"
