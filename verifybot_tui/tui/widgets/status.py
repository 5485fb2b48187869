"""The status bar: target and its connection, the LLM's state, the attempt count.

Its fields are data-bound to the main screen's reactive state, which the
backends keep current through their ``on_state`` callback (a browser crash or
an SSH drop shows at once, with no polling).
"""

from __future__ import annotations

from textual.markup import escape
from textual.reactive import reactive
from textual.widgets import Static

TARGET_MARKS = {"connected": "●", "connecting": "◌", "error": "✘", "disconnected": "○"}
LLM_LABELS = {"stopped": "not started", "starting": "starting…", "logged_out": "logged out",
              "idle": "idle", "streaming": "streaming…", "error": "error",
              "waiting": "rate-limited, waiting…", "thinking": "thinking…",
              "sent": "sent, waiting for the answer…",  # an API request, no byte back yet
              # An API provider checked after F8 (llm.api_check states), before it starts.
              "checking": "checking connection…", "ok": "OK, not started",
              "model_missing": "model missing", "key_refused": "key refused",
              "unreachable": "unreachable", "no_key": "no API key",
              "no_display": "no display"}
CHECK_FAILED = ("model_missing", "key_refused", "unreachable", "no_key")


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar {
        dock: top;
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text;
    }
    """

    target = reactive("local")
    target_state = reactive("disconnected")
    llm = reactive("")
    llm_state = reactive("stopped")
    attempt = reactive(0)
    max_attempts = reactive(0)
    auto_accept = reactive(False)
    review_feedback = reactive(False)
    mode = reactive("")  # "new chat", "follow-up", "resume #n"
    usage = reactive("")  # an API backend's tokens (and cost) this session; "" for a browser
    renderer = reactive("")  # the chat page's layout a browser backend reads (a site renderer)
    sandbox = reactive("")  # "no sandbox" / "sandbox off": answers run with the user's powers
    phase = reactive("")  # what the loop waits for: "approval", "feedback", "running", ""
    verdict = reactive("")  # the last attempt's verdict ("PASSED", "FAILED", ...); "" none yet

    def render(self) -> str:
        """Every field, in short forms when the full ones do not fit the bar's width
        (80 columns: the last fields stay), the LLM's name cut with an ellipsis last."""
        width = self.content_size.width
        parts = self._parts(short=False)
        if not width or _cells(parts) <= width:
            return " │ ".join(parts)
        parts = self._parts(short=True)
        over = _cells(parts) - width
        if over > 0 and self.mode:  # how the next prompt goes: the prompt box says it too
            parts = [p for p in parts if p != self.mode]
            over = _cells(parts) - width
        if over > 0:
            parts = self._parts(short=True, name_cells=max(8, len(self.llm) - over))
            parts = [p for p in parts if p != self.mode] if self.mode else parts
        return " │ ".join(parts)

    def _parts(self, short: bool, name_cells: int = 0) -> list[str]:
        t_mark = TARGET_MARKS.get(self.target_state, "?")
        t_colour = {"connected": "$success", "error": "$error"}.get(self.target_state,
                                                                     "$warning")
        l_colour = {"idle": "$success", "ok": "$success", "error": "$error",
                    "logged_out": "$error", "no_display": "$warning", "streaming": "$accent",
                    "sent": "$accent",
                    **dict.fromkeys(CHECK_FAILED, "$error")}.get(self.llm_state, "$text-muted")
        llm = self.llm if not name_cells or len(self.llm) <= name_cells else (
            self.llm[:name_cells - 1] + "…")
        state = LLM_LABELS.get(self.llm_state, self.llm_state)
        if short:  # the mark says the target's state; "connected" goes without saying
            parts = [f"[{t_colour}]{t_mark}[/] [b]{escape(self.target)}[/]"
                     + ("" if self.target_state == "connected" else f": {self.target_state}")
                     + (f" [$warning]({self.sandbox})[/]" if self.sandbox else ""),
                     f"[b]{escape(llm)}[/]"
                     # idle goes without saying while the loop waits for the user or runs
                     + ("" if self.phase and self.llm_state == "idle"
                        else f": [{l_colour}]{escape(state)}[/]")
                     + (f" ({escape(self.usage)})" if self.usage else "")]
        else:
            parts = [
                f"[{t_colour}]{t_mark}[/] target [b]{escape(self.target)}[/]: "
                f"{self.target_state}"
                + (f" [$warning]({self.sandbox})[/]" if self.sandbox else ""),
                f"LLM [b]{escape(llm)}[/]"
                + (f" ({escape(self.renderer)} page)" if self.renderer else "") + ": "
                f"[{l_colour}]{escape(state)}[/]"
                + (f" ({escape(self.usage)})" if self.usage else ""),
            ]
        if self.attempt:
            parts.append(f"try {self.attempt}/{self.max_attempts}" if short
                         else f"attempt {self.attempt} of {self.max_attempts}")
        if self.phase:
            parts.append(_phase(self.phase, short))
        if self.verdict:
            parts.append(_verdict(self.verdict))
        auto = "auto" if short else "auto-accept"
        parts.append(f"{auto} [b]on[/]" if self.auto_accept else f"{auto} off")
        review = "review" if short else "review feedback"
        if not self.review_feedback:
            parts.append(f"{review} off")
        elif self.auto_accept:  # feedback then goes unreviewed, whatever F3 says
            parts.append("feedback unreviewed (auto)" if not short else "review skipped")
        else:
            parts.append(f"{review} on")
        if self.mode:
            parts.append(self.mode)
        return parts


PHASES = {"approval": ("[b $warning]approve?[/]", "[b $warning]waiting for approval[/]"),
          "feedback": ("[b $warning]review fb[/]", "[b $warning]feedback to review[/]"),
          "running": ("[$accent]running[/]", "[$accent]running[/]")}


def _phase(phase: str, short: bool) -> str:
    """The loop's step as the bar shows it."""
    return PHASES[phase][0 if short else 1] if phase in PHASES else escape(phase)


def _verdict(verdict: str) -> str:
    colour = "$success" if verdict in ("PASSED", "VERIFIED") else "$error"
    return f"[b {colour}]{escape(verdict)}[/]"


def _cells(parts: list[str]) -> int:
    """The cells the joined fields take on screen (markup left out)."""
    from textual.content import Content

    return Content.from_markup(" │ ".join(parts)).cell_length
