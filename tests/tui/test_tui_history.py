"""The history in the app: the detail screen diffs any two versions, and the pane
shows what history.db stores beside a session's last status (issue 10 items 5, 7).

The real app under Pilot: replay LLM, local target, history.db on disk.
"""

from __future__ import annotations

import pytest
from old_history import old_db
from test_tui_widgets import labels

from verifybot_tui.core.store.history import History
from verifybot_tui.tui.screens.attempt import AttemptScreen
from verifybot_tui.tui.widgets.history import HistoryPane

pytestmark = pytest.mark.usefixtures("tui_env")


async def open_attempt(tui, pilot, pane: HistoryPane, n: int) -> AttemptScreen:
    """Expand the newest session and pick its attempt ``n`` as a user would (Enter)."""
    session = pane.root.children[0]
    session.expand()
    await pilot.pause()
    node = next(c for c in session.children
                if c.data is not None and c.data.attempt and c.data.attempt["n"] == n)
    pane.focus()
    pane.move_cursor(node)
    await pilot.press("enter")
    return await tui.wait_for(pilot, lambda: isinstance(pilot.app.screen, AttemptScreen)
                          and pilot.app.screen, what="the attempt screen")


async def history_after(tui, pilot, prompt: str) -> HistoryPane:
    """Send ``prompt``, let the loop finish, and give the history pane."""
    await tui.type_prompt(pilot, prompt)
    await tui.wait_idle(pilot)
    return tui.main(pilot.app).query_one(HistoryPane)


async def test_history_detail_diffs_any_two_versions(tui) -> None:
    app = tui.app_answering("total = 'one'\nprint(total + 1)",
                            "total = 1\nprint(total + '1')",
                            "total = 1\nprint(total + 1)\nprint('done')",
                            data={"run": {"auto_accept": True, "max_retries": 2}},
                            review_feedback=False)
    async with tui.running(app) as pilot:
        pane = await history_after(tui, pilot, "add one")
        detail = await open_attempt(tui, pilot, pane, 3)
        await pilot.press("d")  # the Diff tab, from the version before to this one
        assert detail.query_one("#attempt-tabs").active == "tab-diff"
        frm, to = detail.query_one("#diff-from"), detail.query_one("#diff-to")
        assert (frm.value, to.value) == (2, 3)
        assert "-print(total + '1')\n+print(total + 1)\n+print('done')\n" in detail.diff_text
        assert "total = 'one'" not in detail.diff_text
        # "from" v1: the keyboard opens the list, up once, Enter.
        assert frm.has_focus
        await pilot.press("enter", "up", "enter")
        await tui.wait_for(pilot, lambda: frm.value == 1, what="from v1")
        assert "-total = 'one'\n+total = 1\n" in detail.diff_text
        assert "add_one_1.py" in detail.diff_text and "add_one_3.py" in detail.diff_text
        # Backwards works too, and the same version twice says so.
        to.value = 1
        await pilot.pause()
        assert detail.diff_text == ""
        assert "compared with itself" in str(detail.query_one("#diff-text").render())
        frm.value = 3
        await pilot.pause()
        assert "-print('done')\n" in detail.diff_text
        shown = str(detail.query_one("#diff-text").render())
        assert "print('done')" in shown
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: not isinstance(app.screen, AttemptScreen), what="closed")


async def test_history_pane_shows_the_stored_success_and_not_sent(tui) -> None:
    ws = tui.ws
    old_db(ws)  # an older history.db: the app migrates it on open
    app = tui.app_answering("print('ok')", "raise SystemExit(1)",
                            data={"run": {"auto_accept": True, "max_retries": 0}},
                            review_feedback=False)
    async with tui.running(app) as pilot:
        pane = await history_after(tui, pilot, "print ok")
        assert str(pane.root.children[0].label).startswith("✔ #6 print_ok")
        await tui.type_prompt(pilot, "now fail")  # a follow-up in the same session
        await tui.wait_idle(pilot)
        await tui.wait_for(pilot, lambda: "✘ #6" in str(pane.root.children[0].label),
                       what="the session's new status")
        shown = labels(pane)
        newest = str(pane.root.children[0].label)
        assert "✔ passed (attempt 1), then follow-up failed" in newest, newest
        migrated = {line.split()[1]: line for line in shown if line.split()[1].startswith("#")}
        assert "✔ verified (attempt 2), then follow-up failed" in migrated["#1"]
        assert "not sent: target down" in migrated["#2"]
        assert "no answer: LLM error" in migrated["#3"]
        assert "no answer" not in migrated["#4"], "an LLM that answered half did get it"
        pane.focus()
        await pilot.press("slash", *"not sent", "enter")
        assert [n.data.session["id"] for n in pane.root.children] == [2]
    h = History(ws)
    row = h.session(6)
    assert (row["status"], row["success_status"], row["llm_reached"]) == \
        ("FAILED", "PASSED", True)
    h.close()
