"""The main screen: four panes around the verify loop, driven as the CLI drives it.

The loop's half (its worker, its events, the decisions) is LoopScreen in
main_loop.py; this half holds the layout, the LLM and target workers, the
prompt box, the history pane and the keys. Workers only post messages; the
``@on`` handlers own every widget change.
"""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState

from verifybot_tui.core.errors import VerifyBotError
from verifybot_tui.llm.api_common import usage_text
from verifybot_tui.tui.keys import MAIN_BINDINGS
from verifybot_tui.tui.messages import LLMReady, TargetReady
from verifybot_tui.tui.screens.main_loop import LoopScreen
from verifybot_tui.tui.session import AppSession
from verifybot_tui.tui.widgets.approval import ApprovalBar
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.conversation import ConversationPane
from verifybot_tui.tui.widgets.feedback import FeedbackBar
from verifybot_tui.tui.widgets.history import HistoryPane
from verifybot_tui.tui.widgets.output import OutputPane
from verifybot_tui.tui.widgets.status import StatusBar


class MainScreen(LoopScreen):
    CSS_PATH = "main.tcss"
    BINDINGS = MAIN_BINDINGS
    AUTO_FOCUS = "#prompt"

    def __init__(self, session: AppSession) -> None:
        super().__init__(session)
        self.new_chat_next = True
        self.resume_id: int | None = None
        self.last_prompt: str | None = None
        self.switching: str | None = None  # a target being connected to, not yet current
        # A target the user picked (--target, ctrl+t) is kept; the default one may give
        # way to the Pi when a prompt is about Pi hardware, as `verifybot run` does.
        self.target_chosen = session.target_name != session.config.run.default_target

    # -- layout -------------------------------------------------------------------

    def compose(self):
        yield StatusBar(id="status")
        with Horizontal(id="body"):
            yield HistoryPane(id="history")
            with Vertical(id="work"):
                with Horizontal(id="top"):
                    yield ConversationPane(id="conversation")
                    yield CodePane(id="code")
                yield OutputPane(self.session_buffer, id="output")
        with Vertical(id="bottom"):  # the bars join it after the first frame
            yield Input(placeholder=self._prompt_hint(), id="prompt")
        yield Footer()

    @property
    def session_buffer(self):
        return self.app.output_buffer

    def on_mount(self) -> None:
        self.query_one("#conversation").border_title = "Conversation"
        self.query_one("#code").border_title = "Code"
        self.query_one("#output").border_title = "Output"
        self.query_one("#history").border_title = "History (F2)"
        status = self.query_one(StatusBar)
        status.target = self.session.target_name
        spec = self.session.llm_spec
        status.llm = f"replay:{Path(spec[7:]).name}" if spec.startswith("replay:") else spec
        status.auto_accept = self.session.config.run.auto_accept
        status.review_feedback = self.session.review_feedback
        status.max_attempts = 1 + self.session.config.run.max_retries
        self.set_interval(0.25, self.sample_states, name="status-sample")

    async def start_backends(self) -> None:
        """Called by the app once the first frame is shown: nothing that can wait
        may hold that frame back."""
        prompt_box = self.query_one("#prompt", Input)
        if not self.query(ApprovalBar):
            await self.query_one("#bottom").mount(ApprovalBar(id="approval"),
                                                  FeedbackBar(id="feedback"), before=prompt_box)
        self.started.set()
        self.refresh_history()
        if not self.session.llm_spec.startswith("replay:"):
            self.query_one(ConversationPane).loading = True  # a browser takes seconds
        self.start_llm()
        self._connect(self.session.target_name)
        prompt = self.app.initial_prompt
        if prompt:
            self.query_one("#prompt", Input).value = ""
            self.submit(prompt)

    def _prompt_hint(self) -> str:
        if self.resume_id is not None:
            return f"Follow-up for session #{self.resume_id} (resumes its conversation)"
        if self.new_chat_next:
            return "Ask for a program (Enter sends) — F1 help, ctrl+p commands"
        return "Follow up in this conversation, or ctrl+n for a new chat"

    def sample_states(self) -> None:
        status = self.query_one(StatusBar)
        name = self.switching or self.session.target_name
        target = self.session.targets.get(name)
        status.target = name
        if target is not None:
            status.target_state = target.state
        if self.session.llm is not None:
            status.llm_state = self.session.llm.state
            status.usage = usage_text(self.session.llm)
        status.auto_accept = self.session.auto_accept

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

    # -- prompts ------------------------------------------------------------------------

    @on(Input.Submitted, "#prompt")
    def _prompt_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.submit(text):
            event.input.value = ""

    def submit(self, text: str, *, new_chat: bool | None = None) -> bool:
        loop = self.session.loop
        if self.driving or (loop is not None and loop.running):
            self.notify("A run is going on: wait for it, or stop it with ctrl+g.",
                        severity="warning")
            if self.pending_approval is not None:  # the run waits for an answer
                self.query_one(ApprovalBar).focus()
            elif self.pending_feedback is not None:
                self.query_one("#feedback-text").focus()
            return False
        new_chat = self.new_chat_next if new_chat is None else new_chat
        resume, self.resume_id = self.resume_id, None
        if new_chat and resume is None and not self.target_chosen:
            self._target_for(text)
        if new_chat and resume is None:
            self.run_worker(self._clear_panes(), group="ui")
        self.last_prompt = text
        self.new_chat_next = False
        self.query_one("#prompt", Input).placeholder = self._prompt_hint()
        self.query_one(StatusBar).mode = f"resume #{resume}" if resume else (
            "new chat" if new_chat else "follow-up")
        self.query_one(ConversationPane).add_class("-waiting")
        self.driving = True
        self.drive(text, new_chat, resume)
        return True

    def _target_for(self, prompt: str) -> None:
        from verifybot_tui.targets import choose_target

        name, why = choose_target(self.session.config, prompt, None)
        if name != self.session.target_name and why:
            self.session.use_target(name)
            self.query_one(StatusBar).target = name
            self.notify(f"{why[0].upper()}{why[1:]}. ctrl+t switches back.",
                        title=f"Running on {name}")
            self._connect(name)

    async def _clear_panes(self) -> None:
        await self.query_one(ConversationPane).clear()
        await self.query_one(CodePane).show_files([])
        self.query_one(OutputPane).clear()

    @on(LLMReady)
    def _llm_ready(self, message: LLMReady) -> None:
        self.query_one(ConversationPane).loading = False
        self.sample_states()
        if message.error is not None:
            self.notify(str(message.error), title="LLM not ready", severity="error", timeout=15)

    def _connect(self, name: str) -> None:
        if name != self.session.target_name:
            self.switching = name
        if self.session.config.targets[name].kind == "ssh":
            self.query_one(OutputPane).loading = True
        self.connect_target(name)

    @on(TargetReady)
    def _target_ready(self, message: TargetReady) -> None:
        self.query_one(OutputPane).loading = False
        self.sample_states()
        if self.switching == message.name:
            self.switching = None
        status = self.query_one(StatusBar)
        if message.error is None:
            if message.name != self.session.target_name:
                self.session.use_target(message.name)
                self.notify(f"Target is now {message.name}: the next attempt runs there.")
            status.target = message.name
            status.target_state = "connected"
            return
        status.target_state = "error"
        where = message.name
        if message.name != self.session.target_name:
            self.notify(f"Could not switch to {where}: {message.error}\n"
                        f"Still on {self.session.target_name}.", severity="error", timeout=15)
        else:
            self.notify(f"{where}: {message.error}", title="Target not ready",
                        severity="error", timeout=15)

    def prompt_ready(self) -> None:
        prompt = self.query_one("#prompt", Input)
        prompt.placeholder = self._prompt_hint()
        prompt.focus()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that crashed is a bug: say so and stay up."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            err = event.worker.error
            self.notify(f"{event.worker.name or event.worker.group}: {err}", severity="error",
                        timeout=10)
            if event.worker.group == "loop":
                self.driving = False
                self._close_decisions()

    # -- history ---------------------------------------------------------------------------

    def refresh_history(self) -> None:
        history = self.session.history
        sessions = history.sessions(limit=200)
        attempts = {s["id"]: history.attempts(s["id"]) for s in sessions[:50]}
        self.query_one(HistoryPane).show_sessions(sessions, attempts)

    @on(HistoryPane.Picked)
    def _history_picked(self, message: HistoryPane.Picked) -> None:
        row = message.row
        if row.attempt is None:
            return

        from verifybot_tui.tui.screens.attempt import AttemptScreen

        def done(result: int | None) -> None:
            if result is not None:
                self.resume(result)

        self.app.push_screen(AttemptScreen(row.session, row.attempt, self.session.workspace),
                             callback=done)

    @on(HistoryPane.ResumeRequested)
    def _history_resume(self, message: HistoryPane.ResumeRequested) -> None:
        self.resume(message.session["id"])

    def resume(self, session_id: int) -> None:
        self.resume_id = session_id
        prompt = self.query_one("#prompt", Input)
        prompt.placeholder = self._prompt_hint()
        self.query_one(StatusBar).mode = f"resume #{session_id}"
        prompt.focus()
        self.notify(f"Type a follow-up: it goes to session #{session_id}'s conversation.")

    # -- actions (keys) ------------------------------------------------------------------

    def action_switch_target(self) -> None:
        name = self.session.next_target_name(self.switching)
        if name == self.session.target_name and len(self.session.target_names) == 1:
            self.notify("Only one target is configured: add [targets.NAME] tables to switch.")
            return
        self.switch_to_target(name)

    def switch_to_target(self, name: str) -> None:
        self.target_chosen = True
        status = self.query_one(StatusBar)
        status.target = name
        status.target_state = "connecting"
        self.notify(f"Connecting to {name}…")
        self._connect(name)

    def action_toggle_auto_accept(self) -> None:
        self.session.set_auto_accept(not self.session.auto_accept)
        on = self.session.auto_accept
        self.query_one(StatusBar).auto_accept = on
        self.notify("Auto-accept on: new versions run without asking." if on
                    else "Auto-accept off: each version waits for you.")

    def action_toggle_review_feedback(self) -> None:
        self.session.set_review_feedback(not self.session.review_feedback)
        on = self.session.review_feedback
        self.query_one(StatusBar).review_feedback = on
        self.notify("Feedback prompts are shown for editing before they are sent." if on
                    else "Feedback goes back to the LLM directly.")

    def action_new_chat(self) -> None:
        self.new_chat_next = True
        self.resume_id = None
        self.query_one("#prompt", Input).placeholder = self._prompt_hint()
        self.query_one(StatusBar).mode = "new chat"
        self.query_one("#prompt", Input).focus()

    def action_retry(self) -> None:
        if not self.last_prompt:
            self.notify("Nothing to retry yet.")
            return
        self.submit(self.last_prompt, new_chat=True)

    def action_toggle_history(self) -> None:
        history = self.query_one(HistoryPane)
        history.display = not history.display
        if history.display:
            history.focus()

    async def action_toggle_diff(self) -> None:
        await self.query_one(CodePane).toggle_diff()

    def action_focus_prompt(self) -> None:
        self.query_one("#prompt", Input).focus()

