"""What the verify loop tells its front ends, and the decisions it waits for.

The loop yields these events in order; where it needs the user it yields an
event carrying an ``asyncio.Future`` and waits until a front end resolves it
(the CLI from stdin or ``--yes``, the TUI from its approval bar).

A front end implements ``EventHandler`` (one method per event) and feeds events
to ``dispatch``, which looks the method up in one table. Adding an event means a
method in the protocol and a row in ``HANDLERS``; the type checker then names
every front end that does not handle it yet.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from verifybot_tui.core.base.outcome import Status
from verifybot_tui.core.base.ports import ProgramFile, RunResult

if TYPE_CHECKING:  # types only: front ends load the judge when a run needs it
    from verifybot_tui.core.verify.llm_judge import Judgement
    from verifybot_tui.core.verify.verdict import Verdict

Action = Literal["accept", "edit", "reject", "stop"]


@dataclass
class Decision:
    """The user's answer at the approval point."""

    action: Action
    files: dict[str, str] | None = None  # for "edit": file name -> new content
    note: str = ""  # for "reject": sent to the LLM when not empty


@dataclass
class FeedbackDecision:
    """The user's answer to a feedback prompt shown before it is sent."""

    send: bool
    text: str = ""  # the prompt to send, possibly edited


@dataclass
class JudgeDecision:
    """The user's word on a judgement (or on a run held by a sanity check).

    "accept": the run is verified; "fail": it goes back to the LLM as a failure with
    the note; "follow": do what the judge said; "stop": end the session.
    """

    action: Literal["accept", "fail", "follow", "stop"]
    note: str = ""


@dataclass
class Event:
    pass


@dataclass
class SessionStarted(Event):
    session_id: int
    slug: str
    target: str
    llm: str
    transcript: str  # path of the raw_md transcript
    attempts_before: int = 0  # a resumed session's earlier attempts (its numbering goes on)


@dataclass
class Notice(Event):
    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass
class PromptSent(Event):
    text: str
    kind: str  # "initial", "feedback", "edit", "reject", "duplicate", "free", "judge"
    attempt: int


@dataclass
class AnswerText(Event):
    text: str  # the whole answer so far


@dataclass
class ThinkingText(Event):
    text: str  # the model's reasoning so far (API backends): shown apart, never the answer


@dataclass
class AnswerDone(Event):
    markdown: str
    conversation_url: str | None = None


@dataclass
class CodeReady(Event):
    attempt: int
    files: list[ProgramFile]
    entry: str
    saved: list[str]  # paths under programs/
    previous: list[ProgramFile] = field(default_factory=list)  # for a diff
    # How the answer made each file of the project tree: "carried" (unchanged from the
    # last run), "whole", "search-replace", "diff", "function", "elided", "renamed".
    how: dict[str, str] = field(default_factory=dict)


@dataclass
class ApprovalNeeded(Event):
    attempt: int
    files: list[ProgramFile]
    entry: str
    decision: asyncio.Future[Decision]


@dataclass
class PermissionNeeded(Event):
    question: str
    packages: list[str]
    answer: asyncio.Future[bool]


@dataclass
class FeedbackReady(Event):
    prompt: str
    decision: asyncio.Future[FeedbackDecision]


@dataclass
class RunStarted(Event):
    attempt: int
    target: str
    run_id: str


@dataclass
class Output(Event):
    # "stdout", "stderr", or "note": a line of VerifyBot's own about the run (a farm's
    # place taken, waited for, released), shown apart and not saved as the program's output
    stream: str
    text: str


@dataclass
class RunFinished(Event):
    attempt: int
    result: RunResult
    output_file: str


@dataclass
class VerdictReached(Event):
    attempt: int
    verdict: Verdict


@dataclass
class Judged(Event):
    """A judge read a passing run's output; the judgement and what it decided."""

    attempt: int
    judgement: Judgement


@dataclass
class JudgementNeeded(Event):
    """The user decides: an unparsable judgement, a run held by a sanity check, or
    (when runs are not auto-accepted) any judgement, which the user may overrule."""

    attempt: int
    judgement: Judgement | None  # None: held by sanity checks with the judge off
    reasons: str  # plain text: why the user is asked
    decision: asyncio.Future[JudgeDecision]


@dataclass
class Finished(Event):
    status: Status
    exit_code: int
    record: dict[str, Any]
    message: str = ""


class EventHandler(Protocol):
    """A front end of the loop: what it does with each event."""

    async def on_session_started(self, ev: SessionStarted) -> None: ...
    async def on_notice(self, ev: Notice) -> None: ...
    async def on_prompt_sent(self, ev: PromptSent) -> None: ...
    async def on_answer_text(self, ev: AnswerText) -> None: ...
    async def on_thinking_text(self, ev: ThinkingText) -> None: ...
    async def on_answer_done(self, ev: AnswerDone) -> None: ...
    async def on_code_ready(self, ev: CodeReady) -> None: ...
    async def on_approval_needed(self, ev: ApprovalNeeded) -> None: ...
    async def on_permission_needed(self, ev: PermissionNeeded) -> None: ...
    async def on_feedback_ready(self, ev: FeedbackReady) -> None: ...
    async def on_run_started(self, ev: RunStarted) -> None: ...
    async def on_output(self, ev: Output) -> None: ...
    async def on_run_finished(self, ev: RunFinished) -> None: ...
    async def on_verdict_reached(self, ev: VerdictReached) -> None: ...
    async def on_judged(self, ev: Judged) -> None: ...
    async def on_judgement_needed(self, ev: JudgementNeeded) -> None: ...
    async def on_finished(self, ev: Finished) -> None: ...


_Handle = Callable[[EventHandler, Any], Awaitable[None]]

# The one table from an event's type to the handler method that takes it.
HANDLERS: dict[type[Event], _Handle] = {
    SessionStarted: lambda h, ev: h.on_session_started(ev),
    Notice: lambda h, ev: h.on_notice(ev),
    PromptSent: lambda h, ev: h.on_prompt_sent(ev),
    AnswerText: lambda h, ev: h.on_answer_text(ev),
    ThinkingText: lambda h, ev: h.on_thinking_text(ev),
    AnswerDone: lambda h, ev: h.on_answer_done(ev),
    CodeReady: lambda h, ev: h.on_code_ready(ev),
    ApprovalNeeded: lambda h, ev: h.on_approval_needed(ev),
    PermissionNeeded: lambda h, ev: h.on_permission_needed(ev),
    FeedbackReady: lambda h, ev: h.on_feedback_ready(ev),
    RunStarted: lambda h, ev: h.on_run_started(ev),
    Output: lambda h, ev: h.on_output(ev),
    RunFinished: lambda h, ev: h.on_run_finished(ev),
    VerdictReached: lambda h, ev: h.on_verdict_reached(ev),
    Judged: lambda h, ev: h.on_judged(ev),
    JudgementNeeded: lambda h, ev: h.on_judgement_needed(ev),
    Finished: lambda h, ev: h.on_finished(ev),
}


async def dispatch(handler: EventHandler, ev: Event) -> None:
    """Hand the event to the handler's method for its type."""
    await HANDLERS[type(ev)](handler, ev)
