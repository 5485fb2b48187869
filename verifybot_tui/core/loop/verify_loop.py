"""The verify loop: ask, extract, approve, run, judge, feed back, repeat.

One async object that both front ends drive. ``events()`` runs the loop in a
task and yields what happens; where the user must decide, the event carries
a future and the loop waits for it. ``stop()`` cancels the task: the target
kills the running program's whole tree, and the loop still writes its final
status, so a stopped or interrupted session is as readable as a finished one.

One attempt is a pipeline of small steps, each returning a small result:
ask -> extract -> dedupe -> approve -> dependencies -> execute -> judge. A step
that ends the session returns an ``Outcome``; one that needs another answer
returns the next ``Turn`` (the prompt to send). The steps live in ``steps/``, a
module each, and share the loop's state (``steps.state.LoopState``, which this
driver is); this module only orders them. Every write to history, the
transcript and the run record goes through the session's ``SessionRecorder``.
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import AsyncIterator
from typing import Any

from verifybot_tui.core.base.errors import LLMError, VerifyBotError
from verifybot_tui.core.base.outcome import Outcome, Status
from verifybot_tui.core.base.ports import Reattaches
from verifybot_tui.core.loop import prompts
from verifybot_tui.core.loop.events import (
    Decision,
    Event,
    EventHandler,
    FeedbackDecision,
    Finished,
    Notice,
    SessionStarted,
    dispatch,
)
from verifybot_tui.core.loop.recorder import SessionRecorder
from verifybot_tui.core.loop.steps import approving, asking, extracting, verifying
from verifybot_tui.core.loop.steps.dependencies import install_missing
from verifybot_tui.core.loop.steps.feedback import after_run
from verifybot_tui.core.loop.steps.running import execute, follow_switch
from verifybot_tui.core.loop.steps.state import Code, Conversation, LoopState, Step, Turn

_DONE = object()


class VerifyLoop(LoopState):
    """The driver: one session's attempts, each the steps in order, as events."""

    via = ""  # who started the sessions when not the user at a front end ("mcp")

    _task: asyncio.Task[None] | None = None
    _stop_status: Status | None = None

    # -- control from the front ends -----------------------------------------

    def stop(self, status: Status = Status.STOPPED) -> None:
        """Stop the running program (its whole tree) and end the loop with this status."""
        self._stop_status = status
        if self._task and not self._task.done():
            self._task.cancel()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def events(self, prompt: str, *, new_chat: bool = True,
                     resume: int | None = None) -> AsyncIterator[Event]:
        """Run the loop for one prompt, yielding its events until ``Finished``."""
        if self.running:
            raise RuntimeError("the loop is already running a prompt")
        if not new_chat and resume is None and self.session_id is not None:
            resume = self.session_id  # a follow-up continues the current session
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self.emit = queue.put_nowait
        self._stop_status = None
        task = asyncio.create_task(self._main(prompt, new_chat=new_chat, resume=resume))
        self._task = task
        task.add_done_callback(lambda _t: queue.put_nowait(_DONE))
        try:
            while (event := await queue.get()) is not _DONE:
                yield event
        finally:
            if not task.done():
                self._stop_status = self._stop_status or Status.STOPPED
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error

    # -- one session ------------------------------------------------------------

    async def _main(self, prompt: str, *, new_chat: bool, resume: int | None) -> None:
        prompt = self.redact(prompt)  # a secret typed in it: never in a slug, file or row
        rec = self.recorder = SessionRecorder(self.history, self.workspace)
        rec.max_output_bytes = int(self.config.run.max_output_mb * 1024 * 1024)
        rec.criteria = [c.text for c in self.verification.criteria]
        rec.judge = self.verification.judge
        rec.max_retries, rec.timeout = self.max_retries, self.timeout
        rec.via = self.via
        rec.sweep_interrupted()
        names = {"target": self.target.name, "llm": self.llm.name}
        if resume is not None:
            self.attempt = rec.resume(resume, prompt, **names)
        else:
            rec.start(prompt, **names)
            self.attempt = 0
        self.session_id = rec.session_id
        self.emit(SessionStarted(rec.session_id, rec.slug, self.target.name, self.llm.name,
                                 str(rec.transcript_path), self.attempt))
        outcome = Outcome.failed("")
        try:
            outcome = await self._converse(prompt, new_chat=new_chat, resume=resume is not None)
        except asyncio.CancelledError as e:
            outcome = Outcome.of_error(e, self._stop_status)
        except Exception as e:  # an internal error keeps the session readable, says where
            outcome = Outcome.of_error(e)
            if not isinstance(e, VerifyBotError):
                rec.internal_error(traceback.format_exc())
        finally:
            record = rec.finish(outcome, target=self.target.name, llm=self.llm.name)
            self.emit(Finished(outcome.status, outcome.exit_code, record, outcome.message))

    async def _converse(self, prompt: str, *, new_chat: bool, resume: bool) -> Outcome:
        await asking.open_chat(self, new_chat=new_chat, resume=resume)
        conv = Conversation(first_attempt=self.attempt + 1, target=self.target)
        pending = self.history.pending_prompt(self.recorder.session_id) if resume else None
        if pending is not None and isinstance(self.llm, Reattaches):
            turn = await asking.reattach(self, pending, prompt)
        elif pending is not None and not prompt.strip():
            row = self.recorder.session_row()
            raise LLMError(f"session {row.get('id')}'s last answer is still pending in "
                           f"{row.get('conversation_url')}, but {self.llm.name} cannot wait for "
                           f"it again: resume with the chat site's LLM (--llm "
                           f"{row.get('llm')}), or give a prompt to send")
        else:
            fresh = new_chat and not resume
            turn = await asking.first_turn(self, prompt, conv.target, fresh=fresh)
        while True:
            step = await self._attempt(turn, conv)
            if isinstance(step, Outcome):
                return step
            turn = step

    async def _attempt(self, turn: Turn, conv: Conversation) -> Step:
        if turn.answer is not None:
            prompt_id, answer = turn.prompt_id, turn.answer
        else:
            prompt_id, answer = await asking.ask(self, await asking.compose(self, turn, conv))
        self.attempt += 1
        n = self.attempt
        used = conv.used(n)
        code = await extracting.extract_code(self, n, answer)
        if code.planned is not None and code.planned.problems:
            return extracting.not_applied(self, n, used, code.planned)
        if not code.entry:
            self.emit(Notice("the answer holds no program to run", "warning"))
            return self.retry(used, "no program", Turn(prompts.no_code_prompt(), "feedback"))
        again = extracting.dedupe(self, n, code, conv)
        if again is not None:
            return self.retry(used, "no working program", again)
        if not await extracting.save(self, n, prompt_id, code, conv):
            return self.retry(used, "no program", Turn(prompts.no_code_prompt(), "feedback"))
        step = await approving.approve(self, n, used, code, conv)
        if not isinstance(step, Code):
            return step
        target = await follow_switch(self, conv)
        python = await install_missing(self, target, step.files, step.ex)
        result, verdict = await execute(self, target, n, step, python)
        conv.previous = step.files
        self.tree.ran(step.files, step.entry)
        if verdict.ok:
            return await verifying.verify(self, n, used, result, verdict, step, target)
        return await after_run(self, result, verdict, used)


async def drain(events: AsyncIterator[Event], handler: EventHandler) -> Finished | None:
    """Dispatch every event to the front end's handler; return the Finished event."""
    finished = None
    async for ev in events:
        await dispatch(handler, ev)
        if isinstance(ev, Finished):
            finished = ev
    return finished


__all__ = ["VerifyLoop", "drain", "Decision", "FeedbackDecision"]
