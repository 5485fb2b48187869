"""The verify step: a run that passed mechanically, checked further and judged.

A run that exited 0 and met its criteria may still be held by sanity checks; with
tests asked for alongside, those run next; then the judge (an LLM, the same chat
or another) or the user has the last word. The session ends VERIFIED or PASSED, or
the judgement goes back to the LLM as the next turn.
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial

from verifybot_tui.core.base.errors import EXIT_FAILED, EXIT_SUCCESS, TargetError
from verifybot_tui.core.base.outcome import Outcome, Status, attempts
from verifybot_tui.core.base.ports import RunRequest, RunResult, Target
from verifybot_tui.core.loop import prompts
from verifybot_tui.core.loop.events import (
    Judged,
    JudgeDecision,
    JudgementNeeded,
    Notice,
    Output,
    PromptSent,
)
from verifybot_tui.core.loop.steps.asking import ask
from verifybot_tui.core.loop.steps.dependencies import install_missing
from verifybot_tui.core.loop.steps.state import Code, LoopState, Step, Turn
from verifybot_tui.core.verify import llm_judge, sanity, tests_alongside
from verifybot_tui.core.verify.llm_judge import Judgement
from verifybot_tui.core.verify.verdict import Verdict


async def verify(loop: LoopState, n: int, used: int, result: RunResult, verdict: Verdict,
                 code: Code, target: Target) -> Step:
    """A mechanical pass: criteria met, then the judge (or the user) has the last word."""
    v = loop.verification
    loop.recorder.checked(n, verdict.checks, verdict.held)
    if v.ask_for_tests:
        failed = await _run_tests(loop, n, used, code, target)
        if failed is not None:
            return failed
    if verdict.held:
        loop.emit(Notice("held for a judgement: " + "; ".join(h.reason for h in verdict.held),
                         "warning"))
    if not v.judging:
        if not verdict.held:
            if v.criteria or v.ask_for_tests:
                what = [f"all {len(v.criteria)} success criteria met"] if v.criteria else []
                what += ["its tests pass"] if v.ask_for_tests else []
                return Outcome(Status.VERIFIED, EXIT_SUCCESS, "; ".join(what))
            return Outcome(Status.PASSED, EXIT_SUCCESS, verdict.reason)
        if loop.auto_accept:
            return _unjudged(loop, n, verdict)
        reasons = "The run exited 0, but:\n" + sanity.text(verdict.held)
        decision = await loop.wait(partial(JudgementNeeded, n, None, reasons))
        loop.recorder.judge_decision(n, decision, None)
        return _judged(loop, used, result, decision, None, reasons)
    j = await _ask_judge(loop, n, result, verdict, code, target)
    loop.emit(Judged(n, j))
    if j.verdict == llm_judge.Verdict.UNPARSABLE or not loop.auto_accept:
        why = (f"The judgement could not be read ({j.reason}); you decide."
               if j.verdict == llm_judge.Verdict.UNPARSABLE else f"The judge says {j.line}")
        decision = await loop.wait(partial(JudgementNeeded, n, j, why))
    else:
        decision = JudgeDecision("follow")
    loop.recorder.judge_decision(n, decision, j)
    return _judged(loop, used, result, decision, j, "")


async def _run_tests(loop: LoopState, n: int, used: int, code: Code,
                     target: Target) -> Step | None:
    """Run the tests written alongside; a failure (or no test file) is the next step."""
    test = tests_alongside.test_file(code.files, code.entry)
    if test is None:
        reason = "It exited 0, but the answer holds no test file (test_main.py) to run."
        loop.recorder.tests(n, None, None)
        loop.emit(Notice(reason, "warning"))
        if used >= loop.max_attempts:
            return Outcome.failed(f"no tests after {attempts(used)}")
        return Turn(prompts.reject_prompt(reason + " " + tests_alongside.PROMPT), "feedback")
    files, entry = tests_alongside.runnable(code.files, test)
    # pytest itself is a dependency of pytest-style tests (the runner imports it).
    python = await install_missing(loop, target, files, code.ex)
    request = RunRequest(run_id=f"{loop.recorder.slug}_{code.version}_tests", files=files,
                         entry=entry, language="python", timeout=loop.timeout,
                         python=python)
    loop.emit(Notice(f"running the tests in {test.name}"))
    started = time.monotonic()
    try:
        result = await target.run(request,
                                  lambda s, t: loop.emit(Output(s, loop.redact(t))))
        result = replace(result, stdout=loop.redact(result.stdout),
                         stderr=loop.redact(result.stderr))
    except TargetError as e:
        result = RunResult(exit_code=None, stdout="", stderr="",
                           duration=time.monotonic() - started, target_error=str(e))
    loop.recorder.tests(n, test.name, result)
    if result.exit_code == 0:
        loop.emit(Notice(f"the tests in {test.name} pass"))
        return None
    if result.target_error:
        return Outcome(Status.TARGET_ERROR, TargetError.exit_code, result.target_error)
    how = "timed out" if result.timed_out else f"exited {result.exit_code}" \
        if result.exit_code is not None else result.ended
    reason = f"The program exited 0, but its tests ({test.name}) failed: they {how}."
    loop.emit(Notice(reason, "warning"))
    if used >= loop.max_attempts:
        return Outcome.failed(f"tests still failing after {attempts(used)}")
    return Turn(prompts.feedback_prompt(result, reason, attempt=used,
                                        max_attempts=loop.max_attempts), "feedback")


async def _ask_judge(loop: LoopState, n: int, result: RunResult, verdict: Verdict, code: Code,
                     target: Target) -> Judgement:
    v = loop.verification
    text = llm_judge.judgement_prompt(
        task=loop.recorder.prompt, result=result, files=code.files, entry=code.entry,
        target=target.name, context=loop.contexts.get(target.name, ""),
        checks=verdict.checks, hits=verdict.held)
    if v.judge_llm is None:  # the same chat: the conversation that wrote the code
        prompt_id, answer = await ask(loop, Turn(text, "judge"))
    else:
        judge = v.judge_llm
        if judge.state == "stopped":
            await judge.start()
        if v.fresh_chat:
            await judge.new_chat()
        text = loop.redact(text)  # a secret never goes to any LLM
        prompt_id = loop.recorder.prompt_sent("judge", text)
        loop.emit(PromptSent(text, "judge", loop.attempt + 1))
        reply = await judge.ask(text)
        answer = reply.markdown
        loop.recorder.judge_answer(prompt_id, answer)
    loop.judge_prompt_id = prompt_id
    j = llm_judge.parse(answer, v.judge)
    loop.recorder.judgement(n, j)
    return j


def _unjudged(loop: LoopState, n: int, verdict: Verdict) -> Outcome:
    """A held run nobody judges (judge off, runs auto-accepted): PASSED, never VERIFIED.

    Sending it back as a failure would make the LLM "fix" a program that may be
    right (a zero can be the answer); calling it verified would hide the doubt. So
    it passes on the exit status alone, with the sanity warnings printed and kept.
    """
    held = "; ".join(h.reason for h in verdict.held)
    loop.recorder.unjudged(n)
    loop.emit(Notice("nobody judges it (judge off, runs auto-accepted): it ends PASSED, "
                     "not VERIFIED; check the warnings yourself", "warning"))
    return Outcome(Status.PASSED, EXIT_SUCCESS,
                   f"exited 0, but held by sanity checks that nobody judged: {held}")


def _judged(loop: LoopState, used: int, result: RunResult, decision: JudgeDecision,
            j: Judgement | None, reasons: str) -> Step:
    """The session's next step after a judgement and the user's word on it."""
    V = llm_judge.Verdict
    action: str = decision.action
    if action == "stop":
        return Outcome(Status.STOPPED, EXIT_FAILED, "stopped by the user at the judgement")
    if action == "follow" and j is not None:
        if j.verdict == V.PASS:
            return Outcome(Status.VERIFIED, EXIT_SUCCESS, "the judge says PASS")
        action = "fail" if j.verdict == V.FAIL else "revise"
        if j.verdict == V.UNPARSABLE:  # nobody decided: not a success
            action = "fail"
    if action == "accept":
        who = "the user accepted it" + (f" over the judge's {j.verdict}" if j else "")
        return Outcome(Status.VERIFIED, EXIT_SUCCESS, who)
    reason = decision.note or (j.reason if j is not None else "") or reasons
    if used >= loop.max_attempts:
        return Outcome.failed(f"judged a failure after {attempts(used)}: {reason}")
    if action == "revise" and j is not None:
        return Turn("", "judge", answer=j.answer, prompt_id=loop.judge_prompt_id)
    if j is not None and not loop.verification.separate and not decision.note:
        return Turn(llm_judge.failure_prompt(j), "feedback")
    why = "It exited 0 but was judged a failure: " + (decision.note or (
        j.reason if j is not None else sanity_reasons(reasons)))
    return Turn(prompts.feedback_prompt(result, why, attempt=used,
                                        max_attempts=loop.max_attempts), "feedback")


def sanity_reasons(reasons: str) -> str:
    """The sanity hold's text as one sentence for the feedback prompt."""
    lines = [ln.removeprefix("- ") for ln in reasons.splitlines()[1:]]
    return "; ".join(lines) + "."
