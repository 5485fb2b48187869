"""The loop's front end for an MCP call: what happens is told as progress notifications.

Nobody is at a terminal, so the answers a headless run gives are given (batch's
``Headless``: every version accepted, an unreadable judgement a failure), except the
install question: packages are installed for an MCP client only where the user's
own config says ``[mcp] install = true``. Output goes to the client as it comes, as
the message of a progress notification, up to a cap (the whole output stays in the
run's output file, a resource of the run).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from verifybot_tui.batch.headless import Headless
from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.core.loop import events

# (progress, message): what a call reports; progress only grows.
Report = Callable[[float, str], Awaitable[Any]]
STREAM_CAP = 256 * 1024  # characters of output streamed per call; the rest is in the file
FLUSH_AFTER = 0.1  # seconds a part of a line waits for the rest before it is sent


class McpHandler(Headless):
    def __init__(self, name: str, report: Report, *, may_install: bool) -> None:
        super().__init__(name)
        self.report = report
        self.may_install = may_install
        self.progress = 0.0
        self.streamed = 0
        self.result: RunResult | None = None
        self.session_id: int | None = None
        self.transcript = ""
        self.notes: list[str] = []  # warnings and errors the loop told, for the result
        self.attempts = 0
        self.files: list[dict[str, str]] = []  # the last attempt's files
        self.entry = ""
        self._pending: tuple[str, str] | None = None  # (stream, text) not sent yet
        self._timer: asyncio.TimerHandle | None = None

    async def say(self, message: str) -> None:
        self.progress += 1
        try:
            await self.report(self.progress, message)
        except Exception as e:  # a client gone mid-call: the run still ends and is kept
            print(f"[verifybot mcp] progress not sent: {e}", file=sys.stderr)

    async def on_session_started(self, ev: events.SessionStarted) -> None:
        self.session_id = ev.session_id
        self.transcript = ev.transcript
        await self.say(f"run {ev.session_id} on {ev.target}")

    async def on_notice(self, ev: events.Notice) -> None:
        if ev.level != "info":
            self.notes.append(ev.text)
        await self.say(ev.text)

    async def on_prompt_sent(self, ev: events.PromptSent) -> None:
        await self.say(f"attempt {ev.attempt}: prompt sent ({ev.kind})")

    async def on_answer_done(self, ev: events.AnswerDone) -> None:
        await self.say("answer received")

    async def on_code_ready(self, ev: events.CodeReady) -> None:
        self.files = [{"path": f.name, "content": f.content} for f in ev.files]
        self.entry = ev.entry
        await self.say(f"attempt {ev.attempt}: files "
                       f"{', '.join(f.name for f in ev.files)}")

    async def on_permission_needed(self, ev: events.PermissionNeeded) -> None:
        ev.answer.set_result(self.may_install)
        if not self.may_install:
            self.notes.append(
                f"not installed: {', '.join(ev.packages)}. Installs for MCP clients need the "
                "user's own config to allow them: [mcp] install = true")

    async def on_run_started(self, ev: events.RunStarted) -> None:
        self.attempts = ev.attempt
        await self.say(f"attempt {ev.attempt}: running on {ev.target}")

    async def on_output(self, ev: events.Output) -> None:
        """Whole lines as they come (a UART gives one character at a time); a line still
        growing goes out after a tenth of a second."""
        if self.streamed >= STREAM_CAP:
            return
        text = ev.text[:STREAM_CAP - self.streamed]
        self.streamed += len(text)
        if self.streamed >= STREAM_CAP:
            text += "\n[more output: read the run's output resource]\n"
        if self._pending and self._pending[0] != ev.stream:
            await self._flush()
        stream, kept = self._pending or (ev.stream, "")
        self._pending = (stream, kept + text)
        if "\n" in text:
            await self._flush(lines_only=True)
        if self._pending and self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(
                FLUSH_AFTER, lambda: asyncio.ensure_future(self._flush()))

    async def _flush(self, lines_only: bool = False) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending:
            return
        stream, text = self._pending
        cut = text.rfind("\n") + 1 if lines_only else len(text)
        out, rest = text[:cut], text[cut:]
        self._pending = (stream, rest) if rest else None
        if out:
            await self.say(out if stream == "stdout" else f"[stderr] {out}")

    async def on_run_finished(self, ev: events.RunFinished) -> None:
        await self._flush()
        self.result = ev.result

    async def on_verdict_reached(self, ev: events.VerdictReached) -> None:
        await self.say(f"attempt {ev.attempt}: {ev.verdict.status}: {ev.verdict.reason}")

    async def on_judged(self, ev: events.Judged) -> None:
        self.judgements.append(f"judgement {ev.attempt}: {ev.judgement.line}")
        await self.say(f"judge: {ev.judgement.line}")

    async def on_finished(self, ev: events.Finished) -> None:
        await self.say(f"{ev.status}" + (f": {ev.message}" if ev.message else ""))
