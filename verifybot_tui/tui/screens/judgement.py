"""The user's word on a judgement: follow it, overrule it, or stop.

Shown for an unparsable judgement and a run held by a sanity check (someone must
decide), and for every judgement when runs are not auto-accepted, so a wrong
FAIL or PASS from the judge can be overruled: accept as verified, or send the
run back as a failure with a note for the LLM.
"""

from __future__ import annotations

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from verifybot_tui.core.base.ansi import visible
from verifybot_tui.core.loop.events import JudgeDecision
from verifybot_tui.core.verify.llm_judge import Judgement
from verifybot_tui.tui.widgets.notices import NoticeLine


class JudgementScreen(ModalScreen[JudgeDecision]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS = [
        Binding("v", "decide('accept')", "Accept as verified", show=False),
        Binding("f", "decide('fail')", "Send as failure", show=False),
        Binding("s", "decide('stop')", "Stop", show=False),
    ]

    def __init__(self, judgement: Judgement | None, reasons: str) -> None:
        super().__init__(classes="dialog")
        self.judgement = judgement
        self.reasons = reasons
        self.readable = judgement is not None and judgement.verdict != "UNPARSABLE"

    def compose(self):
        with Vertical(id="dialog"):
            yield Label("Judgement", id="dialog-title")
            yield Label(visible(self.reasons), id="dialog-question", markup=False)
            if self.judgement is not None and not self.readable:
                with VerticalScroll(id="judge-answer"):
                    yield Static(visible(self.judgement.answer), markup=False)
            yield Input(placeholder="a note for the LLM if you send it back as a failure",
                        id="judge-note")
            yield NoticeLine(id="notices")
            with Horizontal(id="dialog-buttons"):
                if self.readable:
                    yield Button("As the judge says", id="follow", variant="primary")
                yield Button("Verified \\[v]", id="accept", variant="success")
                yield Button("Failure \\[f]", id="fail", variant="warning")
                yield Button("Stop \\[s]", id="stop", variant="error")

    def on_mount(self) -> None:
        self.query_one("#follow" if self.readable else "#fail", Button).focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.action_decide(event.button.id or "fail")

    @on(Input.Submitted, "#judge-note")
    def _note(self) -> None:
        self.action_decide("fail")

    def action_decide(self, action: str) -> None:
        if self.query_one("#judge-note", Input).has_focus and action != "fail":
            return  # typing a note: letters are text, not choices
        note = self.query_one("#judge-note", Input).value.strip()
        self.dismiss(JudgeDecision(action, note=note if action == "fail" else ""))  # type: ignore[arg-type]
