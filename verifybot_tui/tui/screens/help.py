"""The help screen: every key, as remapped by the user's [ui.keys]."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Label

from verifybot_tui.tui.keys import help_rows


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS = [("escape,f1,q,question_mark", "dismiss", "Close")]

    def __init__(self, keymap: dict[str, str]) -> None:
        super().__init__()
        self.keymap = keymap

    def compose(self):
        with Vertical(id="help"):
            yield Label("Keys — remap any of them in [ui.keys] of the config: id = \"key\"",
                        id="help-title", markup=False)
            table: DataTable = DataTable(id="help-table", cursor_type="row", zebra_stripes=True)
            table.add_columns("Where", "Key", "What it does", "Id")
            for where, key, what, binding_id in help_rows(self.keymap):
                # Text, not str: a DataTable reads str cells as markup, and "[ui] theme"
                # in a tooltip would vanish.
                table.add_row(*(Text(cell) for cell in (where, key, what, binding_id)))
            yield table
            yield Label("Esc closes this. ctrl+p opens the command palette.", id="help-foot")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
