"""Modal questions: yes/no (host key trust, installing packages) and a secret.

These are how a target's Prompter and the loop's PermissionNeeded reach the
user; the answer comes back through ``dismiss`` to a future the asker awaits.
"""

from __future__ import annotations

from textual import on
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label

from verifybot_tui.tui.keys import PERMISSION_BINDINGS


class ConfirmScreen(ModalScreen[bool]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS = PERMISSION_BINDINGS

    def __init__(self, question: str, title: str = "Question") -> None:
        super().__init__(classes="dialog")
        self.question = question
        self.title_text = title

    def compose(self):
        with Vertical(id="dialog"):
            yield Label(self.title_text, id="dialog-title")
            yield Label(self.question, id="dialog-question", markup=False)
            with Horizontal(id="dialog-buttons"):
                yield Button("Yes \\[y]", id="yes", variant="success")
                yield Button("No \\[n]", id="no", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class SecretScreen(ModalScreen[str | None]):
    """A password prompt: the text never leaves this screen but through dismiss."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS = [("escape", "cancel", "Cancel")]

    def __init__(self, question: str) -> None:
        super().__init__(classes="dialog")
        self.question = question

    def compose(self):
        with Vertical(id="dialog"):
            yield Label("Password needed", id="dialog-title")
            yield Label(self.question, id="dialog-question", markup=False)
            yield Input(password=True, id="secret")
            with Horizontal(id="dialog-buttons"):
                yield Button("OK", id="ok", variant="success")
                yield Button("Cancel \\[esc]", id="cancel")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        self.dismiss(self.query_one(Input).value)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
