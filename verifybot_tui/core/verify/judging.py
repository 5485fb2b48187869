"""The judge step of the attempt pipeline: a finished run in, a verdict out.

This is the seam where verification plugs in. Today's judge is mechanical
(exit status, output, timeouts: ``core.verify.verdict.judge``); success criteria, sanity
checks or an LLM judging the real output are other ``Judge`` callables the loop
is given, which may call ``mechanical`` first and refine its verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from verifybot_tui.core.base.ports import ProgramFile, RunRequest, RunResult
from verifybot_tui.core.verify.verdict import Verdict, judge


@dataclass(frozen=True)
class FinishedRun:
    """What a judge may look at: the request, the run, and what was asked for."""

    prompt: str  # the user's request, as they typed it
    attempt: int
    request: RunRequest
    result: RunResult
    long_running: list[str] = field(default_factory=list)  # static signs of a server/loop

    @property
    def entry(self) -> ProgramFile:
        return next(f for f in self.request.files if f.name == self.request.entry)


class Judge(Protocol):
    async def __call__(self, run: FinishedRun) -> Verdict: ...


async def mechanical(run: FinishedRun) -> Verdict:
    """Exit status, output and timeouts decide (no criteria, no model)."""
    return judge(run.result, run.long_running, timeout=run.request.timeout)
