"""The feed-back step: what a failed run sends the LLM next, or why the session ends.

A target error or the last attempt ends the session; otherwise the run's output and
the verdict's reason (with a note on a hand edit) go back as the feedback prompt,
shown first to the user who asked to review it (--review-feedback).
"""

from __future__ import annotations

from functools import partial

from verifybot_tui.core.base.errors import EXIT_FAILED, TargetError
from verifybot_tui.core.base.outcome import Outcome, Status, attempts
from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.core.loop import prompts
from verifybot_tui.core.loop.events import FeedbackDecision, FeedbackReady
from verifybot_tui.core.loop.steps.state import LoopState, Step, Turn
from verifybot_tui.core.verify.verdict import Verdict


async def after_run(loop: LoopState, result: RunResult, verdict: Verdict, used: int) -> Step:
    """The session ends on a target error or the last attempt; else feedback."""
    if verdict.status == "target_error":
        return Outcome(Status.TARGET_ERROR, TargetError.exit_code, verdict.reason)
    if used >= loop.max_attempts:
        return Outcome.failed(f"still failing after {attempts(used)}: {verdict.reason}")
    text = prompts.feedback_prompt(
        result, verdict.reason, attempt=used, max_attempts=loop.max_attempts,
        retry_hint=verdict.retry_hint, edit_note=loop.pending_edit_note)
    loop.pending_edit_note = ""
    if loop.review_feedback and not loop.auto_accept:
        fd: FeedbackDecision = await loop.wait(partial(FeedbackReady, text))
        if not fd.send:
            return Outcome(Status.STOPPED, EXIT_FAILED,
                           "stopped by the user before sending feedback")
        text = fd.text or text
    return Turn(text, "feedback")
