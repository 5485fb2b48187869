"""The app's status bar while a reasoning model thinks on the app-shell page.

The page shows only its activity header ("Thinking", no stop button): the
status bar must say "thinking (N s)", counting up, then "streaming", and the
answer must arrive whole (never taken early while the model thinks).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_fixtures import CHROMIUM
from chatsite import SCENARIOS, ChatSite

from verifybot_tui.core.loop.events import AnswerDone
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]


async def test_the_status_bar_counts_the_thinking_seconds_then_streams(
        tui, chatsite: ChatSite, tmp_path: Path, app_messages) -> None:  # noqa: ANN001
    chatsite.configure("long_think", renderer="app_shell", no_stop_while_thinking=True,
                       flash_actions=True)
    table = {"kind": "browser", "site": "chatgpt", "url": chatsite.url, "headless": True,
             "browser_path": CHROMIUM, "profile_dir": str(tmp_path / "profile")}
    app = tui.make_app(tui.ws, llm="site",
                       data={"llm": {"site": table}, "run": {"judge": "off"}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: app.session.llm is not None
                           and app.session.llm.state == "idle", timeout=60, what="the browser")
        status = tui.main(app).query_one(StatusBar)
        await tui.type_prompt(pilot, "think about it")
        await tui.wait_for(pilot, lambda: status.llm_state == "thinking (0 s)", timeout=30,
                           what="thinking (0 s)")
        await tui.wait_for(pilot, lambda: status.llm_state == "thinking (1 s)", timeout=30,
                           what="the seconds counting up")
        assert "thinking (1 s)" in str(status.render())
        assert "(app_shell page)" in str(status.render())  # the renderer in use is named
        await tui.wait_for(pilot, lambda: status.llm_state == "streaming", timeout=30,
                           what="streaming after the thinking")
        await tui.wait_approval(pilot, timeout=60)
    done = [e.markdown for e in seen if isinstance(e, AnswerDone)]
    assert done == [SCENARIOS["long_think"].replies[0].markdown]
    assert chatsite.prompts[-1].text.startswith("think about it")
