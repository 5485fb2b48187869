"""Modal questions: yes/no (host key trust, installing packages), a secret, and the
base of the one-field forms (the criteria editor, the recipe opener).

These are how a target's Prompter and the loop's PermissionNeeded reach the
user; the answer comes back through ``dismiss`` to a future the asker awaits.
"""

from __future__ import annotations

from typing import TypeVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.tui.keys import PERMISSION_BINDINGS
from verifybot_tui.tui.widgets.notices import NoticeLine

T = TypeVar("T")


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
            yield NoticeLine(id="notices")
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


class FormDialog(ModalScreen[T | None]):
    """A dialog around one field: submitting reads it; a value that does not read
    (ConfigError) is shown in ``#dialog-error`` and the dialog stays, so nothing
    half-right is kept. Escape or Cancel returns None."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: list[BindingType] = [Binding("escape", "cancel", "Cancel", show=False)]
    FIELD = ""  # the selector of the field that has the focus first

    def on_mount(self) -> None:
        self.query_one(self.FIELD).focus()

    @staticmethod
    def form_end(submit: str, submit_id: str) -> ComposeResult:
        """The end of every form, under its fields: the line that says what does not read
        (``#dialog-error``), the notices, and the button that submits beside Cancel."""
        yield Static("", id="dialog-error", markup=False)
        yield NoticeLine(id="notices")
        with Horizontal(id="dialog-buttons"):
            yield Button(submit, id=submit_id, variant="success")
            yield Button("Cancel", id="cancel")

    def read(self) -> T:
        """The field's value as the caller wants it; ConfigError says what is wrong."""
        raise NotImplementedError

    def action_submit(self) -> None:
        try:
            value = self.read()
        except ConfigError as e:
            self.query_one("#dialog-error", Static).update(str(e))
            return
        self.dismiss(value)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class SecretScreen(FormDialog[str]):
    """A password prompt: the text never leaves this screen but through dismiss."""

    BINDINGS = [("escape", "cancel", "Cancel")]
    FIELD = "#secret"

    def __init__(self, question: str) -> None:
        super().__init__(classes="dialog")
        self.question = question

    def compose(self):
        with Vertical(id="dialog"):
            yield Label("Password needed", id="dialog-title")
            yield Label(self.question, id="dialog-question", markup=False)
            yield Input(password=True, id="secret")
            yield NoticeLine(id="notices")
            with Horizontal(id="dialog-buttons"):
                yield Button("OK", id="ok", variant="success")
                yield Button("Cancel \\[esc]", id="cancel")

    def read(self) -> str:
        return self.query_one("#secret", Input).value

    @on(Input.Submitted)
    @on(Button.Pressed, "#ok")
    def _ok(self) -> None:
        self.action_submit()
