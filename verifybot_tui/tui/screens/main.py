"""The main screen: four panes around the verify loop, driven as the CLI drives it.

The loop's part (its worker, its events, the decisions it waits for) is a
LoopController composed into this screen; the screen holds the layout, the LLM
and target workers, the prompt box, the history pane and the keys. Workers only
post messages; the ``@on`` handlers own every widget change. What the status bar
and the keys depend on is reactive state here: the bar is data-bound to it, keys
are greyed out by ``check_action``, and the backends report their state changes
through a callback (no polling).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea
from textual.worker import Worker, WorkerState

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.base.errors import VerifyBotError
from verifybot_tui.core.loop.events import ApprovalNeeded, FeedbackReady, dispatch
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.core.settings.trust import RefusedFile
from verifybot_tui.tui.keys import APPROVAL_BINDINGS, MAIN_BINDINGS, readable_key
from verifybot_tui.tui.messages import (
    BackendState,
    FileEdited,
    LLMReady,
    LoopEnded,
    LoopEvent,
    TargetReady,
)
from verifybot_tui.tui.output_buffer import OutputBuffer
from verifybot_tui.tui.query import Child
from verifybot_tui.tui.screens.loop_controller import LoopController
from verifybot_tui.tui.session import AppSession
from verifybot_tui.tui.widgets.approval import ApprovalBar
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.conversation import ConversationPane
from verifybot_tui.tui.widgets.feedback import FeedbackBar
from verifybot_tui.tui.widgets.footer import FittingFooter
from verifybot_tui.tui.widgets.history import HistoryPane
from verifybot_tui.tui.widgets.notices import NoticeLine
from verifybot_tui.tui.widgets.output import OutputPane
from verifybot_tui.tui.widgets.prompt import PromptBox
from verifybot_tui.tui.widgets.status import CHECK_FAILED, StatusBar

if TYPE_CHECKING:
    from verifybot_tui.llm.api_check import ProviderCheck  # imported by the check itself


class MainScreen(Screen[None]):
    CSS_PATH = "main.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [*MAIN_BINDINGS, *APPROVAL_BINDINGS]
    AUTO_FOCUS = "#prompt"

    # The state the status bar shows and the keys depend on, kept once, here.
    running: var[bool] = var(False, bindings=True)  # a prompt's loop has not ended yet
    last_prompt: var[str | None] = var(None, bindings=True)
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

    def __init__(self, session: AppSession) -> None:
        super().__init__()
        self.session = session
        self.controller = LoopController(self)
        self.new_chat_next = True
        self.resume_id: int | None = None
        self.switching: str | None = None  # a target being connected to, not yet current
        # the target the last switch could not reach: the next switch moves on past it
        self.unreachable: str | None = None
        self.last_llm_check: ProviderCheck | None = None  # F8's test of an API provider
        self.guide_shown = ""  # what to do about the LLM, as last put in the conversation
        # A target the user picked (--target, ctrl+t) is kept; the default one may give
        # way to the Pi when a prompt is about Pi hardware, as `verifybot run` does.
        self.target_chosen = session.target_name != session.config.run.default_target
        self.set_reactive(MainScreen.target, session.target_name)
        self.set_reactive(MainScreen.auto_accept, session.auto_accept)
        self.set_reactive(MainScreen.review_feedback, session.review_feedback)
        session.on_backend_state = self._report_backend_state

    def _report_backend_state(self, kind: str, name: str, state: str) -> None:
        """The backends' callback (it may come from any of their tasks): a message."""
        self.post_message(BackendState(kind, name, state))

    # -- layout and typed getters ----------------------------------------------------

    def compose(self) -> ComposeResult:
        yield StatusBar(id="status").data_bind(
            MainScreen.target, MainScreen.target_state, MainScreen.llm_state,
            MainScreen.auto_accept, MainScreen.review_feedback)
        with Horizontal(id="body"):
            yield HistoryPane(id="history")
            with Vertical(id="work"):
                with Horizontal(id="top"):
                    yield ConversationPane(id="conversation")
                    yield CodePane(id="code")
                yield OutputPane(self.output_buffer, id="output")
        with Vertical(id="bottom"):  # the bars join it after the first frame
            yield PromptBox(placeholder=self._prompt_hint(), id="prompt")
            yield NoticeLine(id="notices")
        yield FittingFooter()

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
        spec = self.session.llm_spec
        status = self.status_bar
        status.llm = f"replay:{Path(spec[7:]).name}" if spec.startswith("replay:") else spec
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
        self.show_sandbox(self.session.target_name)
        self.connect(self.session.target_name)
        prompt = getattr(self.app, "initial_prompt", None)
        if prompt:
            self.prompt_box.value = ""
            self.submit(prompt)

    def _prompt_hint(self) -> str:
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
        elif message.name == self.target and message.name != self.switching:
            # A target being switched to shows "connecting" until it is probed and
            # current (TargetReady): "connected" must mean the next attempt runs there.
            self.target_state = message.state

    def show_target(self, name: str) -> None:
        """The status bar follows this target: its name and its state now."""
        self.target = name
        target = self.session.targets.get(name)
        self.target_state = target.state if target is not None else "disconnected"
        self.show_sandbox(name)

    def show_sandbox(self, name: str) -> None:
        """The status bar says when what an answer brings would run unsandboxed there."""
        from verifybot_tui.targets.sandbox.bubblewrap import sandbox_label

        cfg = self.session.config.targets.get(name)
        self.status_bar.sandbox = sandbox_label(cfg.kind, cfg.sandbox) if cfg else ""
        from verifybot_tui.core.settings.config import sandbox_off_line

        told: set[str] = getattr(self, "_told_sandbox_off", set())
        if (off := sandbox_off_line(self.session.config, name)) and name not in told:
            self._told_sandbox_off = told | {name}  # once per target: the bar keeps saying it
            self.app.notify(off, title="sandbox off", severity="warning", timeout=20)

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
            self.prompt_box.placeholder = self._prompt_hint()
            self.llm_not_ready(message.error, kept=True)
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
        if new_chat and resume is None and not self.target_chosen:
            self._target_for(text)
        if new_chat and resume is None:
            self.run_worker(self._clear_panes(), group="ui")
        self.last_prompt = text
        self.new_chat_next = False
        self.prompt_box.placeholder = self._prompt_hint()
        self.status_bar.mode = f"resume #{resume}" if resume else (
            "new chat" if new_chat else "follow-up")
        self.running = True
        self.controller.drive(text, new_chat, resume)
        return True

    def _target_for(self, prompt: str) -> None:
        from verifybot_tui.targets import choose_target

        name, why = choose_target(self.session.config, prompt, None)
        if name != self.session.target_name and why:
            self.session.use_target(name)
            self.show_target(name)
            self.notify(f"{why[0].upper()}{why[1:]}. ctrl+t switches back.",
                        title=f"Running on {name}")
            self.connect(name)

    async def _clear_panes(self) -> None:
        await self.conversation.clear()
        self.guide_shown = ""
        await self.code_pane.show_files([])
        self.output_pane.clear()

    @on(LLMReady)
    def _llm_ready(self, message: LLMReady) -> None:
        self.conversation.loading = False
        if message.error is not None:
            self.llm_not_ready(message.error)

    def llm_not_ready(self, error: BaseException, kept: bool = False) -> None:
        """Why the LLM cannot answer, with the command that fixes it when known."""
        from verifybot_tui.tui.session import not_ready_notice

        llm = self.session.llm
        notice = not_ready_notice(self.session.config, self.session.llm_spec, error,
                                  llm.state if llm is not None else "", kept)
        if notice.state:
            self.llm_state = notice.state
        self.notify(notice.text, title=notice.title, severity=notice.severity,
                    timeout=notice.timeout)
        if notice.severity == "warning" and notice.text != self.guide_shown:
            # What to do stays in the conversation once the notice has gone (and whole,
            # however long its paths make it), said once until it changes.
            self.guide_shown = notice.text
            self.call_later(self.conversation.add_notice, f"{notice.title}: {notice.text}",
                            "warning")

    def connect(self, name: str) -> None:
        if name != self.session.target_name:
            self.switching = name
        if self.session.config.targets[name].kind == "ssh":
            self.output_pane.loading = True
        self.connect_target(name)

    @on(TargetReady)
    def _target_ready(self, message: TargetReady) -> None:
        self.output_pane.loading = False
        if self.switching == message.name:
            self.switching = None
        if message.error is None:
            if message.name != self.session.target_name:
                self.unreachable = None
                self.session.use_target(message.name)
                self.notify(f"Target is now {message.name}: the next attempt runs there.")
            self.show_target(message.name)
            return
        where = message.name
        if isinstance(message.error, RefusedFile):  # "Don't run": told by the dialog
            self.show_target(self.session.target_name)
            return
        if message.name != self.session.target_name:
            self.unreachable = where
            self.show_target(self.session.target_name)
            after = self.session.next_target_name(where)
            then = (f" {self._switch_key()} again tries {after}."
                    if after not in (where, self.session.target_name) else "")
            self.notify(f"Could not switch to {where}: {one_line(str(message.error))}\n"
                        f"Still on {self.session.target_name}.{then}", severity="error",
                        timeout=15, markup=False)
        else:
            self.show_target(where)
            self.notify(f"{where}: {one_line(str(message.error))}", title="Target not ready",
                        severity="error", timeout=15, markup=False)

    def prompt_ready(self) -> None:
        self.prompt_box.placeholder = self._prompt_hint()
        self.prompt_box.focus()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that crashed is a bug: say so and stay up."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            err = event.worker.error
            self.notify(f"{event.worker.name or event.worker.group}: {one_line(str(err))}",
                        severity="error", timeout=10, markup=False)
            if event.worker.group == "loop":
                self.running = False
                self.controller.close_decisions()

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
        self.prompt_box.placeholder = self._prompt_hint()
        self.status_bar.mode = f"resume #{session_id}"
        self.prompt_box.focus()
        if not self.running:
            self.run_worker(self._show_session(session_id), group="ui", exclusive=True)
        self.notify(f"Type a follow-up: it goes to session #{session_id}'s conversation.")

    async def _show_session(self, session_id: int) -> None:
        from verifybot_tui.tui.screens.resumed import show_session

        await show_session(self, session_id)

    # -- actions (keys) ------------------------------------------------------------------

    def action_switch_target(self) -> None:
        name = self.session.next_target_name(self.switching or self.unreachable)
        if name == self.session.target_name and len(self.session.target_names) > 1:
            self.unreachable = None  # round the list: try them all again
            name = self.session.next_target_name()
        if name == self.session.target_name and len(self.session.target_names) == 1:
            self.notify(f"Only one target is configured ({name}). To switch, add another to "
                        f"{self._config_name()}, such as [targets.pi] with kind = \"ssh\", "
                        "host and user (config.toml.example shows more).")
            return
        self.switch_to_target(name)

    def _switch_key(self) -> str:
        """The key that switches targets, as the footer shows it (it may be remapped)."""
        for key, active in self.active_bindings.items():
            if active.binding.action == "switch_target":
                return self.app.get_key_display(active.binding) or key
        return "Switching"

    def _config_name(self) -> str:
        path = self.session.config.path
        return str(path) if path else "a config.toml (there is none yet)"

    def switch_to_target(self, name: str) -> None:
        self.target_chosen = True
        self.target = name
        self.target_state = "connecting"  # the status bar says so; one notice at the end
        self.show_sandbox(name)
        self.connect(name)

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
        self.prompt_box.placeholder = self._prompt_hint()
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

    def _key_of(self, action: str) -> str:
        """The key bound to ``action`` as the help reads it, "Ctrl+R" (it may be remapped)."""
        for key, active in self.active_bindings.items():
            if active.binding.action == action:
                return readable_key(key)
        return action

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

    # -- narrow screens ------------------------------------------------------------------

    NARROW = 100  # columns: below this the history is an overlay and code/chat share
    SHORT = 32  # rows: below this the feedback review hides code/chat while it is open
    WIDE = 160  # columns: from this on the history pane takes 28% (whole entries)

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

    def action_switch_llm(self) -> None:
        names = self.session.llm_names
        if len(names) < 2:
            self.notify(f"Only one LLM is configured ({self.session.llm_spec}). To switch, add "
                        f"another to {self._config_name()}, such as [llm.claude] with "
                        'kind = "browser" and site = "claude" (config.toml.example shows more).')
            return
        name = names[(names.index(self.session.llm_spec) + 1) % len(names)]
        self.run_worker(self.switch_llm_to(name), group="llm-switch", exclusive=True)

    async def switch_llm_to(self, name: str) -> None:
        await self.session.use_llm(name)
        spec = self.session.llm_spec
        self.status_bar.llm = f"replay:{Path(spec[7:]).name}" if spec.startswith("replay:") \
            else spec
        self.llm_state = "stopped"
        self.new_chat_next = True
        self.resume_id = None
        self.clear_attempt()
        self.prompt_box.placeholder = self._prompt_hint()
        self.status_bar.mode = "new chat"
        self.show_criteria()  # the judge follows the LLM unless one was chosen
        # Started by the next prompt, not now: a browser costs seconds, and the user
        # may be cycling past it to the next one.
        self.notify(f"LLM is now {name}: the next prompt starts it, in a new chat.")
        api = self.session.api_config()
        if api is not None:
            await self._check_api(api)

    async def _check_api(self, api: LLMConfig) -> None:
        """Test the connection as ``doctor`` does: reachable, key taken, model offered.

        Part of the exclusive switch worker: a further F8 cancels a check still going.
        """
        from verifybot_tui.llm.api_check import check_provider

        self.llm_state = "checking"
        result = await check_provider(api, self.session.workspace)
        if self.session.llm_spec != api.name or self.session.llm is not None:
            return  # switched again, or a prompt started it meanwhile: its state rules
        self.llm_state = result.state if result.state in ("ok", *CHECK_FAILED) else "error"
        self.last_llm_check = result
        self.notify(f"{api.name}: {'OK' if result.ok else 'FAIL'}: {result.text}",
                    severity="information" if result.ok else "error",
                    timeout=6 if result.ok else 12, markup=False)
