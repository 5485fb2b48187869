"""Every key does something or says why not, at 80x24 and 120x40, and the status bar
always says where the loop is (the real app through Pilot, on the recorded example).

What a newcomer met: ctrl+r and F4 silent in a fresh app, help that only PageDown
scrolled, `?` typed into the prompt with no word of where it opens help, six Tabs to
the output with no focus mark, F4 after a resume with "no previous version", notices
over the code tab, a four-line editor, and a status bar that said `idle` while a
version waited and kept `try 2/4` after a new chat.
"""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, TextArea

from verifybot_tui.tui.commands import VerifyBotCommands
from verifybot_tui.tui.screens.help import HelpScreen
from verifybot_tui.tui.widgets.code import CodePane

pytestmark = pytest.mark.usefixtures("tui_env")

SIZES = [(80, 24), (120, 40)]


def said(app_messages) -> str:
    return "\n".join(str(n.message) for n in app_messages.notices)


def bar(app) -> str:
    """The status bar as it reads on screen (markup left out)."""
    from textual.content import Content

    return Content.from_markup(str(app.main_screen.status_bar.render())).plain


@pytest.mark.parametrize("size", SIZES)
async def test_ctrl_r_and_f4_in_a_fresh_app_say_why_not(tui, app_messages, size) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=size) as pilot:
        await pilot.press("ctrl+r")
        await tui.wait_for(pilot, lambda: "Nothing to retry yet" in said(app_messages),
                           what="ctrl+r's reason")
        assert "Ctrl+R" in said(app_messages) or "^r" in said(app_messages)
        await pilot.press("f4")
        await tui.wait_for(pilot, lambda: "No code yet" in said(app_messages),
                           what="F4's reason")
        await pilot.press("ctrl+g")
        await tui.wait_for(pilot, lambda: "Nothing is running" in said(app_messages),
                           what="ctrl+g's reason")
        await pilot.press("f5")
        if size[0] >= 100:  # both panes show: F5 says so; below, it switches them
            await tui.wait_for(pilot, lambda: "both show at this width" in said(app_messages),
                               what="F5's reason")
        else:
            await tui.wait_for(pilot, lambda: tui.main(app).show_code, what="F5's switch")
        screen = tui.main(app)
        assert screen.code_pane.mode == "code" and not screen.running
        assert app.session.history.sessions() == []
        # The reason shows in the notice line, which covers no pane.
        line = screen.notice_line
        assert "No code yet" in line.text and line.display
        await pilot.pause()
        for pane in (screen.conversation, screen.output_pane, screen.prompt_box):
            assert not line.region.overlaps(pane.region), (pane, line.region, pane.region)


@pytest.mark.parametrize("size", SIZES)
async def test_help_scrolls_with_down_pagedown_and_end(tui, app_messages, size) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=size) as pilot:
        await pilot.press("f1")  # from the prompt box: F1 works in a text box too
        help_screen = await tui.wait_screen(pilot, HelpScreen, what="help")
        table = help_screen.query_one("#help-table", DataTable)
        assert table.max_scroll_y > 0, "the keys fill more than one screen"
        await pilot.press("down")
        await tui.wait_for(pilot, lambda: table.scroll_y >= 1, what="Down scrolling")
        before = table.scroll_y
        await pilot.press("pagedown")
        await tui.wait_for(pilot, lambda: table.scroll_y > before, what="PageDown scrolling")
        await pilot.press("end")
        await tui.wait_for(pilot, lambda: table.scroll_y == table.max_scroll_y,
                           what="End to the last row")
        await pilot.press("home")
        await tui.wait_for(pilot, lambda: table.scroll_y == 0, what="Home to the top")
        foot = str(help_screen.query_one("#help-foot").render())
        assert "? opens this outside a text box" in foot and "F1" in foot


async def test_question_mark_types_in_the_prompt_and_opens_help_elsewhere(
        tui, app_messages) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=(80, 24)) as pilot:
        screen = tui.main(app)
        screen.prompt_box.focus()
        await pilot.press("w", "h", "y", "question_mark")
        assert screen.prompt_box.value == "why?"
        assert not isinstance(app.screen, HelpScreen)
        screen.output_pane.focus()
        await pilot.press("question_mark")
        await tui.wait_screen(pilot, HelpScreen, what="help from the output pane")
        # The footer says it: F1/? for help.
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: app.screen is screen, what="back")
        keys = {b.binding.action: b for b in app.active_bindings.values()}
        assert keys["help"].binding.key_display == "F1/?"
        assert "outside a text box" in (keys["help"].binding.tooltip or "")


@pytest.mark.parametrize("size", SIZES)
async def test_one_tab_from_the_prompt_to_the_output_with_a_heavy_focus_mark(
        tui, app_messages, size) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=size) as pilot:
        await tui.type_prompt(pilot, "count words")
        await tui.wait_approval(pilot)
        await pilot.press("s")  # stop: code shown, nothing waits
        await tui.wait_idle(pilot)
        screen = tui.main(app)
        screen.prompt_box.focus()
        await pilot.press("tab")
        await tui.wait_for(pilot, lambda: screen.output_pane.has_focus, what="output focused")
        await pilot.pause()
        assert screen.output_pane.styles.border.top[0] == "heavy"
        assert screen.code_pane.styles.border.top[0] != "heavy"
        # On round the panes from there, each showing the mark in its turn.
        seen = set()
        for _ in range(8):
            await pilot.press("tab")
            await pilot.pause()
            for pane in (screen.code_pane, screen.conversation, screen.history_pane):
                if pane.has_focus_within and pane.display:
                    assert pane.styles.border.top[0] == "heavy", pane
                    seen.add(pane.id)
        assert "code" in seen, seen


async def test_f4_after_resuming_a_session_shows_the_version_before(tui, app_messages) -> None:
    app = tui.make_app(tui.ws, review_feedback=False)
    async with tui.running(app, app_messages, size=(120, 40)) as pilot:
        screen = tui.main(app)
        await pilot.press("ctrl+o")  # both versions run unasked
        await tui.type_prompt(pilot, "count words")
        await tui.wait_idle(pilot, timeout=60)
        assert screen.status_bar.verdict == "PASSED"
        await pilot.press("ctrl+n")
        await tui.wait_for(pilot, lambda: not screen.code_pane.files, what="cleared")
        history = screen.history_pane
        history.focus()
        history.move_cursor(history.root.children[0])
        await pilot.press("r")
        await tui.wait_for(pilot, lambda: screen.code_pane.files, what="the session's code")
        await pilot.press("f4")
        code = screen.code_pane
        await tui.wait_for(pilot, lambda: code.mode == "diff" and code.query("#code-diff"),
                           what="the diff")
        shown = "\n".join(str(w.render()) for w in code.query("#code-diff Static"))
        assert "count_words_1.py" in shown and "count_words_2.py" in shown, shown
        assert "no previous version" not in shown.lower()


async def test_the_status_bar_follows_the_loop_and_forgets_after_a_new_chat(
        tui, app_messages) -> None:
    app = tui.make_app(tui.ws, review_feedback=True)
    async with tui.running(app, app_messages, size=(80, 24)) as pilot:
        screen = tui.main(app)
        phases: list[str] = []
        status = screen.status_bar
        status.watch(status, "phase", lambda p: phases.append(p), init=False)
        await tui.type_prompt(pilot, "count words")
        await tui.wait_approval(pilot)
        assert "approve?" in bar(app) and "review on" in bar(app), bar(app)
        await pilot.press("a")
        await tui.wait_feedback(pilot)
        assert "FAILED" in bar(app) and "review fb" in bar(app), bar(app)
        assert "running" in phases
        await pilot.press("ctrl+s")
        await tui.wait_approval(pilot, attempt=2)
        shown = bar(app)  # at 80 columns every field but the mode, whole
        assert "try 2/4 │ approve? │ FAILED │ auto off │ review on" in shown, shown
        await pilot.press("a")
        await tui.wait_idle(pilot, timeout=60)
        assert "PASSED" in bar(app) and "approve?" not in bar(app), bar(app)
        await pilot.press("ctrl+n")
        await tui.wait_for(pilot, lambda: "try" not in bar(app), what="try cleared")
        assert "PASSED" not in bar(app)
    # 120x40: the long forms, and what Ctrl+O then F3 changed, said in full.
    app = tui.make_app(tui.ws, review_feedback=True)
    async with tui.running(app, app_messages, size=(120, 40)) as pilot:
        assert "auto-accept off" in bar(app) and "review feedback on" in bar(app), bar(app)
        await pilot.press("ctrl+o")
        await tui.wait_for(pilot, lambda: "auto-accept on" in bar(app), what="auto on")
        assert "feedback unreviewed" in bar(app), bar(app)
        await pilot.press("f3")
        await tui.wait_for(pilot, lambda: "review feedback off" in bar(app), what="F3")
        assert "auto-accept on" in bar(app), bar(app)
        await tui.wait_for(pilot, lambda: "Feedback review off: feedback goes back to the "
                           "LLM directly (auto-accept stays on)." in said(app_messages),
                           what="F3's notice, saying both")


async def test_f8_clears_the_attempt_shown(tui, app_messages) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=(80, 24)) as pilot:
        await tui.type_prompt(pilot, "count words")
        await tui.wait_approval(pilot)
        await pilot.press("s")
        await tui.wait_idle(pilot)
        assert "try 1/4" in bar(app) and "STOPPED" in bar(app), bar(app)
        await pilot.press("f8")  # on to chatgpt (configured by default), not started
        await tui.wait_for(pilot, lambda: "chatgpt" in bar(app), what="the switch")
        assert "try" not in bar(app) and "STOPPED" not in bar(app), bar(app)


async def test_the_inline_editor_takes_the_pane_at_80x24(tui, app_messages) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=(80, 24)) as pilot:
        await tui.type_prompt(pilot, "count words")
        await tui.wait_approval(pilot)
        await pilot.press("e")
        code = tui.main(app).code_pane
        editor = await tui.wait_for(pilot, lambda: code.query(".code-editor"), what="editor")
        await pilot.pause()
        area = editor.first(TextArea)
        assert not tui.main(app).output_pane.display, "the output steps aside"
        # Everything of the pane but its border and the file tabs: the code's lines.
        assert area.size.height >= code.size.height - 2, (area.size, code.size)
        assert area.size.height >= 10, area.size
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: tui.main(app).output_pane.display,
                           what="the output back")
        assert isinstance(code, CodePane) and code.mode != "edit"


async def test_the_palette_names_the_llm_switch_as_it_names_the_target_switch(tui) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app) as pilot:
        provider = VerifyBotCommands(app.screen)
        titles = [title for title, _, _ in provider._commands()]
        assert "Switch to the next target  (Ctrl+T)" in titles, titles
        assert "Switch to the next LLM  (F8)" in titles, titles
        await pilot.pause()
