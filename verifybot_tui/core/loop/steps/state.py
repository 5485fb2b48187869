"""What the steps of an attempt share: the loop's settings, its recorder, its voice.

Every step reads and changes the session through this one object (the verify loop is
one), and the small results that pass from step to step live beside it: the next
``Turn``, the answer's ``Code``, the ``Conversation`` the attempts of one prompt share.
A step that ends the session returns an ``Outcome``; one that needs another answer
returns the next ``Turn``: either is a ``Step``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from verifybot_tui.core.answers.extract import Extraction
from verifybot_tui.core.base.outcome import Outcome, attempts
from verifybot_tui.core.base.ports import LLMBackend, ProgramFile, Target
from verifybot_tui.core.loop.events import Event, Notice
from verifybot_tui.core.loop.project_tree import Planned, ProjectTree
from verifybot_tui.core.loop.recorder import SessionRecorder
from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.settings.secrets import Redactor
from verifybot_tui.core.store.history import History
from verifybot_tui.core.store.workspace import Workspace
from verifybot_tui.core.verify.judging import Judge, mechanical
from verifybot_tui.core.verify.verification import Verification, checked

T = TypeVar("T")


@dataclass(frozen=True)
class Turn:
    """The next prompt to send, and what kind of prompt it is (PromptSent.kind)."""

    text: str
    kind: str
    answer: str | None = None  # already answered (a judge's REVISE): not sent again
    prompt_id: int = 0  # with answer: the prompt it answered


@dataclass
class Code:
    """One answer's program: the extraction, its files, the file to run, its digest."""

    ex: Extraction
    files: list[ProgramFile]
    entry: str
    digest: str = ""
    version: int = 0
    planned: Planned | None = None  # how each file of the tree was made


@dataclass
class Conversation:
    """What the attempts of one prompt share: versions seen, the target in use."""

    first_attempt: int
    target: Target
    seen: dict[str, int] = field(default_factory=dict)  # files digest -> version
    last_version: int = 0
    previous: list[ProgramFile] = field(default_factory=list)  # the last run's, for a diff

    def used(self, n: int) -> int:
        return n - self.first_attempt + 1


Step = Outcome | Turn


class LoopState:
    """The session's settings and what its attempts have learnt so far."""

    def __init__(self, *, config: Config, llm: LLMBackend, target: Target, history: History,
                 max_retries: int | None = None, timeout: float | None = None,
                 auto_accept: bool | None = None, auto_install: bool | None = None,
                 review_feedback: bool = False, workspace: Path | None = None,
                 judge: Judge = mechanical, verification: Verification | None = None) -> None:
        self.config = config
        self.llm = llm
        self.target = target
        self.history = history
        self.workspace = Workspace(workspace or config.workspace).ensure()
        self.max_retries = config.run.max_retries if max_retries is None else max_retries
        self.timeout = config.run.timeout if timeout is None else timeout
        self.auto_accept = config.run.auto_accept if auto_accept is None else auto_accept
        # Installing runs outside the sandbox: a consent of its own (--install, or [run]
        # install in the user's own config), never implied by accepting versions (--yes).
        self.auto_install = config.run.install if auto_install is None else auto_install
        self.review_feedback = review_feedback
        # Criteria and sanity checks refine the judge step; an LLM judge reads passes.
        self._inner_judge = judge
        self.verification = verification or Verification()
        self.judge = checked(self.verification, judge)
        self.session_id: int | None = None
        self.attempt = 0
        self.recorder = SessionRecorder(history, self.workspace)
        # The second guard for secrets: their values are cut from outputs and prompts.
        self.redact = Redactor.for_config(config, self.workspace.root)
        self.emit: Callable[[Event], None] = lambda ev: None
        self.context_target: str | None = None  # whose context the conversation knows
        self.pending_edit_note = ""
        self.pythons: dict[str, str] = {}  # target name -> venv python after an install
        self.contexts: dict[str, str] = {}  # target name -> its latest probe
        self.judge_prompt_id = 0
        self.tree = ProjectTree()  # the chat's files as they last ran

    @property
    def max_attempts(self) -> int:
        return 1 + self.max_retries

    def set_target(self, target: Target) -> None:
        """Run on another target from the next attempt on; its context goes with the next prompt."""
        self.target = target

    def set_verification(self, verification: Verification) -> None:
        """Other criteria or another judge (a recipe opened in the app) from the next run on."""
        self.verification = verification
        self.judge = checked(verification, self._inner_judge)

    def retry(self, used: int, what: str, turn: Turn) -> Step:
        """Ask again, unless that was the last attempt."""
        if used >= self.max_attempts:
            return Outcome.failed(f"{what} after {attempts(used)}")
        return turn

    async def wait(self, make: Callable[[asyncio.Future[T]], Event]) -> T:
        """Emit an event that carries a future, and wait for the front end to resolve it."""
        fut: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self.emit(make(fut))
        return await fut

    async def probe(self, target: Target) -> str:
        """Connect to the target and learn its context (kept, recorded, returned)."""
        self.emit(Notice(f"probing {target.name}"))
        await target.connect()
        context = await target.probe()
        self.contexts[target.name] = context
        self.recorder.context(target.name, context)
        return context
