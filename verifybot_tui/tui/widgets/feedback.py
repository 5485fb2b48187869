"""The feedback review bar: the prompt about to go back to the LLM, editable.

Only shown when the loop runs with review_feedback: the user sees exactly what
will be sent (program output included) and may trim or add to it first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual import on
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.widgets import Button, Label

from verifybot_tui.core.base.ansi import visible
from verifybot_tui.tui.keys import FEEDBACK_BINDINGS
from verifybot_tui.tui.widget_message import WidgetMessage

if TYPE_CHECKING:
    from textual.widgets import TextArea


class FeedbackBar(Vertical):
    BINDINGS = FEEDBACK_BINDINGS

    DEFAULT_CSS = """
    FeedbackBar {
        height: 16;
        padding: 0 1;
        background: $boost;
        border-top: tall $accent;
        display: none;
        &.-shown { display: block; }
        & > TextArea { height: 1fr; }
        & > Horizontal { height: auto; }
        & Button { margin: 0 1 0 0; }
    }
    """

    shown: var[bool] = var(False, toggle_class="-shown")

    @dataclass
    class Chosen(WidgetMessage["FeedbackBar"]):
        """Send (``text``, as edited) or keep the feedback to the user."""

        send: bool
        text: str = ""

    def compose(self):
        from textual.widgets import TextArea  # the bar is mounted after the first frame

        yield Label("Feedback for the LLM — edit it if you like, then send (ctrl+s)")
        yield TextArea("", id="feedback-text", soft_wrap=True)
        with Horizontal():
            yield Button("Send \\[ctrl+s]", id="feedback-send", variant="success")
            yield Button("Stop \\[ctrl+g]", id="feedback-stop", variant="error")

    @property
    def text_area(self) -> TextArea:
        """The feedback as the user edits it (the widget is imported with the bar)."""
        from textual.widgets import TextArea

        return self.query_one("#feedback-text", TextArea)

    def ask(self, prompt: str) -> None:
        area = self.text_area
        area.load_text(visible(prompt))  # it quotes program output: controls escaped
        self.shown = True
        area.focus()

    def hide(self) -> None:
        self.shown = False

    @on(Button.Pressed, "#feedback-send")
    def action_send(self) -> None:
        if self.shown:
            self.post_message(self.Chosen(self, True, self.text_area.text))

    @on(Button.Pressed, "#feedback-stop")
    def action_stop(self) -> None:
        if self.shown:
            self.post_message(self.Chosen(self, False))
