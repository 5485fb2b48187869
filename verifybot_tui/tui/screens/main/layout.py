"""The main screen's panes: what they are, the state they show, and how they fit any size.

The base of MainScreen (screen.py), which adds what the panes do. Here: the four
panes around the prompt, typed getters for them, Tab's order, the status bar bound
to the state it shows, and the layout's own state, set from the terminal's size:
below NARROW columns the history is an overlay and code and conversation share the
top; below SHORT rows the feedback review and the inline editor take rows from the
others. main.tcss beside this styles the classes that state toggles.
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget

from verifybot_tui.tui.keys import readable_key
from verifybot_tui.tui.output_buffer import OutputBuffer
from verifybot_tui.tui.query import Child
from verifybot_tui.tui.widgets.approval import ApprovalBar
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.conversation import ConversationPane
from verifybot_tui.tui.widgets.feedback import FeedbackBar
from verifybot_tui.tui.widgets.footer import FittingFooter
from verifybot_tui.tui.widgets.history import HistoryPane
from verifybot_tui.tui.widgets.notices import NoticeLine
from verifybot_tui.tui.widgets.output import OutputPane
from verifybot_tui.tui.widgets.prompt import PromptBox
from verifybot_tui.tui.widgets.status import StatusBar


class MainLayout(Screen[None]):
    CSS_PATH = "main.tcss"

    # The state the status bar shows, kept once, here.
    target: var[str] = var("")  # the target shown: the one being switched to, if any
    target_state: var[str] = var("disconnected")
    llm_state: var[str] = var("stopped")
    auto_accept: var[bool] = var(False)
    review_feedback: var[bool] = var(False)
    # The layout's state; each toggles the class of its name that main.tcss styles.
    narrow: var[bool] = var(False, toggle_class="-narrow", bindings=True)  # < NARROW columns
    short: var[bool] = var(False, toggle_class="-short")  # < SHORT rows
    wide: var[bool] = var(False, toggle_class="-wide")  # >= WIDE columns: a wider history
    history_overlay: var[bool] = var(False, toggle_class="-history-overlay")
    show_code: var[bool] = var(False)  # narrow: code has the top (_show_top_pane)
    reviewing: var[bool] = var(False)  # the feedback bar is open (_fit_review)
    editing: var[bool] = var(False)  # the inline editor is open (_fit_review)

    NARROW = 100  # columns: below this the history is an overlay and code/chat share
    SHORT = 32  # rows: below this the feedback review hides code/chat while it is open
    WIDE = 160  # columns: from this on the history pane takes 28% (whole entries)

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status").data_bind(
            MainLayout.target, MainLayout.target_state, MainLayout.llm_state,
            MainLayout.auto_accept, MainLayout.review_feedback)
        with Horizontal(id="body"):
            yield HistoryPane(id="history")
            with Vertical(id="work"):
                with Horizontal(id="top"):
                    yield ConversationPane(id="conversation")
                    yield CodePane(id="code")
                yield OutputPane(self.output_buffer, id="output")
        with Vertical(id="bottom"):  # the bars join it after the first frame
            yield PromptBox(placeholder=self.prompt_hint(), id="prompt")
            yield NoticeLine(id="notices")
        yield FittingFooter()

    def prompt_hint(self) -> str:
        """The prompt box's placeholder: what Enter does now (the screen knows)."""
        raise NotImplementedError

    # The panes, typed (each a query when read).
    status_bar = Child("#status", StatusBar)
    conversation = Child("#conversation", ConversationPane)
    code_pane = Child("#code", CodePane)
    output_pane = Child("#output", OutputPane)
    history_pane = Child("#history", HistoryPane)
    prompt_box = Child("#prompt", PromptBox)
    approval_bar = Child("#approval", ApprovalBar)
    feedback_bar = Child("#feedback", FeedbackBar)
    notice_line = Child("#notices", NoticeLine)

    @property
    def focus_chain(self) -> list[Widget]:
        """Tab's order: the prompt (and the bars above it), then the output pane, then the
        panes above in screen order. The output is where one looks after a run: from the
        prompt it is one Tab away, not one past every pane and code tab."""
        chain = super().focus_chain
        bottoms = self.query("#bottom")
        if not bottoms:
            return chain
        bottom = bottoms.first()
        first = [w for w in chain if w is bottom or bottom in w.ancestors]
        output = [w for w in chain if w.id == "output"]
        return first + output + [w for w in chain if w not in first and w not in output]

    @property
    def output_buffer(self) -> OutputBuffer:
        buffer: OutputBuffer = getattr(self.app, "output_buffer")  # noqa: B009 (App is generic)
        return buffer

    def _key_of(self, action: str) -> str:
        """The key bound to ``action`` as the help reads it, "Ctrl+R" (it may be remapped)."""
        for key, active in self.active_bindings.items():
            if active.binding.action == action:
                return readable_key(key)
        return action

    # -- the fit at any size -------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        self.narrow = event.size.width < self.NARROW
        self.wide = event.size.width >= self.WIDE
        self.short = event.size.height < self.SHORT
        for bar in self.query(ApprovalBar):
            bar.compact = self.narrow or self.short

    def watch_narrow(self) -> None:
        self.history_overlay = False  # the overlay belongs to the layout it was opened in
        self._show_top_pane()

    def show_top(self, which: str) -> None:
        """On a narrow screen, which of code and conversation has the space."""
        self.show_code = which == "code"

    def watch_show_code(self) -> None:
        self._show_top_pane()

    def watch_reviewing(self) -> None:
        self._fit_review()

    def watch_short(self) -> None:
        self._fit_review()

    def watch_editing(self) -> None:
        self._fit_review()

    def _fit_review(self) -> None:
        """While feedback is reviewed the output keeps 8 rows of text (10 with its
        border), and a short screen gives the top's rows to the review and the output.
        Set on the two widgets, not as a class of the screen (see _show_top_pane): the
        review opens and closes once an attempt."""
        if not self.is_mounted:
            return  # the watchers' first call: the panes start as this leaves them
        self.output_pane.styles.min_height = 10 if self.reviewing else None
        self.query_one("#top").display = not (self.short and self.reviewing)
        # The inline editor on a short screen: the output steps aside for it.
        self.output_pane.display = not (self.short and self.editing and not self.reviewing)

    def _show_top_pane(self) -> None:
        """Narrow, only the chosen one of code and conversation shows; wide, both.

        Set on the two panes, not as a class of the screen: a class of the screen
        restyles every widget under it, and this changes twice an attempt (code when
        it arrives, conversation at the next prompt), so a long conversation made
        each attempt slower; a pane's display only changes the layout."""
        if not self.is_mounted:
            return  # the watchers' first call: the panes start as this leaves them
        self.conversation.display = not self.narrow or not self.show_code
        self.code_pane.display = not self.narrow or self.show_code

    def action_toggle_top(self) -> None:
        if not self.narrow:
            self.notify(f"The code and the conversation both show at this width; "
                        f"{self._key_of('toggle_top')} switches between them below "
                        f"{self.NARROW} columns.")
            return
        self.show_top("conversation" if self.show_code else "code")
