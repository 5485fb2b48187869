"""What the verify loop tells its front ends, and the decisions it waits for.

The loop yields these events in order; where it needs the user it yields an
event carrying an ``asyncio.Future`` and waits until a front end resolves it
(the CLI from stdin or ``--yes``, the TUI from its approval bar).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from verifybot_tui.targets.base import ProgramFile, RunResult

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
class Event:
    pass


@dataclass
class SessionStarted(Event):
    session_id: int
    slug: str
    target: str
    llm: str
    transcript: str  # path of the raw_md transcript


@dataclass
class Notice(Event):
    text: str
    level: Literal["info", "warning", "error"] = "info"


@dataclass
class PromptSent(Event):
    text: str
    kind: str  # "initial", "feedback", "edit", "reject", "duplicate", "free"
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
    command: str = ""


@dataclass
class Output(Event):
    stream: str  # "stdout" or "stderr"
    text: str


@dataclass
class RunFinished(Event):
    attempt: int
    result: RunResult
    output_file: str


@dataclass
class VerdictReached(Event):
    attempt: int
    verdict: Any  # core.verdict.Verdict


@dataclass
class Finished(Event):
    status: str  # "SUCCESS", "FAILED", "STOPPED", "LLM_ERROR", "TARGET_ERROR", "INTERRUPTED"
    exit_code: int
    record: dict[str, Any]
    message: str = ""
