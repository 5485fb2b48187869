"""The prompt box: a few lines of text, Enter sends, a pasted prompt keeps its lines.

A one-line Input kept only the first line of a paste, and prompts for
programs are often several lines (a spec, an error message, sample data). The
box is a TextArea that grows with its text up to a few rows; Enter sends it,
and a newline is shift+enter where the terminal reports it, ctrl+j everywhere
(a terminal sends ctrl+j for a bare line feed), so there is always a way.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.widgets import TextArea

from verifybot_tui.tui.widget_message import WidgetMessage

NEWLINE_KEYS = ("shift+enter", "ctrl+j")
MAX_ROWS = 6


class PromptBox(TextArea):
    """Enter sends (a Submitted message), the newline keys insert a line break."""

    DEFAULT_CSS = f"""
    PromptBox {{
        height: auto;
        min-height: 3;
        max-height: {MAX_ROWS + 2};
        border: tall $border-blurred;
        padding: 0 1;
        &:focus {{ border: tall $border; }}
    }}
    """

    @dataclass
    class Submitted(WidgetMessage["PromptBox"]):
        """The user pressed Enter: ``value`` is the whole text, every line of it."""

        value: str

    def __init__(self, *, placeholder: str = "", id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__("", id=id, classes=classes, soft_wrap=True, tab_behavior="focus",
                         show_line_numbers=False, placeholder=placeholder)

    @property
    def value(self) -> str:
        """The text (an Input's name for it, which callers and tests already use)."""
        return self.text

    @value.setter
    def value(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
            return
        if event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        await super()._on_key(event)
