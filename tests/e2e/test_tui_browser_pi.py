"""The whole loop in the app with the browser LLM, switched from this machine to the Pi.

Real parts only: headless Chromium on the local test chat site, a real sshd on a
loopback port standing in for the Pi, the real app driven by its Pilot. The
first version fails here, the target is switched with the key while the
feedback is shown, and the fix runs on the Pi; the chat site receives the Pi's
context with the feedback, in the same conversation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_fixtures import CHROMIUM
from chatsite import ChatSite

from verifybot_tui.core.loop.events import Finished, RunStarted
from verifybot_tui.tui.widgets.output import OutputPane
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = [pytest.mark.browser, pytest.mark.ssh, pytest.mark.usefixtures("tui_env"),
              pytest.mark.timeout(180)]


async def test_browser_loop_switched_to_the_pi_mid_session(
        tui, chatsite: ChatSite, sshd, remote_dir, tmp_path: Path, app_messages) -> None:
    chatsite.reset()
    chatsite.configure("fix_loop")
    pi = sshd.config(remote_dir[0])
    site = {"kind": "browser", "site": "chatgpt", "url": chatsite.url, "headless": True,
            "browser_path": CHROMIUM, "profile_dir": str(tmp_path / "profile")}
    pi_table = {k: getattr(pi, k) for k in ("kind", "host", "port", "user", "key_file",
                                            "known_hosts", "password_env", "remote_dir")}
    app = tui.make_app(tui.ws, llm="site",
                       data={"llm": {"site": site}, "targets": {"pi": pi_table},
                         "run": {"judge": "off"}})  # the judge has its own tests
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: app.session.llm is not None
                           and app.session.llm.state == "idle", timeout=60, what="the browser")
        await tui.type_prompt(pilot, "parse some json")
        await tui.wait_approval(pilot, timeout=60)
        await pilot.press("a")  # runs here, on this machine, and fails
        await tui.wait_feedback(pilot, timeout=60,
                           what="feedback")
        await pilot.press("ctrl+t")  # switch to the Pi while the feedback is shown
        status = tui.main(app).query_one(StatusBar)
        await tui.wait_for(pilot, lambda: status.target == "pi"
                           and status.target_state == "connected",
                       timeout=60, what="the Pi connected")
        tui.main(app).query_one("#feedback-text").focus()
        await pilot.press("ctrl+s")  # send the feedback
        await tui.wait_approval(pilot, attempt=2, timeout=60, what="the fix")
        await pilot.press("a")  # the fix runs on the Pi
        await tui.wait_idle(pilot, timeout=60)
        assert "True" in tui.main(app).query_one(OutputPane).lines
    assert [e.target for e in seen if isinstance(e, RunStarted)] == ["local", "pi"]
    assert [e.status for e in seen if isinstance(e, Finished)] == ["PASSED"]
    first, second = chatsite.prompts[-2:]
    assert first.conversation_id == second.conversation_id
    assert "runs on another machine (pi)" in second.text and "JSONDecodeError" in second.text
    assert (Path(remote_dir[1]) / "runs").is_dir(), "the fix ran in the Pi's remote_dir"
