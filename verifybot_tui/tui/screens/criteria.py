"""The criteria editor: the session's success criteria, one KIND:SPEC per line.

Reachable before and during a session (command palette): the loop holds the same
``Verification`` object, so criteria saved here apply from the next run on. Each
line is checked with the CLI's grammar; a bad line is named and nothing is saved.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Button, Label, TextArea

from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.core.verify.criterion import Criterion
from verifybot_tui.tui.screens.dialogs import FormDialog

HELP = ("One criterion per line: contains:TEXT, not:TEXT, regex:RE, regex-whole:RE, exit:N, "
        "range:RE:LO..HI, file:GLOB[:MINSIZE], no-stderr, duration:<=S, compiles-clean. "
        "Ctrl+S saves, Escape cancels.")


class CriteriaScreen(FormDialog[list[Criterion]]):
    BINDINGS = [*FormDialog.BINDINGS, Binding("ctrl+s", "submit", "Save", show=False)]
    FIELD = "#criteria-text"

    def __init__(self, current: list[Criterion]) -> None:
        super().__init__(classes="dialog")
        self.current = current

    def compose(self):
        with Vertical(id="dialog"):
            yield Label("Success criteria", id="dialog-title")
            yield Label(HELP, id="dialog-question", markup=False)
            yield TextArea("\n".join(c.text for c in self.current), id="criteria-text")
            yield from self.form_end("Save", "save")

    def read(self) -> list[Criterion]:
        lines = self.query_one("#criteria-text", TextArea).text.splitlines()
        return [crit.parse(line, f"line {i}") for i, line in enumerate(lines, 1)
                if line.strip()]

    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        self.action_submit()
