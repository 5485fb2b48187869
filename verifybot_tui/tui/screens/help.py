"""The help screen: every key, as remapped by the user's [ui.keys]."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Label

from verifybot_tui.tui.keys import help_rows, readable_key
from verifybot_tui.tui.widgets.notices import NoticeLine


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [("escape,f1,q,question_mark", "dismiss", "Close"),
                # The table is read, not picked from: every reading key scrolls it.
                Binding("end,ctrl+end", "scroll('end')", "End", show=False, priority=True),
                Binding("home,ctrl+home", "scroll('home')", "Top", show=False, priority=True)]

    def __init__(self, keymap: dict[str, str]) -> None:
        super().__init__()
        self.keymap = keymap

    def compose(self):
        with Vertical(id="help"):
            yield Label("Keys — remap any of them in [ui.keys] of the config: id = \"key\"",
                        id="help-title", markup=False)
            # No cursor: Down and Up scroll line by line from the first press (a row
            # cursor first walked down the rows already shown, and nothing moved).
            table: DataTable = DataTable(id="help-table", cursor_type="none",
                                         zebra_stripes=True)
            yield table
            yield Label("Esc closes this; Down, PageDown and End scroll. ctrl+p opens the "
                        "command palette. ? opens this outside a text box (in the prompt it "
                        "types a ?); F1 opens it anywhere.", id="help-foot")
            yield NoticeLine(id="notices")
        yield Footer()

    def fill(self, width: int) -> None:
        """Each pane's keys under its name, the Id (what [ui.keys] remaps) before the
        text, and the text wrapped to what is left of ``width``: at 80 columns every
        column shows, a key on two or three lines."""
        table = self.query_one("#help-table", DataTable)
        table.clear(columns=True)
        key_w, id_w = 16, 22
        room = max(20, width - key_w - id_w - 3 * 2 - 2)  # cell padding, scrollbar
        table.add_column("Key", width=key_w)
        table.add_column("Id", width=id_w)
        table.add_column("What it does", width=room)
        section = ""
        for where, key, what, binding_id in help_rows(self.keymap):
            if where != section:
                section = where
                table.add_row(Text(where, style="bold"), Text(""), Text(""))
            # Text, not str: a DataTable reads str cells as markup, and "[ui] theme"
            # in a tooltip would vanish.
            table.add_row(Text(readable_key(key)), Text(binding_id), Text(what), height=None)

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < 110, "-narrow")
        box = 1.0 if self.app.size.width < 110 else 0.9
        self.fill(int(self.app.size.width * box) - 4)  # #help's width, before layout
        self.query_one(DataTable).focus()

    def action_scroll(self, where: str) -> None:
        table = self.query_one("#help-table", DataTable)
        if where == "end":
            table.scroll_end(animate=False)
        else:
            table.scroll_home(animate=False)

    def on_resize(self) -> None:
        self.set_class(self.app.size.width < 110, "-narrow")
        box = self.query_one("#help")
        self.fill(box.content_size.width or self.app.size.width - 4)
