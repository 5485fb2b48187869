"""F4 right after an inline edit shows the LLM's version against the edit; attempt 1's
detail diffs it against the version after it, never against itself."""

from __future__ import annotations

import pytest
from test_tui_history import history_after, open_attempt
from textual.widgets import Static, TextArea

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(120)]


async def test_f4_after_an_inline_edit_shows_the_llms_version_against_the_edit(
        tui, app_messages) -> None:
    app = tui.app_answering("print('from the llm')", data={"run": {"max_retries": 0}})
    async with tui.running(app, app_messages, size=(160, 48)) as pilot:
        await tui.type_prompt(pilot, "print something")
        await tui.wait_approval(pilot)
        code = tui.main(app).code_pane
        await pilot.press("e")
        await tui.wait_for(pilot, lambda: code.mode == "edit" and code.query(TextArea))
        await pilot.press("ctrl+end")
        await pilot.press("enter", *"print('mine')")
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: code.mode == "code" and code.edits)
        await pilot.press("f4")
        await tui.wait_for(pilot, lambda: code.mode == "diff" and code.query("#code-diff"))
        shown = "\n".join(str(w.render()) for w in code.query("#code-diff Static"))
        assert "There is no previous version" not in shown
        assert "Your edit against the LLM's version" in shown
        assert "+print('mine')" in shown, shown


async def test_attempt_ones_detail_diff_is_against_the_next_version(tui) -> None:
    app = tui.app_answering("print(1 + '1')", "print(1 + 1)",
                            data={"run": {"auto_accept": True, "max_retries": 1}},
                            review_feedback=False)
    async with tui.running(app) as pilot:
        pane = await history_after(tui, pilot, "add")
        detail = await open_attempt(tui, pilot, pane, 1)
        await pilot.press("d")
        frm, to = detail.query_one("#diff-from"), detail.query_one("#diff-to")
        assert (frm.value, to.value) == (1, 2)
        await tui.wait_for(pilot, lambda: detail.diff_text, what="a diff")
        assert "-print(1 + '1')\n+print(1 + 1)\n" in detail.diff_text
        assert "compared with itself" not in str(detail.query_one("#diff-text", Static).render())


async def test_a_sessions_only_version_opens_and_says_there_is_nothing_to_compare(
        tui, app_messages) -> None:
    app = tui.app_answering("print(1)")
    async with tui.running(app, app_messages, size=(80, 24)) as pilot:
        await tui.type_prompt(pilot, "count")
        await tui.wait_approval(pilot)
        await pilot.press("s")  # stopped: one version, never run
        await tui.wait_idle(pilot)
        await pilot.press("f2")
        detail = await open_attempt(tui, pilot, tui.main(app).history_pane, 1)
        await pilot.press("d")
        text = detail.query_one("#diff-text", Static)
        await tui.wait_for(pilot, lambda: "only version" in str(text.render()),
                           what="the only-version note")
        assert detail.diff_text == ""
