"""80x24 fits: the status bar's last fields, ^t and F1 in the footer, the help's Id column,
history rows that end in an ellipsis, and a row under the cursor after F2.

The app runs at 80x24 through the Pilot; what is checked is where each widget
really landed on the screen (its region), not what it was given.
"""

from __future__ import annotations

import pytest
from textual.widgets import DataTable
from textual.widgets._footer import FooterKey

from verifybot_tui.tui.screens.help import HelpScreen
from verifybot_tui.tui.widgets.history import HistoryPane
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]
SMALL = (80, 24)


async def test_footer_keeps_target_and_help_and_the_status_bar_its_last_field(
        tui, app_messages) -> None:
    app = tui.app_answering("print('x')", data={"targets": {"pi": {
        "kind": "ssh", "host": "127.0.0.1", "port": 1, "user": "pi"}}})
    async with tui.running(app, app_messages, size=SMALL) as pilot:
        await tui.type_prompt(pilot, "a long prompt that makes a slug")
        await tui.wait_approval(pilot)
        await pilot.pause()
        keys = {k.action: k for k in app.screen.query(FooterKey)}
        for action in ("switch_target", "app.quit", "help"):
            assert action in keys, sorted(keys)
            region = keys[action].region
            assert region.width > 0 and region.right <= SMALL[0], (action, region)
        bar = app.screen.query_one(StatusBar)
        shown = str(bar.render())
        # What waits for the user and the switches stay; how the next prompt goes
        # ("new chat": the prompt box says it too) gives way at 80 columns.
        assert "approve?" in shown and "auto off" in shown and "review on" in shown, shown
        assert len(shown.replace("[b]", "")) < 200


async def test_help_shows_its_id_column_and_readable_key_names(tui, app_messages) -> None:
    app = tui.app_answering("print('x')")
    async with tui.running(app, app_messages, size=SMALL) as pilot:
        await pilot.press("f1")
        help_screen = await tui.wait_screen(pilot, HelpScreen, what="help")
        table = help_screen.query_one("#help-table", DataTable)
        await tui.wait_for(pilot, lambda: table.row_count > 10, what="rows")
        widths = [c.get_render_width(table) for c in table.columns.values()]
        labels = [str(c.label) for c in table.columns.values()]
        assert labels == ["Key", "Id", "What it does"]
        assert sum(widths) <= table.region.width, (widths, table.region)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert ["F1 / ?", "help"] in [r[:2] for r in rows]
        assert not any("question_mark" in r[0] or "," in r[0] for r in rows)
        for key, what in (("/", "history.filter"), ("+", "history.wider"),
                          ("-", "history.narrower"), ("r", "history.resume")):
            assert [key, what] in [r[:2] for r in rows], what
        keys = {r[0] for r in rows}
        assert {"Shift+Enter / Ctrl+J", "Enter", "d"} <= keys, keys


async def test_history_rows_end_in_an_ellipsis_and_the_first_enter_after_f2_acts(
        tui, app_messages) -> None:
    app = tui.app_answering("print('x')")
    async with tui.running(app, app_messages, size=SMALL) as pilot:
        await tui.type_prompt(pilot, "count the words of a rather long sentence given here")
        await tui.wait_approval(pilot)
        await pilot.press("a")
        await tui.wait_idle(pilot)
        await pilot.press("f2")
        history = app.screen.query_one(HistoryPane)
        await tui.wait_for(pilot, lambda: history.has_focus and history.root.children,
                           what="history focused")
        assert history.cursor_line == 0  # a row is selected
        node = history.root.children[0]
        label = history.render_label(node, history.rich_style, history.rich_style)
        assert label.plain.endswith("…") and label.cell_len <= history.size.width, label
        await pilot.press("enter")
        await tui.wait_for(pilot, lambda: node.is_expanded, what="the first Enter to open it")
