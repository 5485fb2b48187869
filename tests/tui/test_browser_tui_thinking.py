"""The app's status bar while a reasoning model thinks on the app-shell page.

The page shows only its activity header ("Thinking", no stop button): the
status bar must say "thinking (N s)", counting up, then "streaming", and the
answer must arrive whole (never taken early while the model thinks).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_fixtures import CHROMIUM
from chatsite import SCENARIOS, ChatSite

from verifybot_tui.core.loop.events import AnswerDone
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]


def seconds(states: list[str]) -> list[int]:
    """The N of each "thinking (N s)" state, in the order the status bar took them."""
    return [int(m[1]) for s in states if (m := re.fullmatch(r"thinking \((\d+) s\)", s))]


def after_thinking(states: list[str]) -> list[str]:
    """The states after the last "thinking (N s)" (the bar says "streaming" once the
    prompt is sent too, before the page shows the thinking)."""
    last = max((i for i, s in enumerate(states) if s.startswith("thinking")), default=None)
    return [] if last is None else states[last + 1:]


async def test_the_status_bar_counts_the_thinking_seconds_then_streams(
        tui, chatsite: ChatSite, tmp_path: Path, app_messages) -> None:  # noqa: ANN001
    # The page thinks until the test has seen the count go up (hold_thinking), and every
    # state the status bar took is recorded as it is set: nothing here depends on how
    # fast a loaded machine polls, renders or thinks.
    chatsite.configure("long_think", renderer="app_shell", no_stop_while_thinking=True,
                       flash_actions=True, hold_thinking=True)
    table = {"kind": "browser", "site": "chatgpt", "url": chatsite.url, "headless": True,
             "browser_path": CHROMIUM, "profile_dir": str(tmp_path / "profile")}
    app = tui.make_app(tui.ws, llm="site",
                       data={"llm": {"site": table}, "run": {"judge": "off"}})
    seen, hook = app_messages.events, app_messages.hook
    states: list[str] = []
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: app.session.llm is not None
                           and app.session.llm.state == "idle", timeout=60, what="the browser")
        status = tui.main(app).query_one(StatusBar)
        status.watch(status, "llm_state", lambda state: states.append(state), init=False)
        await tui.type_prompt(pilot, "think about it")
        await tui.wait_for(pilot, lambda: max(seconds(states), default=0) >= 2, timeout=60,
                           what="the seconds counting up to 2")
        assert status.llm_state.startswith("thinking (") and status.llm_state in str(
            status.render())  # still held: the bar shows the count
        assert "(app_shell page)" in str(status.render())  # the renderer in use is named
        chatsite.release_thinking()
        await tui.wait_for(pilot, lambda: "streaming" in after_thinking(states), timeout=60,
                           what="streaming after the thinking")
        await tui.wait_approval(pilot, timeout=60)
    # counted from 0, up once a second (a tick late under load may skip a number)
    counted = seconds(states)
    assert counted[0] == 0 and counted == sorted(set(counted)) and counted[-1] >= 2, states
    done = [e.markdown for e in seen if isinstance(e, AnswerDone)]
    assert done == [SCENARIOS["long_think"].replies[0].markdown]
    assert chatsite.prompts[-1].text.startswith("think about it")
