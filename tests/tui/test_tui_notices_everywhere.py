"""Notices never cover content, on any screen (issue 40 item 2).

On the main screen notices had a line of their own; on help, the attempt detail, the
compare table and its cells, the race view and the dialogs they still came as Textual's
toasts at the top right, and at 80x24 covered the compare table's right columns and the
help's text. Each screen now has a notice line above its key line (a dialog: inside
itself), fed by the app's one routing; no toast is shown anywhere.

The real app under Pilot at 80x24, with Textual's notifications on (as in a real run:
``run_test`` turns them off unless asked), and real actions that notify where a screen
has one.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from test_tui_compare import setup_compare, start_compare
from test_tui_history import history_after, open_attempt
from test_tui_race import contenders
from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.screen import Screen

from verifybot_tui.tui.screens.compare import CompareForm
from verifybot_tui.tui.screens.compare_cell import CellScreen
from verifybot_tui.tui.screens.dialogs import ConfirmScreen
from verifybot_tui.tui.screens.help import HelpScreen
from verifybot_tui.tui.screens.race import RaceScreen
from verifybot_tui.tui.screens.recipe import RecipeScreen
from verifybot_tui.tui.widgets.notices import NoticeLine

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]

SIZE = (80, 24)
SIZES = [SIZE, (120, 40)]


@contextlib.asynccontextmanager
async def running(tui, app, size: tuple[int, int] = SIZE) -> AsyncIterator[Pilot]:
    """At ``size`` with Textual's notifications on: a toast, if one came, would show."""
    async with app.run_test(size=size, notifications=True) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted, what="main screen")
        yield pilot


async def notice_shown(tui, pilot: Pilot, screen: Screen, text: str,
                       content: str) -> NoticeLine:
    """``text`` is in ``screen``'s notice line, on screen, with no toast anywhere, and
    the line overlaps none of the widgets ``content`` selects (each of them shown)."""
    line = screen.query_one("#notices", NoticeLine)
    await tui.wait_for(pilot, lambda: text in line.text and line.display
                       and line.region.height > 0, what=f"{text!r} in the notice line")
    await pilot.pause()
    width, height = pilot.app.size
    assert 0 <= line.region.y and line.region.bottom <= height, line.region
    assert line.region.width > 0 and line.region.right <= width, line.region
    assert text in line.text
    app = pilot.app
    assert any(text in n.message for n in app._notifications)  # still Textual's notices
    for shown in app.screen_stack:  # no toast on this screen nor under it
        assert not shown.query("Toast"), (shown, list(shown.query("Toast")))
    widgets = list(screen.query(content))
    assert widgets, content
    for widget in widgets:
        assert widget.region.height > 0, (widget, widget.region)
        assert not line.region.overlaps(widget.region), (widget, widget.region, line.region)
    return line


@pytest.mark.parametrize("size", SIZES)
async def test_help_shows_a_notice_under_its_text(tui, size) -> None:
    app = tui.make_app(tui.ws)
    async with running(tui, app, size) as pilot:
        await pilot.press("f1")
        help_screen = await tui.wait_screen(pilot, HelpScreen, what="help")
        app.notify("Copied nothing: the help is read, not copied", severity="warning",
                   timeout=60)
        await notice_shown(tui, pilot, help_screen, "the help is read, not copied",
                           "#help-title, #help-table, #help-foot, Footer")
        assert "the help is read" not in tui.main(app).notice_line.text
        await pilot.press("escape")
        main = await tui.wait_for(pilot, lambda: app.screen is tui.main(app) and app.screen,
                                  what="back on the main screen")
        # what was said while help was open is not lost when it closes
        await notice_shown(tui, pilot, main, "the help is read, not copied",
                           "#conversation, #output, #prompt, #status")
        app.notify("back on the main screen")
        await notice_shown(tui, pilot, main, "back on the main screen",
                           "#conversation, #output, #prompt, #status")


async def test_compare_table_and_cell_show_notices_in_their_line(tui, tmp_path: Path) -> None:
    recipes, llms = setup_compare(tmp_path, 'import time\ntime.sleep(60)\nprint("DONE")')
    app = tui.make_app(tui.ws)
    async with running(tui, app) as pilot:
        screen = await start_compare(tui, pilot, recipes, llms, "2")
        table = screen.table
        team = screen.request.llms[0][0]
        await tui.wait_for(pilot, lambda: any(c.recipe == "sum" and c.llm == team
                                              for c in screen.finished),
                           timeout=120, what="sum x team_a finished")
        # Enter on the slow cell (still running): why not, in the line under the table
        table.cursor_coordinate = Coordinate(table.get_row_index("slow\x001"),
                                             table.get_column_index(team))
        await pilot.press("enter")
        await notice_shown(tui, pilot, screen, "not finished yet: nothing to open",
                           "#compare-title, #compare-table, #compare-status, #compare-keys")
        # Enter on the finished cell: its screen, and a notice there has its own line
        table.cursor_coordinate = Coordinate(table.get_row_index("sum\x001"),
                                             table.get_column_index(team))
        await pilot.press("enter")
        cell = await tui.wait_screen(pilot, CellScreen, what="the cell's screen")
        app.notify("Copied the transcript (12 lines).")
        await notice_shown(tui, pilot, cell, "Copied the transcript",
                           "#cell-title, #cell-message, #cell-tabs, #cell-keys")
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: app.screen is screen, what="back to the table")
        await pilot.press("escape")  # stop the slow cell
        await tui.wait_for(pilot, lambda: not screen.running, timeout=60,
                           what="the compare stopped")


async def test_race_says_who_won_in_its_line(tui, tmp_path: Path) -> None:
    slow, fast = contenders(tmp_path)
    app = tui.make_app(tui.ws)
    app.initial_race = ("print RESULT=42", f"{slow},{fast}")
    async with running(tui, app) as pilot:
        screen = await tui.wait_screen(pilot, RaceScreen, what="the race view")
        await tui.wait_for(pilot, lambda: not screen.running, timeout=120,
                           what="the race to end")
        # the race's own notice at its end (a toast covered the table's last columns)
        await notice_shown(tui, pilot, screen, "won (PASSED",
                           "#race-title, #race-table, #race-status, #race-keys")


@pytest.mark.parametrize("size", SIZES)
async def test_history_detail_shows_a_notice_above_its_footer(tui, size) -> None:
    app = tui.app_answering("print(1 + 1)", data={"run": {"auto_accept": True}},
                            review_feedback=False)
    async with running(tui, app, size) as pilot:
        pane = await history_after(tui, pilot, "add one")
        detail = await open_attempt(tui, pilot, pane, 1)
        app.notify("Nothing to resume: this session is the one shown", severity="warning")
        await notice_shown(tui, pilot, detail, "Nothing to resume",
                           "#attempt-title, #attempt-verdict, #attempt-tabs, "
                           "#attempt-buttons, Footer")


@pytest.mark.parametrize("size", SIZES)
async def test_dialogs_show_a_notice_inside_themselves(tui, size) -> None:
    app = tui.make_app(tui.ws)
    async with running(tui, app, size) as pilot:
        answers: list[bool | None] = []
        app.push_screen(ConfirmScreen("Trust this host key?", "Question"), answers.append)
        confirm = await tui.wait_screen(pilot, ConfirmScreen, what="the question")
        app.notify("The host answered: key fingerprint SHA256:abc", title="SSH", timeout=60)
        line = await notice_shown(tui, pilot, confirm, "key fingerprint",
                                  "#dialog-title, #dialog-question, #dialog-buttons")
        dialog = confirm.query_one("#dialog")
        assert dialog.region.contains_region(line.region)
        # the line under the dialog (the main screen's) stays empty: one place per notice
        assert "key fingerprint" not in tui.main(app).notice_line.text
        await pilot.press("n")
        await tui.wait_for(pilot, lambda: answers == [False], what="the answer")
        await tui.wait_for(pilot, lambda: "key fingerprint" in tui.main(app).notice_line.text,
                           what="the dialog's notice carried to the main screen, not lost")
        # a form dialog: a wrong path in its error line, a notice in its notice line
        app.push_screen(RecipeScreen())
        recipe = await tui.wait_screen(pilot, RecipeScreen, what="the recipe dialog")
        await pilot.press(*"nowhere.toml", "enter")
        await tui.wait_for(pilot, lambda: str(recipe.query_one("#dialog-error").render()),
                           what="the path's error")
        app.notify("Recipes live in examples/ (rocket.toml)")
        await notice_shown(tui, pilot, recipe, "Recipes live in examples/",
                           "#dialog-title, #dialog-question, #recipe-path, #dialog-error, "
                           "#dialog-buttons")


async def test_the_compare_form_keeps_its_buttons_under_many_notices(tui) -> None:
    """The compare form fills 80x24: three notices at once (one wrapping) take at most
    three rows of it, the newest first, and its fields and buttons stay on screen."""
    app = tui.make_app(tui.ws)
    async with running(tui, app) as pilot:
        app.push_screen(CompareForm(app.config, ""))
        form = await tui.wait_screen(pilot, CompareForm, what="the compare form")
        app.notify("Session finished: PASSED: the program exited with status 0")
        app.notify("A notice long enough to wrap in the dialog: " + "word " * 20)
        app.notify("The newest notice")
        line = await notice_shown(tui, pilot, form, "The newest notice",
                                  "#dialog-title, #compare-recipes, #compare-llms, "
                                  "#compare-numbers, #dialog-buttons")
        assert line.region.height == 3
        assert line.text.count("\n") == 2  # all three kept, the oldest cut off the view
        for widget in form.query("#dialog-buttons Button"):
            assert widget.region.bottom <= SIZE[1], widget.region
