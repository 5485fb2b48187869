"""The app's resume of a session whose answer outlived the wait (test site, Chromium).

An answer still being written at the answer timeout ends the run keeping its
conversation; resuming that session from the app (what the history pane's resume
key does) and typing a follow-up waits for that same answer in that conversation:
nothing is sent again, the typed prompt is held back with a notice, the answer's
program runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_fixtures import CHROMIUM
from chatsite import SCENARIOS, ChatSite

from verifybot_tui.core.loop.events import Finished, Notice

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]


async def test_resuming_in_the_app_waits_for_the_pending_answer(
        tui, chatsite: ChatSite, tmp_path: Path, app_messages) -> None:
    chatsite.reset()
    chatsite.configure("long_thinking")
    table = {"kind": "browser", "site": "chatgpt", "url": chatsite.url, "headless": True,
             "browser_path": CHROMIUM, "profile_dir": str(tmp_path / "profile"),
             "answer_timeout": 2}
    app = tui.make_app(tui.ws, llm="site", data={"llm": {"site": table}, "run": {"judge": "off"}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: app.session.llm is not None
                           and app.session.llm.state == "idle", timeout=60, what="the browser")
        await tui.type_prompt(pilot, "greet after a long thought")
        await tui.wait_idle(pilot, timeout=60)
        first = [f for f in seen if isinstance(f, Finished)]
        assert [f.status for f in first] == ["LLM_ERROR"]
        sid = first[0].record["session"]
        assert f"verifybot run --resume {sid}" in first[0].message
        assert app.session.history.pending_prompt(sid) is not None

        app.session.llm.answer_timeout = 60  # room to wait this time
        tui.main(app).resume(sid)
        await tui.type_prompt(pilot, "and now?")
        await tui.wait_approval(pilot, timeout=60, what="the pending answer's program")
        await pilot.press("a")
        await tui.wait_idle(pilot, timeout=60)
        answers = [p["answer"] for p in app.session.history.prompts(sid)]
    assert answers == [SCENARIOS["long_thinking"].replies[0].markdown]
    finished = [f for f in seen if isinstance(f, Finished)]
    assert [f.status for f in finished] == ["LLM_ERROR", "PASSED"]
    assert finished[1].record["session"] == sid
    assert len(chatsite.prompts) == 1  # asked once; "and now?" never went out
    notes = [n.text for n in seen if isinstance(n, Notice)]
    assert any("waiting for it in" in t and "instead of asking again" in t for t in notes)
    assert any("your new prompt is not sent now" in t for t in notes)
