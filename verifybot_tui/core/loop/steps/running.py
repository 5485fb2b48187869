"""The run step: the approved version run on the target, its output kept, the run judged.

The run goes to the target in use when the code was approved (a switch while it
was shown counts). Its output streams to the front ends, to outputs/ and to the
criteria's scan, with secrets cut; a target that fails is a run with a target error,
not an exception; a stop while it runs is recorded before it goes on up.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

from verifybot_tui.core.answers.languages import language_named
from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.offload import in_thread
from verifybot_tui.core.base.ports import RunRequest, RunResult, Target
from verifybot_tui.core.loop.events import Output, RunFinished, RunStarted, VerdictReached
from verifybot_tui.core.loop.recorder import OutputFile
from verifybot_tui.core.loop.steps.state import Code, Conversation, LoopState
from verifybot_tui.core.verify.judging import FinishedRun
from verifybot_tui.core.verify.output_scan import OutputScan
from verifybot_tui.core.verify.verdict import Verdict, long_running_signs

MAX_TIMEOUT = 3600.0  # an answer's TIMEOUT line cannot keep a program running longer


async def follow_switch(loop: LoopState, conv: Conversation) -> Target:
    """Switched target while the code was shown: it runs there."""
    if loop.target is not conv.target:
        conv.target = loop.target
        await loop.probe(conv.target)
        loop.recorder.retargeted(conv.target.name)
    return conv.target


async def execute(loop: LoopState, target: Target, n: int, code: Code,
                  python: str | None) -> tuple[RunResult, Verdict]:
    """Run the version with its output kept in outputs/, then judge it."""
    entry = next(f for f in code.files if f.name == code.entry)
    signs = await in_thread(long_running_signs, entry.content, entry.language)
    timeout = loop.timeout
    if code.ex.timeout and code.ex.timeout > timeout:
        timeout = min(code.ex.timeout, MAX_TIMEOUT)
    request = RunRequest(run_id=f"{loop.recorder.slug}_{code.version}", files=code.files,
                         entry=code.entry, language=entry.language, timeout=timeout,
                         long_running=bool(signs), python=python,
                         compiler=loop.verification.compiler,
                         flags=list(loop.verification.flags))
    rec = loop.recorder
    out = rec.run_started(code.version, entry, target.name)
    scan = OutputScan(loop.verification.criteria, rec.max_output_bytes)
    lang = language_named(entry.language)
    try:
        loop.emit(RunStarted(n, target.name, request.run_id))
        result = await _run(loop, target, n, request, out, scan)
        verdict = await loop.judge(FinishedRun(rec.prompt, n, request, result, signs, scan,
                                               builds=bool(lang and lang.compile)))
        rec.run_judged(n, out, target=target.name, result=result, verdict=verdict,
                       timeout=timeout)
    finally:
        out.close()
    loop.emit(RunFinished(n, result, out.rel))
    loop.emit(VerdictReached(n, verdict))
    return result, verdict


async def _run(loop: LoopState, target: Target, n: int, request: RunRequest,
               out: OutputFile, scan: OutputScan) -> RunResult:
    def on_output(stream: str, text: str) -> None:
        text = loop.redact(text)
        out.add(stream, text)
        if stream == "stdout":
            scan.feed(text)
        loop.emit(Output(stream, text))

    started = time.monotonic()
    try:
        result = await target.run(request, on_output)
        return replace(result, stdout=loop.redact(result.stdout),
                       stderr=loop.redact(result.stderr))
    except TargetError as e:
        return RunResult(exit_code=None, stdout="", stderr="",
                         duration=time.monotonic() - started, target_error=str(e))
    except asyncio.CancelledError:
        loop.recorder.run_stopped(n, out)
        raise
