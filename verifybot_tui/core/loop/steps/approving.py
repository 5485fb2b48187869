"""The approve step: the user's word on the code before it runs.

Accept runs it, reject asks the LLM for another approach, stop ends the session, and
a hand edit becomes a new version that the LLM hears about with the next prompt.
With runs auto-accepted (--yes) nobody is asked.
"""

from __future__ import annotations

from dataclasses import replace

from verifybot_tui.core.answers.programs import digest
from verifybot_tui.core.base.errors import EXIT_FAILED
from verifybot_tui.core.base.outcome import AttemptState, Outcome, Status
from verifybot_tui.core.loop import prompts
from verifybot_tui.core.loop.events import ApprovalNeeded, Decision, Notice
from verifybot_tui.core.loop.steps.extracting import save_new_version
from verifybot_tui.core.loop.steps.state import Code, Conversation, LoopState, Step, Turn


async def approve(loop: LoopState, n: int, used: int, code: Code,
                  conv: Conversation) -> Step | Code:
    """The user's decision: the code to run, or how the session goes on without it."""
    if loop.auto_accept:
        decision = Decision("accept")
    else:
        decision = await loop.wait(lambda fut: ApprovalNeeded(n, code.files, code.entry, fut))
    rec = loop.recorder
    rec.decision(n, decision)
    if decision.action == "stop":
        rec.attempt_ended(Status.STOPPED)
        return Outcome(Status.STOPPED, EXIT_FAILED, "stopped by the user")
    if decision.action == "reject":
        rec.attempt_ended(AttemptState.REJECTED)
        note = decision.note or "Please try another approach."
        return loop.retry(used, "no accepted program",
                          Turn(prompts.reject_prompt(note), "reject"))
    if decision.action == "edit" and decision.files:
        await _apply_edit(loop, code, decision.files, conv)
    return code


async def _apply_edit(loop: LoopState, code: Code, edits: dict[str, str],
                      conv: Conversation) -> None:
    """A hand edit is a new version, and the LLM hears about it with the next prompt."""
    edited = [replace(f, content=edits.get(f.name, f.content)) for f in code.files]
    if digest(edited) == code.digest:
        return
    loop.pending_edit_note = prompts.edit_note(code.files, edited)
    code.files = edited
    await save_new_version(loop, code, conv)
    saved = loop.recorder.edited(code.version, code.files)
    loop.emit(Notice(f"your edit is saved as {', '.join(saved)}"))
