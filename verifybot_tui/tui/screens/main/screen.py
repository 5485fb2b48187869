"""The main screen: the panes (layout.py) driven as the CLI drives the loop.

What the panes are and how they fit any size is MainLayout's, the base of this
class; here is what they do: the LLM and target workers, the prompt box, the
history pane and the keys. The parts that hold their own state are composed in:
the loop's (LoopController: its worker, its events, the decisions it waits for),
the target's (TargetSwitcher) and the LLM's (LLMSwitcher). Workers only post
messages; the ``@on`` handlers here own every widget change and hand each to its
part. What the keys depend on is reactive state: keys are greyed out by
``check_action``, and the backends report their state changes through a callback
(no polling).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual import on, work
from textual.binding import BindingType
from textual.containers import Vertical
from textual.reactive import var
from textual.widgets import Input, TextArea
from textual.worker import Worker, WorkerState

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.base.errors import VerifyBotError
from verifybot_tui.core.loop.events import ApprovalNeeded, FeedbackReady, dispatch
from verifybot_tui.core.settings.trust import RefusedFile
from verifybot_tui.tui.keys import APPROVAL_BINDINGS, MAIN_BINDINGS
from verifybot_tui.tui.messages import (
    BackendState,
    FileEdited,
    LLMReady,
    LoopEnded,
    LoopEvent,
    TargetReady,
)
from verifybot_tui.tui.screens.main.layout import MainLayout
from verifybot_tui.tui.screens.main.llm_switch import LLMSwitcher, llm_label
from verifybot_tui.tui.screens.main.loop_controller import LoopController
from verifybot_tui.tui.screens.main.targets import TargetSwitcher
from verifybot_tui.tui.session import AppSession
from verifybot_tui.tui.widgets.approval import ApprovalBar
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.feedback import FeedbackBar
from verifybot_tui.tui.widgets.history import HistoryPane
from verifybot_tui.tui.widgets.prompt import PromptBox

if TYPE_CHECKING:
    from pathlib import Path


class MainScreen(MainLayout):
    BINDINGS: ClassVar[list[BindingType]] = [*MAIN_BINDINGS, *APPROVAL_BINDINGS]
    AUTO_FOCUS = "#prompt"

    # The state the keys depend on, kept once, here (what the status bar shows is
    # MainLayout's).
    running: var[bool] = var(False, bindings=True)  # a prompt's loop has not ended yet
    last_prompt: var[str | None] = var(None, bindings=True)

    def __init__(self, session: AppSession) -> None:
        super().__init__()
        self.session = session
        self.controller = LoopController(self)
        self.target_switch = TargetSwitcher(self)
        self.llm_switch = LLMSwitcher(self)
        self.new_chat_next = True
        self.resume_id: int | None = None
        self.set_reactive(MainScreen.target, session.target_name)
        self.set_reactive(MainScreen.auto_accept, session.auto_accept)
        self.set_reactive(MainScreen.review_feedback, session.review_feedback)
        session.on_backend_state = self._report_backend_state

    def _report_backend_state(self, kind: str, name: str, state: str) -> None:
        """The backends' callback (it may come from any of their tasks): a message."""
        self.post_message(BackendState(kind, name, state))

    # The loop controller's state, read by the tests and the command palette.
    @property
    def pending_approval(self) -> ApprovalNeeded | None:
        return self.controller.pending_approval

    @property
    def pending_feedback(self) -> FeedbackReady | None:
        return self.controller.pending_feedback

    @property
    def saved_paths(self) -> dict[str, Path]:
        return self.controller.saved_paths

    def show_criteria(self) -> None:
        """The session's criteria beside the code: the code pane's bottom border."""
        v = self.session.verification
        parts = [c.text for c in v.criteria]
        if v.judge != "off":
            parts.append(f"judge: {v.judge}")
        text = "; ".join(parts)
        if len(text) > 90:
            text = text[:89] + "…"
        self.code_pane.border_subtitle = f"criteria: {text}" if text else ""

    def on_mount(self) -> None:
        self.conversation.border_title = "Conversation"
        self.code_pane.border_title = "Code"
        self.output_pane.border_title = "Output"
        self.history_pane.border_title = "History (F2)"
        self.show_criteria()
        status = self.status_bar
        status.llm = llm_label(self.session.llm_spec)
        status.max_attempts = 1 + self.session.config.run.max_retries
        early = getattr(self.app, "early_notices", [])
        while early:  # said before this screen was up (a refused key setting, a theme)
            self.notice_line.add(early.pop(0))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Stop only while something runs; retry only when idle with a prompt to retry;
        the approval keys while a version waits, from any pane but a text box."""
        if action == "approve":
            if self.pending_approval is None or not self.approval_bar.shown:
                return False
            return not isinstance(self.focused, Input | TextArea)
        # Every other key acts or says why not; the footer leaves out those that do not
        # apply now (applies). Retry waits while a run goes on (its prompt is the run's).
        if action == "retry":
            return not self.running
        if action == "switch_llm":
            return not self.running and len(self.session.llm_names) > 1
        return True

    def applies(self, action: str) -> bool:
        """Whether a key does its work now (the footer shows only those); a key that
        does not still says why when pressed."""
        if action == "stop":
            return self.running
        if action == "retry":
            return bool(self.last_prompt)
        if action == "toggle_top":
            return self.narrow
        return True

    async def start_backends(self) -> None:
        """Called by the app once the first frame is shown: nothing that can wait
        may hold that frame back."""
        if not self.query(ApprovalBar):
            bar = ApprovalBar(id="approval")
            bar.compact = self.narrow or self.short
            await self.query_one("#bottom", Vertical).mount(
                bar, FeedbackBar(id="feedback"), before=self.prompt_box)
        self.controller.started.set()
        self.refresh_history()
        if not self.session.llm_spec.startswith("replay:"):
            self.conversation.loading = True  # a browser takes seconds
        self.start_llm()
        self.target_switch.show_sandbox(self.session.target_name)
        self.target_switch.connect(self.session.target_name)
        prompt = getattr(self.app, "initial_prompt", None)
        if prompt:
            self.prompt_box.value = ""
            self.submit(prompt)

    def prompt_hint(self) -> str:
        if self.resume_id is not None:
            return f"Follow-up for session #{self.resume_id} (resumes its conversation)"
        if self.new_chat_next:
            return "Ask for a program (Enter sends) — F1 help, ctrl+p commands"
        return "Follow up in this conversation, or ctrl+n for a new chat"

    # -- reactive state ----------------------------------------------------------------

    def watch_running(self, running: bool) -> None:
        self.conversation.waiting = running

    def watch_auto_accept(self, on: bool) -> None:
        self.session.set_auto_accept(on)
        if on and self.pending_approval is not None:  # the version already waiting too
            self.call_later(self.controller.approval_chosen, "accept", "")

    def watch_review_feedback(self, on: bool) -> None:
        self.session.set_review_feedback(on)

    @on(BackendState)
    def _backend_state(self, message: BackendState) -> None:
        """A backend's state changed (the callback the session registered)."""
        if message.kind == "llm":
            self.llm_state = message.state
            from verifybot_tui.llm.api_common import usage_text  # loaded with an API backend

            self.status_bar.usage = usage_text(self.session.llm)  # API tokens, after each answer
            # The site's page in use (chatgpt has two): a site change shows here first.
            self.status_bar.renderer = getattr(self.session.llm, "renderer", "")
        elif message.name == self.target and message.name != self.target_switch.switching:
            # A target being switched to shows "connecting" until it is probed and
            # current (TargetReady): "connected" must mean the next attempt runs there.
            self.target_state = message.state

    # -- workers (they post messages; they never touch widgets) -------------------------

    @work(group="llm", exclusive=True, exit_on_error=False)
    async def start_llm(self) -> None:
        try:
            await self.session.start_llm()
        except VerifyBotError as e:
            self.post_message(LLMReady(e))
            return
        self.post_message(LLMReady())

    @work(group="target", exclusive=True, exit_on_error=False)
    async def connect_target(self, name: str) -> None:
        try:
            await self.session.connect(name)
        except VerifyBotError as e:
            self.post_message(TargetReady(name, e))
            return
        self.post_message(TargetReady(name))

    @on(LLMReady)
    def _llm_ready(self, message: LLMReady) -> None:
        self.conversation.loading = False
        if message.error is not None:
            self.llm_switch.not_ready(message.error)

    @on(TargetReady)
    def _target_ready(self, message: TargetReady) -> None:
        self.target_switch.ready(message)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that crashed is a bug: say so and stay up."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            err = event.worker.error
            self.notify(f"{event.worker.name or event.worker.group}: {one_line(str(err))}",
                        severity="error", timeout=10, markup=False)
            if event.worker.group == "loop":
                self.running = False
                self.controller.close_decisions()

    # -- the loop (the controller does the work) -----------------------------------------

    @on(LoopEvent)
    async def _loop_event(self, message: LoopEvent) -> None:
        if self.app.return_code is not None:
            # Quitting: the panes are being taken down. An event the loop sent as it
            # stopped (its Finished) would be mounted into a pane already gone.
            return
        await dispatch(self.controller, message.event)

    @on(LoopEnded)
    async def _loop_ended(self, message: LoopEnded) -> None:
        self.running = False
        self.controller.close_decisions()
        if self.new_chat_next:  # ctrl+n during the run: the next chat starts clean
            self.clear_attempt()
        from verifybot_tui.tui.session import LLMNotReady

        if isinstance(message.error, LLMNotReady):  # nothing was sent: the prompt stays
            self.new_chat_next = True
            self.prompt_box.value = self.prompt_box.value or self.last_prompt or ""
            self.prompt_box.placeholder = self.prompt_hint()
            self.llm_switch.not_ready(message.error, kept=True)
        elif message.error is not None and not isinstance(message.error, RefusedFile):
            self.notify(f"The loop stopped on an error: {one_line(str(message.error))}",
                        severity="error", timeout=10, markup=False)

    @on(ApprovalBar.Chosen)
    async def _approval(self, message: ApprovalBar.Chosen) -> None:
        await self.controller.approval_chosen(message.action, message.note)

    @on(CodePane.EditEnded)
    def _edit_ended(self, message: CodePane.EditEnded) -> None:
        self.editing = False
        if self.pending_approval is not None:
            self.approval_bar.focus()
        if message.kept and message.widget.edits:
            self.notify("Edits kept: accept [a] runs the edited version.")

    @on(FeedbackBar.Chosen)
    def _feedback(self, message: FeedbackBar.Chosen) -> None:
        self.controller.answer_feedback(message.send, message.text)

    @on(FileEdited)
    async def _file_edited(self, message: FileEdited) -> None:
        await self.controller.file_edited(message.name, message.content)

    # -- prompts ------------------------------------------------------------------------

    @on(PromptBox.Submitted, "#prompt")
    def _prompt_submitted(self, event: PromptBox.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self.notify("The prompt is empty: type what the program should do, then Enter.",
                        severity="warning")
            return
        if self.submit(text):
            event.widget.value = ""

    def submit(self, text: str, *, new_chat: bool | None = None) -> bool:
        loop = self.session.loop
        if self.running or (loop is not None and loop.running):
            self.notify("A run is going on: wait for it, or stop it with ctrl+g.",
                        severity="warning")
            if self.pending_approval is not None:  # the run waits for an answer
                self.approval_bar.focus()
            elif self.pending_feedback is not None:
                self.feedback_bar.text_area.focus()
            return False
        new_chat = self.new_chat_next if new_chat is None else new_chat
        resume, self.resume_id = self.resume_id, None
        if new_chat and resume is None and not self.target_switch.chosen:
            self.target_switch.for_prompt(text)
        if new_chat and resume is None:
            self.run_worker(self._clear_panes(), group="ui")
        self.last_prompt = text
        self.new_chat_next = False
        self.prompt_box.placeholder = self.prompt_hint()
        self.status_bar.mode = f"resume #{resume}" if resume else (
            "new chat" if new_chat else "follow-up")
        self.running = True
        self.controller.drive(text, new_chat, resume)
        return True

    async def _clear_panes(self) -> None:
        await self.conversation.clear()
        self.llm_switch.guide_shown = ""
        await self.code_pane.show_files([])
        self.output_pane.clear()

    def prompt_ready(self) -> None:
        self.prompt_box.placeholder = self.prompt_hint()
        self.prompt_box.focus()

    # -- history ---------------------------------------------------------------------------

    def refresh_history(self) -> None:
        history = self.session.history
        sessions = history.sessions(limit=200)
        attempts = {s["id"]: history.attempts(s["id"]) for s in sessions[:50]}
        prompts = {s["id"]: history.prompts(s["id"]) for s in sessions[:50]}
        self.history_pane.show_sessions(sessions, attempts, prompts)
        self.history_pane.show_comparisons(history.comparisons(limit=50))

    @on(HistoryPane.Picked)
    def _history_picked(self, message: HistoryPane.Picked) -> None:
        row = message.row
        if row.attempt is None:
            return

        from verifybot_tui.tui.screens.attempt import AttemptScreen

        def done(result: int | None) -> None:
            if result is not None:
                self.resume(result)

        attempts = self.session.history.attempts(row.session["id"])
        self.app.push_screen(AttemptScreen(row.session, row.attempt, self.session.workspace,
                                           attempts), callback=done)

    @on(HistoryPane.ResumeRequested)
    def _history_resume(self, message: HistoryPane.ResumeRequested) -> None:
        self.resume(message.session["id"])

    def resume(self, session_id: int) -> None:
        self.resume_id = session_id
        self.history_overlay = False  # a narrow screen: the panes show the session now
        self.prompt_box.placeholder = self.prompt_hint()
        self.status_bar.mode = f"resume #{session_id}"
        self.prompt_box.focus()
        if not self.running:
            self.run_worker(self.show_session(session_id), group="ui", exclusive=True)
        self.notify(f"Type a follow-up: it goes to session #{session_id}'s conversation.")

    async def show_session(self, session_id: int) -> None:
        """The panes show a past session (resumed, or a race's winner)."""
        from verifybot_tui.tui.screens.main.resumed import show_session

        self.controller.last_shown = await show_session(self, session_id)

    # -- actions (keys) ------------------------------------------------------------------

    def action_switch_target(self) -> None:
        self.target_switch.switch_next()

    def action_toggle_auto_accept(self) -> None:
        self.auto_accept = not self.auto_accept
        review = ("; feedback goes unreviewed while it is on" if self.review_feedback
                  else "")
        self.notify(f"Auto-accept on: new versions run without asking{review}."
                    if self.auto_accept else "Auto-accept off: each version waits for you"
                    + ("; feedback is shown for review again." if self.review_feedback
                       else "."))

    def action_toggle_review_feedback(self) -> None:
        self.review_feedback = not self.review_feedback
        if not self.review_feedback:
            self.notify("Feedback review off: feedback goes back to the LLM directly"
                        + (" (auto-accept stays on)." if self.auto_accept else "."))
        elif self.auto_accept:
            self.notify("Feedback review on, but auto-accept is on too: feedback is sent "
                        "unreviewed until auto-accept is off.")
        else:
            self.notify("Feedback prompts are shown for editing before they are sent.")

    def action_new_chat(self) -> None:
        self.new_chat_next = True
        self.resume_id = None
        self.prompt_box.placeholder = self.prompt_hint()
        self.status_bar.mode = "new chat"
        if not self.running:  # a clean slate: nothing on screen belongs to the next chat
            self.clear_attempt()
            self.run_worker(self._clear_panes(), group="ui")
        else:
            self.notify("The next prompt opens a new chat; this run goes on until it ends "
                        "(ctrl+g stops it).")
        self.prompt_box.focus()

    def clear_attempt(self) -> None:
        """The status bar forgets the last attempt: its number and its verdict."""
        status = self.status_bar
        status.attempt = 0
        status.verdict = ""
        status.phase = ""

    def action_retry(self) -> None:
        if not self.last_prompt:
            self.notify(f"Nothing to retry yet: {self._key_of('retry')} sends the last prompt "
                        "again in a new chat, once a prompt has been sent.")
            return
        self.submit(self.last_prompt, new_chat=True)

    def action_stop(self) -> None:
        if not self.running:
            self.notify(f"Nothing is running: {self._key_of('stop')} stops a run (the "
                        "program and the loop) while one goes on.")
            return
        self.controller.stop()

    def action_toggle_history(self) -> None:
        history = self.history_pane
        if self.narrow:  # an overlay over the panes, Esc or F2 closes it
            self.history_overlay = not self.history_overlay
            if self.history_overlay:
                self._focus_history(history)
            else:
                self.action_focus_decision()
            return
        history.display = not history.display
        if history.display:
            self._focus_history(history)

    @staticmethod
    def _focus_history(history: HistoryPane) -> None:
        """Focus the history with a row under the cursor: the first Enter opens it."""
        history.focus()
        if history.cursor_line < 0 and history.root.children:
            history.cursor_line = 0

    async def action_toggle_diff(self) -> None:
        code = self.code_pane
        if not code.files:
            self.notify(f"No code yet: {self._key_of('toggle_diff')} shows what changed from "
                        "the previous version once the LLM has answered with code.")
            return
        if code.mode != "diff" and not code.previous and not code.edits:
            self.notify("This is the first version: there is no previous one to compare "
                        "with yet.")
        await code.toggle_diff()

    def action_focus_prompt(self) -> None:
        self.prompt_box.focus()

    def action_approve(self, action: str) -> None:
        """a, e, o, r, s from any pane: the approval bar does the rest."""
        getattr(self.approval_bar, f"action_{action}")()

    def action_focus_decision(self) -> None:
        """Esc: back to what waits for an answer, else to the prompt box."""
        self.history_overlay = False
        if self.pending_approval is not None and self.approval_bar.shown:
            self.approval_bar.focus()
        elif self.pending_feedback is not None and self.feedback_bar.shown:
            self.feedback_bar.text_area.focus()
        else:
            self.prompt_box.focus()

    def action_switch_llm(self) -> None:
        self.llm_switch.switch_next()
