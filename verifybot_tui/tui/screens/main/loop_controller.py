"""The main screen's part that talks to the verify loop: its worker, its events, its decisions.

One worker iterates the loop's events, as the CLI does: Output chunks go
straight into the OutputBuffer (never a Message each), everything else becomes
a LoopEvent message, which the screen hands to ``dispatch`` with this
controller, the TUI's ``core.loop.events.EventHandler``. Decisions the loop waits
for (approval, feedback, install) travel back through the futures its events
carry; the controller holds the pending ones. The controller is composed into
the screen (not a base class of it): the screen owns layout and keys, this owns
the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from textual.content import Content
from textual.markup import escape

from verifybot_tui.core.answers.editor import NO_EDITOR, cannot_start
from verifybot_tui.core.base.ansi import one_line, visible
from verifybot_tui.core.base.errors import VerifyBotError
from verifybot_tui.core.base.outcome import Status
from verifybot_tui.core.loop import events
from verifybot_tui.tui.editor import edit_text
from verifybot_tui.tui.messages import FileEdited, LoopEnded, LoopEvent
from verifybot_tui.tui.session import LLMNotReady
from verifybot_tui.tui.widgets.approval import ApprovalBar
from verifybot_tui.tui.widgets.feedback import FeedbackBar

if TYPE_CHECKING:
    from verifybot_tui.tui.screens.main.host import LoopHost


YIELD_EVERY = 0.005  # seconds of output handling before the worker lets others run
Severity = Literal["information", "warning", "error"]
STATUS_SEVERITY: dict[Status, Severity] = {
    Status.VERIFIED: "information", Status.PASSED: "information", Status.STOPPED: "warning"}


class LoopController:
    """Drives VerifyLoop.events() for the main screen and shows what happens."""

    def __init__(self, screen: LoopHost) -> None:
        self.screen = screen
        self.session = screen.session
        self.pending_approval: events.ApprovalNeeded | None = None
        self.pending_feedback: events.FeedbackReady | None = None
        self.saved_paths: dict[str, Path] = {}  # file name -> its programs/ file
        self.attempt_base = 0
        # The last version shown, whatever became of it (rejected, stopped, run): F4
        # compares the next one with it. The loop's own "previous" is the last one run.
        self.last_shown: list[Any] = []
        self.started = asyncio.Event()  # the bars are mounted: loop events may come

    # -- workers (they post messages or fill the buffer; they never touch widgets) ------

    def drive(self, prompt: str, new_chat: bool, resume: int | None) -> None:
        self.screen.run_worker(self._drive(prompt, new_chat, resume), group="loop",
                               exclusive=False, exit_on_error=False)

    async def _drive(self, prompt: str, new_chat: bool, resume: int | None) -> None:
        await self.started.wait()
        # The panes being filled with a resumed session or cleared for a new chat go
        # first: done later, they would put the old output over this run's.
        for worker in [w for w in self.screen.workers if w.group == "ui" and w.is_running]:
            with contextlib.suppress(Exception):
                await worker.wait()
        try:
            # Its board file that sets commands is asked about before anything of it runs.
            await self.session.prepare_target(self.session.target_name)
        except VerifyBotError as e:
            self.screen.post_message(LoopEnded(e))
            return
        loop = self.session.ensure_loop()
        self.session.stopping = False
        # One start of the browser and one connection at a time: wait for those under
        # way; if they failed, the loop tries again and reports it in its own events.
        try:
            await self.session.start_llm()
        except LLMNotReady as e:  # nothing was started, and the loop would start it
            self.screen.post_message(LoopEnded(e))
            return
        except VerifyBotError:
            pass  # the loop tries again and reports it in its own events
        with contextlib.suppress(VerifyBotError):
            await self.session.connect(self.session.target_name)
        try:
            await self._pump(loop.events(prompt, new_chat=new_chat, resume=resume))
        except Exception as e:  # the loop reports run errors as Finished; not these
            self.screen.post_message(LoopEnded(e))
            return
        self.screen.post_message(LoopEnded())

    async def _pump(self, stream: Any) -> None:
        """Output into the buffer (the run's header and footer too, in order); the rest
        as LoopEvent messages."""
        buffer = self.screen.output_buffer
        turn = time.monotonic()
        run_open = False  # a run started and has not finished: a stop ends it unfinished
        async for ev in stream:
            if isinstance(ev, events.Output):
                buffer.add(ev.stream, ev.text)
                # A queue that never empties never suspends this loop: give keys
                # and the screen their turn at least every few milliseconds.
                if time.monotonic() - turn > YIELD_EVERY:
                    await asyncio.sleep(0)
                    turn = time.monotonic()
                continue
            if isinstance(ev, events.RunStarted):
                buffer.run_started(f"attempt {ev.attempt} on {ev.target}")
                run_open = True
            elif isinstance(ev, events.RunFinished):
                buffer.note(_run_summary(ev))
                run_open = False
            elif isinstance(ev, events.Finished) and run_open:  # stopped mid-run: no RunFinished
                buffer.note(_unfinished_run(ev))
                run_open = False
            self.screen.post_message(LoopEvent(ev))

    def watch_programs(self, paths: dict[str, Path]) -> None:
        if paths:
            self.screen.run_worker(self._watch(paths), group="watch", exclusive=True,
                                   exit_on_error=False)

    async def _watch(self, paths: dict[str, Path]) -> None:
        """A save to a program file by an outside editor becomes an edit."""
        from watchfiles import Change, awatch

        by_path = {p.resolve(): name for name, p in paths.items()}
        folders = sorted({str(p.parent) for p in by_path})
        async for changes in awatch(*folders, debounce=150, step=50):
            for change, changed in changes:
                name = by_path.get(Path(changed).resolve())
                if name is not None and change != Change.deleted:
                    try:
                        content = Path(changed).read_text(encoding="utf-8", errors="replace")
                    except OSError:
                        continue
                    self.screen.post_message(FileEdited(name, content))

    # -- core.loop.events.EventHandler: the screen dispatches each LoopEvent here -----------

    async def on_session_started(self, ev: events.SessionStarted) -> None:
        self.attempt_base = ev.attempts_before
        if ev.attempts_before == 0:
            self.last_shown = []
        await self.screen.conversation.add_notice(
            f"Session #{ev.session_id} ({ev.slug}) on {ev.target}")
        self.screen.refresh_history()

    async def on_notice(self, ev: events.Notice) -> None:
        # Notices quote programs, file names and the LLM: escapes shown, no markup.
        await self.screen.conversation.add_notice(visible(ev.text), ev.level)
        if ev.level == "error":
            self.screen.notify(one_line(ev.text), severity="error", markup=False)

    async def on_prompt_sent(self, ev: events.PromptSent) -> None:
        self.screen.show_top("conversation")
        await self.screen.conversation.add_prompt(ev.text, ev.kind, ev.attempt)
        # One numbering everywhere: a follow-up continues the session's count.
        status = self.screen.status_bar
        status.attempt = ev.attempt
        if self.session.loop is not None:
            status.max_attempts = self.attempt_base + self.session.loop.max_attempts

    async def on_answer_text(self, ev: events.AnswerText) -> None:
        await self.screen.conversation.show_answer(ev.text)

    async def on_thinking_text(self, ev: events.ThinkingText) -> None:
        """The model's reasoning (API backends): a folded, dimmed "thinking" block in the
        conversation, apart from the answer; the status bar says "thinking…" (the
        backend's state) and the transcript keeps it."""
        await self.screen.conversation.show_thinking(ev.text)

    async def on_answer_done(self, ev: events.AnswerDone) -> None:
        await self.screen.conversation.finish_answer(ev.markdown)

    async def on_code_ready(self, ev: events.CodeReady) -> None:
        previous = self.last_shown or ev.previous
        self.last_shown = list(ev.files)
        await self.screen.code_pane.show_files(ev.files, ev.entry, previous, ev.how)
        self.screen.show_top("code")
        root = self.session.loop.workspace.root if self.session.loop else Path(".")
        self.saved_paths = {f.name: root / rel
                            for f, rel in zip(ev.files, ev.saved, strict=False)}
        self.screen.refresh_history()

    async def on_approval_needed(self, ev: events.ApprovalNeeded) -> None:
        self.pending_approval = ev
        self.screen.status_bar.phase = "approval"
        # The entry's name is the LLM's text: a variable, never read as markup.
        self.screen.approval_bar.ask(Content.from_markup(
            "Attempt $n: run [b]$entry[/b] on [b]$target[/b]?", n=str(ev.attempt),
            entry=one_line(ev.entry), target=self.session.target_name))
        self.watch_programs(dict(self.saved_paths))
        self.screen.refresh_bindings()
        if self.screen.auto_accept:  # turned on while this version was on its way
            await self.approval_chosen("accept", "")

    async def on_permission_needed(self, ev: events.PermissionNeeded) -> None:
        from verifybot_tui.tui.screens.dialogs import ConfirmScreen  # not on the first frame

        self.screen.app.push_screen(ConfirmScreen(ev.question, "Install packages?"),
                                    callback=lambda yes: _resolve(ev.answer, bool(yes)))

    async def on_feedback_ready(self, ev: events.FeedbackReady) -> None:
        self.pending_feedback = ev
        self.screen.status_bar.phase = "feedback"
        self.screen.reviewing = True
        self.screen.feedback_bar.ask(ev.prompt)

    async def on_run_started(self, ev: events.RunStarted) -> None:
        output = self.screen.output_pane
        output.border_title = escape(f"Output — attempt {ev.attempt} on {ev.target}")
        output.border_subtitle = "running…"
        output.running = True
        self.screen.status_bar.phase = "running"

    async def on_output(self, ev: events.Output) -> None:
        """Output never comes here: the worker puts it in the buffer (see _pump)."""

    async def on_run_finished(self, ev: events.RunFinished) -> None:
        output = self.screen.output_pane
        output.finish()
        output.running = False
        code = ev.result.exit_code
        output.border_subtitle = f"exit {code}" if code is not None else "killed"
        self.screen.status_bar.phase = ""

    async def on_verdict_reached(self, ev: events.VerdictReached) -> None:
        v = ev.verdict
        self.screen.status_bar.verdict = "PASSED" if v.ok else "FAILED"  # until the next one
        await self.screen.conversation.add_notice(
            f"Verdict for attempt {ev.attempt}: {v.status} — {v.reason}",
            "info" if v.ok else "warning")
        self.screen.refresh_history()

    async def on_judged(self, ev: events.Judged) -> None:
        j = ev.judgement
        await self.screen.conversation.add_notice(
            f"Judgement for attempt {ev.attempt - self.attempt_base}: {j.line} "
            f"(judge: {j.judge})", "info" if j.verdict == "PASS" else "warning")

    async def on_judgement_needed(self, ev: events.JudgementNeeded) -> None:
        """The judgement dialog: follow the judge, overrule it, or stop."""
        from verifybot_tui.tui.screens.judgement import JudgementScreen  # when first judged

        self.screen.app.push_screen(
            JudgementScreen(ev.judgement, ev.reasons),
            callback=lambda d: _resolve(ev.decision, d or events.JudgeDecision("fail")))

    async def on_finished(self, ev: events.Finished) -> None:
        self.close_decisions()
        output = self.screen.output_pane
        output.finish()
        if output.running:  # the run was stopped before it finished: say so there too
            output.running = False
            output.border_subtitle = "stopped" if ev.status == Status.STOPPED \
                else str(ev.status).lower()
        conversation = self.screen.conversation
        await conversation.end_answer()
        text = f"{ev.status}: {one_line(ev.message)}" if ev.message else str(ev.status)
        self.screen.status_bar.verdict = str(ev.status)
        await conversation.add_notice(f"Finished — {text}", "info" if ev.status.ok else "warning")
        self.screen.notify(text, title="Session finished", markup=False,
                           severity=STATUS_SEVERITY.get(ev.status, "error"))
        ended = getattr(self.screen.app, "run_ended", None)  # VerifyBotApp's desktop notice
        if ended is not None:
            ended(f"the run finished: {text}")
        self.screen.refresh_history()
        self.screen.prompt_ready()

    # -- decisions -----------------------------------------------------------------------

    def close_decisions(self) -> None:
        for bar in self.screen.query("ApprovalBar, FeedbackBar"):  # mounted after frame one
            if isinstance(bar, ApprovalBar | FeedbackBar):
                bar.hide()
        for worker in self.screen.workers:  # the file watcher (only this controller runs one)
            if worker.group == "watch":
                worker.cancel()
        self.pending_approval = None
        self.pending_feedback = None
        self.screen.status_bar.phase = ""
        self.screen.reviewing = False
        self.screen.editing = False
        self.screen.refresh_bindings()

    def decide(self, decision: events.Decision) -> None:
        pending = self.pending_approval
        self.close_decisions()
        if pending is not None:
            _resolve(pending.decision, decision)
        self.screen.prompt_box.focus()

    def answer_feedback(self, send: bool, text: str = "") -> None:
        pending = self.pending_feedback
        self.close_decisions()
        if pending is not None:
            _resolve(pending.decision, events.FeedbackDecision(send, text))

    async def approval_chosen(self, action: str, note: str) -> None:
        code = self.screen.code_pane
        if action == "accept":
            edits = code.collect_edits()
            if code.mode != "code":
                await code.set_mode("code")
            self.decide(events.Decision("edit", files=edits) if edits
                        else events.Decision("accept"))
        elif action == "edit":
            self.screen.editing = True  # a short screen gives the editor the output's rows
            await code.set_mode("edit")
        elif action == "external_edit":
            await self._external_edit()
        elif action == "reject":
            self.decide(events.Decision("reject", note=note))
        elif action == "stop":
            self.decide(events.Decision("stop"))

    async def _external_edit(self) -> None:
        code = self.screen.code_pane
        f = code.active_file()
        if f is None:
            return
        try:
            text = edit_text(self.screen.app, f.content, f.name)
        except OSError as e:
            self.screen.notify(cannot_start(e), severity="error")
            return
        if text is None:
            self.screen.notify(f"{NO_EDITOR}, or press e to edit here.", severity="warning",
                               timeout=8)
            return
        await code.set_content(f.name, text)
        self.screen.approval_bar.focus()

    async def file_edited(self, name: str, content: str) -> None:
        if self.pending_approval is None:
            return
        if await self.screen.code_pane.set_content(name, content):
            self.screen.notify(f"{name} changed on disk: accept runs the edited version.")

    def stop(self) -> None:
        """Stop whatever waits or runs: the pending decision, else the loop itself."""
        if self.pending_approval is not None:
            self.decide(events.Decision("stop"))
        elif self.pending_feedback is not None:
            self.answer_feedback(False)
        else:
            how = self.session.stop_loop()
            if how == "stopping":
                self.screen.notify("Stopping… (again to kill the program at once)")
            elif how == "killed":
                self.screen.notify("Killed the running program at once.")


def _run_summary(ev: events.RunFinished) -> str:
    r = ev.result
    how = r.ended
    took = f" after {r.duration:.0f} s" if r.duration >= 1 else ""
    return f"{how}{took}; full output: {ev.output_file}"


def _unfinished_run(ev: events.Finished) -> str:
    """The output pane's last line for a run the session ended before it finished."""
    if ev.status == Status.STOPPED:
        return "stopped by you before the program ended; the output so far is in outputs/"
    return f"ended before the program finished: {ev.status}; the output so far is in outputs/"


def _resolve(future: asyncio.Future[Any], value: object) -> None:
    if not future.done():
        future.set_result(value)
