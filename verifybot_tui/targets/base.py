"""The target protocol: what the loop needs from a machine that runs programs.

A target probes its context, puts files in place, runs a program with its
output streamed and a timeout, and stops it with its whole process tree.
Cancelling the task that awaits ``run`` is how a run is stopped: the target
kills the tree in its ``finally`` and lets the ``CancelledError`` through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

# (stream, text): stream is "stdout" or "stderr"; text is decoded with
# errors="replace" and may hold any bytes the program wrote, escapes included.
OutputCallback = Callable[[str, str], None]


@dataclass(frozen=True)
class ProgramFile:
    """One extracted file as the target sees it."""

    name: str  # its name in the run folder: the answer's hint, e.g. "main.py"
    saved_name: str  # its versioned name under programs/, e.g. "main_2.py"
    content: str
    language: str  # a core.languages name, or a non-program language


@dataclass
class RunRequest:
    run_id: str  # "<slug>_<n>": names the run's working folder
    files: list[ProgramFile]
    entry: str  # the ProgramFile.name to run
    language: str
    timeout: float
    long_running: bool = False  # static analysis: may not end by itself
    python: str | None = None  # interpreter override (a venv's python)


@dataclass
class RunResult:
    exit_code: int | None  # None when killed (timeout, cancel) or never started
    stdout: str  # possibly cut in the middle (see OutputCapture); outputs/ has all
    stderr: str
    duration: float
    timed_out: bool = False
    cancelled: bool = False
    compile_failed: bool = False  # stderr/stdout then carry the compiler's output
    files_changed: list[str] = field(default_factory=list)  # relative to the run folder
    command: str = ""  # what ran, for the transcript
    target_error: str | None = None  # e.g. connection lost mid-run; output so far kept
    workdir: str = ""
    stdout_bytes: int = 0  # totals as written by the program, before any cut
    stderr_bytes: int = 0


class OutputCapture:
    """Keeps the head and tail of a stream so a flood cannot exhaust memory.

    The full output still reaches the caller through the callback (and from
    there ``outputs/``); this is what the verdict and the feedback prompt read.
    """

    def __init__(self, limit: int = 256 * 1024) -> None:
        self.limit = limit
        self.head: list[str] = []
        self.head_len = 0
        self.tail: list[str] = []
        self.tail_len = 0
        self.total = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        if self.head_len < self.limit:
            room = self.limit - self.head_len
            self.head.append(text[:room])
            self.head_len += len(text[:room])
            text = text[room:]
            if not text:
                return
        self.tail.append(text)
        self.tail_len += len(text)
        while self.tail_len > self.limit and len(self.tail) > 1:
            self.tail_len -= len(self.tail.pop(0))

    @property
    def text(self) -> str:
        head = "".join(self.head)
        tail = "".join(self.tail)
        kept = len(head) + len(tail)
        if kept >= self.total:
            return head + tail
        cut = self.total - kept
        return f"{head}\n[... {cut} characters cut ...]\n{tail}"


class Prompter(Protocol):
    """How a target asks the user something (host key trust, a password).

    The CLI answers on stdin, the TUI in a dialog, tests with fixed answers.
    """

    async def confirm(self, question: str) -> bool: ...

    async def secret(self, question: str) -> str | None: ...


class Target(Protocol):
    name: str
    kind: str  # "local" or "ssh"
    state: str  # "disconnected", "connecting", "connected", "error"

    async def connect(self) -> None:
        """Make the target ready (SSH: open the connection). Raises TargetError."""

    async def probe(self) -> str:
        """Describe the machine as markdown and save it as context/<name>.md."""

    async def run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        """Put the files in place, build if needed, run, stream, judge nothing."""

    async def missing_modules(self, modules: list[str], python: str | None = None) -> list[str]:
        """Which of these top-level Python modules cannot be imported there."""

    async def install(self, packages: list[str], on_output: OutputCallback) -> str:
        """Install pip packages into the workspace's venv there; return its python."""

    async def close(self) -> None:
        """Release connections; stop anything still running."""
