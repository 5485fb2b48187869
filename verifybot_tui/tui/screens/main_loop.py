"""The half of the main screen that talks to the verify loop.

One worker iterates the loop's events, as the CLI does: Output chunks go
straight into the OutputBuffer (never a Message each), everything else
becomes a LoopEvent message whose handler changes the panes. Decisions the
loop waits for (approval, feedback, install) travel back through the
futures its events carry.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from rich.markup import escape
from textual import on, work
from textual.screen import Screen
from textual.widgets import Input

from verifybot_tui.core.ansi import one_line, visible
from verifybot_tui.core.errors import VerifyBotError
from verifybot_tui.core.events import (
    AnswerDone,
    AnswerText,
    ApprovalNeeded,
    CodeReady,
    Decision,
    FeedbackDecision,
    FeedbackReady,
    Finished,
    Notice,
    Output,
    PermissionNeeded,
    PromptSent,
    RunFinished,
    RunStarted,
    SessionStarted,
    VerdictReached,
)
from verifybot_tui.core.outcome import Status
from verifybot_tui.tui.editor import edit_text
from verifybot_tui.tui.messages import FileEdited, LoopEnded, LoopEvent
from verifybot_tui.tui.screens.dialogs import ConfirmScreen
from verifybot_tui.tui.session import AppSession
from verifybot_tui.tui.widgets.approval import ApprovalBar
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.conversation import ConversationPane
from verifybot_tui.tui.widgets.feedback import FeedbackBar
from verifybot_tui.tui.widgets.output import OutputPane
from verifybot_tui.tui.widgets.status import StatusBar

YIELD_EVERY = 0.005  # seconds of output handling before the worker lets others run
STATUS_SEVERITY = {Status.PASSED: "information", Status.VERIFIED: "information",
                   Status.STOPPED: "warning"}


class LoopScreen(Screen):
    """Drives VerifyLoop.events() and shows them; the main screen adds the rest."""

    def __init__(self, session: AppSession) -> None:
        super().__init__()
        self.session = session
        self.pending_approval: ApprovalNeeded | None = None
        self.pending_feedback: FeedbackReady | None = None
        self.saved_paths: dict[str, Path] = {}  # file name -> its programs/ file
        self.attempt_base = 0
        self.started = asyncio.Event()  # the bars are mounted: loop events may come
        self.driving = False  # a prompt was submitted and its loop has not ended

    def refresh_history(self) -> None:
        """The main screen refreshes its history pane."""

    def prompt_ready(self) -> None:
        """The main screen readies the prompt box for the next prompt."""

    def sample_states(self) -> None:
        """The main screen's status bar reads the backends' states."""

    # -- workers (they post messages or fill the buffer; they never touch widgets) ------

    @work(group="loop", exclusive=False, exit_on_error=False)
    async def drive(self, prompt: str, new_chat: bool, resume: int | None) -> None:
        buffer = self.app.output_buffer
        await self.started.wait()
        loop = self.session.ensure_loop()
        # One start of the browser and one connection at a time: wait for those under
        # way; if they failed, the loop tries again and reports it in its own events.
        with contextlib.suppress(VerifyBotError):
            await self.session.start_llm()
        with contextlib.suppress(VerifyBotError):
            await self.session.connect(self.session.target_name)
        try:
            turn = time.monotonic()
            async for ev in loop.events(prompt, new_chat=new_chat, resume=resume):
                if isinstance(ev, Output):
                    buffer.add(ev.stream, ev.text)
                    # A queue that never empties never suspends this loop: give keys
                    # and the screen their turn at least every few milliseconds.
                    if time.monotonic() - turn > YIELD_EVERY:
                        await asyncio.sleep(0)
                        turn = time.monotonic()
                    continue
                if isinstance(ev, RunStarted):
                    buffer.run_started(f"attempt {ev.attempt} on {ev.target}")
                elif isinstance(ev, RunFinished):
                    r = ev.result
                    how = ("timed out" if r.timed_out else "stopped" if r.cancelled else
                           f"target error: {r.target_error}" if r.target_error else
                           f"exit status {r.exit_code}")
                    took = f" after {r.duration:.0f} s" if r.duration >= 1 else ""
                    buffer.note(f"{how}{took}; full output: {ev.output_file}")
                elif isinstance(ev, SessionStarted):
                    self.post_message(LoopEvent(ev, base=loop.attempt))
                    continue
                self.post_message(LoopEvent(ev))
        except Exception as e:  # the loop reports run errors as Finished; not these
            self.post_message(LoopEnded(e))
            return
        self.post_message(LoopEnded())

    @work(group="watch", exclusive=True, exit_on_error=False)
    async def watch_programs(self, paths: dict[str, Path]) -> None:
        """A save to a program file by an outside editor becomes an edit."""
        from watchfiles import Change, awatch

        if not paths:
            return
        by_path = {p.resolve(): name for name, p in paths.items()}
        folders = {p.parent for p in by_path}
        async for changes in awatch(*folders, debounce=150, step=50):
            for change, changed in changes:
                name = by_path.get(Path(changed).resolve())
                if name is not None and change != Change.deleted:
                    try:
                        content = Path(changed).read_text(encoding="utf-8", errors="replace")
                    except OSError:
                        continue
                    self.post_message(FileEdited(name, content))

    # -- the loop's events -------------------------------------------------------------

    @on(LoopEvent)
    async def _loop_event(self, message: LoopEvent) -> None:
        await self._show_event(message)
        if not isinstance(message.event, AnswerText):
            self.sample_states()  # states change at these steps: show them now, not later

    async def _show_event(self, message: LoopEvent) -> None:
        ev = message.event
        conversation = self.query_one(ConversationPane)
        status = self.query_one(StatusBar)
        if isinstance(ev, AnswerText):
            await conversation.show_answer(ev.text)
        elif isinstance(ev, AnswerDone):
            await conversation.finish_answer(ev.markdown)
        elif isinstance(ev, PromptSent):
            await conversation.add_prompt(ev.text, ev.kind, ev.attempt)
            status.attempt = ev.attempt - self.attempt_base
            if self.session.loop is not None:
                status.max_attempts = self.session.loop.max_attempts
        elif isinstance(ev, SessionStarted):
            self.attempt_base = message.base
            await conversation.add_notice(f"Session #{ev.session_id} ({ev.slug}) on {ev.target}")
            self.refresh_history()
        elif isinstance(ev, Notice):
            # Notices quote programs, file names and the LLM: escapes shown, no markup.
            await conversation.add_notice(visible(ev.text), ev.level)
            if ev.level == "error":
                self.notify(one_line(ev.text), severity="error", markup=False)
        elif isinstance(ev, CodeReady):
            await self.query_one(CodePane).show_files(ev.files, ev.entry, ev.previous)
            root = self.session.loop.workspace.root if self.session.loop else Path(".")
            self.saved_paths = {f.name: root / rel for f, rel in zip(ev.files, ev.saved,
                                                                     strict=False)}
            self.refresh_history()
        elif isinstance(ev, ApprovalNeeded):
            self.pending_approval = ev
            target = self.session.target_name
            self.query_one(ApprovalBar).ask(
                f"Attempt {ev.attempt - self.attempt_base}: run [b]{escape(one_line(ev.entry))}"
                f"[/b] on [b]{escape(target)}[/b]?")
            self.watch_programs(dict(self.saved_paths))
        elif isinstance(ev, PermissionNeeded):
            self.app.push_screen(ConfirmScreen(ev.question, "Install packages?"),
                                 callback=lambda yes: _resolve(ev.answer, bool(yes)))
        elif isinstance(ev, FeedbackReady):
            self.pending_feedback = ev
            self.query_one(FeedbackBar).ask(ev.prompt)
        elif isinstance(ev, RunStarted):
            output = self.query_one(OutputPane)
            n = ev.attempt - self.attempt_base
            output.border_title = f"Output — attempt {n} on {ev.target}"
            output.border_subtitle = "running…"
            output.add_class("-running")
        elif isinstance(ev, RunFinished):
            output = self.query_one(OutputPane)
            output.finish()
            output.remove_class("-running")
            code = ev.result.exit_code
            output.border_subtitle = f"exit {code}" if code is not None else "killed"
        elif isinstance(ev, VerdictReached):
            v = ev.verdict
            ok = getattr(v, "ok", False)
            await conversation.add_notice(
                f"Verdict for attempt {ev.attempt - self.attempt_base}: "
                f"{getattr(v, 'status', v)} — {getattr(v, 'reason', '')}",
                "info" if ok else "warning")
            self.refresh_history()
        elif isinstance(ev, Finished):
            await self._finished(ev)

    async def _finished(self, ev: Finished) -> None:
        self._close_decisions()
        self.query_one(OutputPane).finish()
        await self.query_one(ConversationPane).end_answer()
        text = f"{ev.status}: {one_line(ev.message)}" if ev.message else ev.status
        await self.query_one(ConversationPane).add_notice(
            f"Finished — {text}", "info" if ev.status.ok else "warning")
        self.notify(text, title="Session finished", markup=False,
                    severity=STATUS_SEVERITY.get(ev.status, "error"))
        self.refresh_history()
        self.prompt_ready()

    @on(LoopEnded)
    async def _loop_ended(self, message: LoopEnded) -> None:
        self.driving = False
        self._close_decisions()
        self.query_one(ConversationPane).remove_class("-waiting")
        if message.error is not None:
            self.notify(f"The loop stopped on an error: {one_line(str(message.error))}",
                        severity="error", timeout=10, markup=False)

    # -- decisions -----------------------------------------------------------------------

    def _close_decisions(self) -> None:
        for bar in self.query("ApprovalBar, FeedbackBar"):
            bar.hide()
        self.workers.cancel_group(self, "watch")
        self.pending_approval = None
        self.pending_feedback = None

    def _decide(self, decision: Decision) -> None:
        pending = self.pending_approval
        self._close_decisions()
        if pending is not None:
            _resolve(pending.decision, decision)
        self.query_one("#prompt", Input).focus()

    @on(ApprovalBar.Chosen)
    async def _approval(self, message: ApprovalBar.Chosen) -> None:
        code = self.query_one(CodePane)
        if message.action == "accept":
            edits = code.collect_edits()
            if code.mode != "code":
                await code.set_mode("code")
            self._decide(Decision("edit", files=edits) if edits else Decision("accept"))
        elif message.action == "edit":
            await code.set_mode("edit")
        elif message.action == "external_edit":
            await self._external_edit()
        elif message.action == "reject":
            self._decide(Decision("reject", note=message.note))
        elif message.action == "stop":
            self._decide(Decision("stop"))

    async def _external_edit(self) -> None:
        code = self.query_one(CodePane)
        f = code.active_file()
        if f is None:
            return
        try:
            text = edit_text(self.app, f.content, Path(f.name).suffix or ".txt")
        except OSError as e:
            self.notify(f"Could not start the editor: {e}. Check $VISUAL/$EDITOR.",
                        severity="error")
            return
        if text is None:
            self.notify("No editor set: export VISUAL or EDITOR (e.g. EDITOR=nano), "
                        "or press e to edit here.", severity="warning", timeout=8)
            return
        await code.set_content(f.name, text)
        self.query_one(ApprovalBar).focus()

    @on(CodePane.EditEnded)
    def _edit_ended(self, message: CodePane.EditEnded) -> None:
        if self.pending_approval is not None:
            self.query_one(ApprovalBar).focus()
        if message.kept and message.pane.edits:
            self.notify("Edits kept: accept [a] runs the edited version.")

    @on(FeedbackBar.Chosen)
    def _feedback(self, message: FeedbackBar.Chosen) -> None:
        pending = self.pending_feedback
        self._close_decisions()
        if pending is not None:
            _resolve(pending.decision, FeedbackDecision(message.send, message.text))

    @on(FileEdited)
    async def _file_edited(self, message: FileEdited) -> None:
        if self.pending_approval is None:
            return
        if await self.query_one(CodePane).set_content(message.name, message.content):
            self.notify(f"{message.name} changed on disk: accept runs the edited version.")


    def action_stop(self) -> None:
        if self.pending_approval is not None:
            self._decide(Decision("stop"))
        elif self.pending_feedback is not None:
            pending = self.pending_feedback
            self._close_decisions()
            _resolve(pending.decision, FeedbackDecision(False))
        elif self.session.loop is not None and self.session.loop.running:
            self.session.loop.stop()
            self.notify("Stopping…")




def _resolve(future: asyncio.Future, value: object) -> None:
    if not future.done():
        future.set_result(value)
