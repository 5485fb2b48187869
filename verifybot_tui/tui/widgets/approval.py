"""The approval bar: accept, edit, edit in $EDITOR, reject (with a note) or stop.

Shown while the loop waits on an ApprovalNeeded future. The bar reports the
user's choice as a message; the screen turns it into a Decision, because only
the screen knows the code pane's edits.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.containers import Horizontal
from textual.content import Content
from textual.reactive import var
from textual.widgets import Button, Input, Label

from verifybot_tui.tui.widget_message import WidgetMessage


class ApprovalBar(Horizontal, can_focus=True):
    """Focused while shown. Its keys (a, e, o, r, s) are the main screen's priority
    bindings, so they work from every pane, not only while the bar has focus."""

    DEFAULT_CSS = """
    ApprovalBar {
        height: auto;
        padding: 0 1;
        background: $boost;
        border-top: tall $accent;
        display: none;
        &.-shown { display: block; }
        &:focus-within { border-top: tall $primary; }
        & > #approval-question { width: 1fr; padding: 1 1 0 0; }
        & Button { margin: 0 1 0 0; min-width: 10; }
        & > #reject-note { width: 1fr; display: none; }
        & > #approval-keys { display: none; color: $text-muted; padding: 0 0 0 1; }
        /* Narrow or short screens: one line, the keys instead of buttons. */
        &.-compact { border-top: none; }
        &.-compact Button { display: none; }
        &.-compact > #approval-question { padding: 0; width: auto; max-width: 60%; }
        &.-compact > #approval-keys { display: block; width: 1fr; }
        &.-compact.-noting > #approval-keys { display: none; }
        &.-noting > #reject-note { display: block; }
        &.-noting Button, &.-noting > #approval-question { display: none; }
    }
    """

    shown: var[bool] = var(False, toggle_class="-shown")
    noting: var[bool] = var(False, toggle_class="-noting")  # the reject note replaces the buttons
    compact: var[bool] = var(False, toggle_class="-compact")  # set by the screen's size

    @dataclass
    class Chosen(WidgetMessage["ApprovalBar"]):
        """The user's choice on the version shown; ``note`` goes with a reject."""

        action: str  # accept, edit, external_edit, reject, stop
        note: str = ""

    def compose(self):
        yield Label("", id="approval-question")
        yield Button("Accept \\[a]", id="approval-accept", variant="success")
        yield Button("Edit \\[e]", id="approval-edit", variant="primary")
        yield Button("$EDITOR \\[o]", id="approval-external_edit")
        yield Button("Reject \\[r]", id="approval-reject", variant="warning")
        yield Button("Stop \\[s]", id="approval-stop", variant="error")
        yield Label(self._keys_hint(), id="approval-keys")
        yield Input(placeholder="Why reject? (sent to the LLM; Enter sends, Esc goes back)",
                    id="reject-note")

    def _keys_hint(self) -> Content:
        """The compact bar's keys, each a link: a click does what its key does, as the
        buttons of the full bar do."""
        from verifybot_tui.tui.keys import APPROVAL_BINDINGS, effective_key

        keymap = getattr(self.app, "keymap", {})
        parts: list[Content | str] = []
        for b in APPROVAL_BINDINGS:
            if parts:
                parts.append("  ")
            parts.append(Content(f"{effective_key(b, keymap)} {b.description.lower()}")
                         .stylize(f"@click=screen.{b.action}"))
        return Content.assemble(*parts)

    def ask(self, question: str | Content) -> None:
        """``question`` is shown as it is: pass Content to style parts of it."""
        self.query_one("#approval-question", Label).update(
            question if isinstance(question, Content) else Content(question))
        self.noting = False
        self.shown = True
        self.focus()

    def hide(self) -> None:
        self.shown = self.noting = False
        self.note_box.value = ""

    @property
    def note_box(self) -> Input:
        return self.query_one("#reject-note", Input)

    @on(Button.Pressed)
    async def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        action = (event.button.id or "").removeprefix("approval-")
        await self.run_action(action)  # a coroutine: not awaited, a click did nothing

    def _choose(self, action: str, note: str = "") -> None:
        if self.shown:
            self.post_message(self.Chosen(self, action, note))

    def action_accept(self) -> None:
        self._choose("accept")

    def action_edit(self) -> None:
        self._choose("edit")

    def action_external_edit(self) -> None:
        self._choose("external_edit")

    def action_stop(self) -> None:
        self._choose("stop")

    def action_reject(self) -> None:
        self.noting = True
        self.note_box.focus()

    @on(Input.Submitted, "#reject-note")
    def _note(self, event: Input.Submitted) -> None:
        event.stop()
        self._choose("reject", event.value.strip())

    def key_escape(self) -> None:
        if self.noting:
            self.noting = False
            self.focus()
