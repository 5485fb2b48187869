"""The ports of core: what the loop needs from an LLM and from a target machine.

core/ owns these protocols and value types because core is what uses them;
llm/ and targets/ implement them and import them from here, so the layers
point one way only (tui and cli above llm and targets, those above core).

A target probes its context, puts files in place, runs a program with its
output streamed and a timeout, and stops it with its whole process tree.
Cancelling the task that awaits ``Target.run`` is how a run is stopped: the
target kills the tree in its ``finally`` and lets the ``CancelledError`` through.

An LLM backend starts a new chat, sends a prompt (new or follow-up) while
streaming the answer's text, returns the answer's final markdown, and says where
the conversation lives so a session can be resumed in it later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

# (stream, text): stream is "stdout" or "stderr"; text is decoded with
# errors="replace" and may hold any bytes the program wrote, escapes included.
OutputCallback = Callable[[str, str], None]


@dataclass(frozen=True)
class ProgramFile:
    """One extracted file as the target sees it."""

    name: str  # its name in the run folder: the answer's hint, e.g. "main.py"
    saved_name: str  # its versioned name under programs/, e.g. "main_2.py"
    content: str
    language: str  # a core.answers.languages name, or a non-program language


@dataclass
class RunRequest:
    run_id: str  # "<slug>_<n>": names the run's working folder
    files: list[ProgramFile]
    entry: str  # the ProgramFile.name to run
    language: str
    timeout: float
    long_running: bool = False  # static analysis: may not end by itself
    python: str | None = None  # interpreter override (a venv's python)
    # A recipe's build for C/C++: another compiler, and flags that replace the default
    # ones (e.g. ["-Wall", "-Werror"]); empty means the language's own build command.
    compiler: str = ""
    flags: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    exit_code: int | None  # None when killed (timeout, cancel) or never started
    stdout: str  # possibly cut in the middle (targets.capture); outputs/ has all
    stderr: str
    duration: float
    timed_out: bool = False
    cancelled: bool = False
    compile_failed: bool = False  # stderr/stdout then carry the compiler's output
    build_stderr: str = ""  # a build that passed: what the compiler wrote (its warnings)
    # Why a recipe's compiler and flags may not have held for this build (an answer's own
    # Makefile that bypassed them); "" when they did. compiles-clean cannot tell then.
    build_unchecked: str = ""
    build_seconds: float | None = None  # the build's part of the run (None: nothing built)
    files_changed: list[str] = field(default_factory=list)  # relative to the run folder
    command: str = ""  # what ran, for the transcript
    target_error: str | None = None  # e.g. connection lost mid-run; output so far kept
    workdir: str = ""
    stdout_bytes: int = 0  # totals as written by the program, before any cut
    stderr_bytes: int = 0
    escaped: list[str] = field(default_factory=list)  # "PID (name) killed": left the tree
    # What the target saw go wrong from outside the program (an mcu target: a firmware's
    # fault with its function and line, a hang, silence on the UART): the verdict's reason.
    diagnosis: str = ""

    @property
    def ended(self) -> str:
        """How the run ended, in words a user reads: never "exit status None"."""
        if self.timed_out:
            return "timed out"
        if self.cancelled:
            return "stopped"
        if self.target_error:
            return f"target error: {self.target_error}"
        if self.exit_code is None:
            return "ended with no exit status (killed)"
        return f"exit status {self.exit_code}"


class Prompter(Protocol):
    """How a target asks the user something (host key trust, a password).

    The CLI answers on stdin, the TUI in a dialog, tests with fixed answers.
    """

    async def confirm(self, question: str) -> bool: ...

    async def secret(self, question: str) -> str | None: ...


class Target(Protocol):
    name: str
    kind: str  # "local", "ssh" or "mcu"
    state: str  # "disconnected", "connecting", "connected", "error"

    def on_state(self, listener: StateCallback) -> None:
        """Report each change of ``state`` (ReportsState does it)."""

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


# Called with a backend's new state each time it changes.
StateCallback = Callable[[str], None]


class ReportsState:
    """A backend's ``state`` that tells its listeners each time it changes.

    State changes deep inside a backend (a browser crash, an SSH drop); a front
    end that shows it registers ``on_state`` instead of polling the attribute.
    """

    _state = ""

    @property
    def state(self) -> str:
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        if value == self._state:
            return
        self._state = value
        for listener in list(self.__dict__.get("_state_listeners", ())):
            listener(value)

    def on_state(self, listener: StateCallback) -> None:
        """Call ``listener(state)`` on every change from now on."""
        self.__dict__.setdefault("_state_listeners", []).append(listener)


# Called with the answer's whole text so far (not a delta) each time it grows.
TextCallback = Callable[[str], None]


@dataclass
class Answer:
    markdown: str  # the model's own markdown, fences and language tags included
    conversation_url: str | None = None
    renderer: str = ""  # the site's page layout that gave it (browser backends), for records
    resumable: bool = True  # False: a temporary chat the site will not reopen
    thinking: str = ""  # the model's reasoning, when it shows it: never part of the answer
    details: str = ""  # for the transcript: provider, model, token usage (API backends)
    model: str = ""  # the model that answered, as the page or the API named it ("": unknown)


@runtime_checkable
class ShowsThinking(Protocol):
    """A backend (the HTTP API ones) that streams the model's reasoning apart from the
    answer and tells of its waits (a rate limit); the loop turns both into events."""

    on_thinking: TextCallback | None
    on_notice: Callable[[str], None] | None


@runtime_checkable
class Reattaches(Protocol):
    """A backend (a chat site) whose answers outlive its wait: after an AnswerPending it
    reopens the conversation (``resume``) and waits for the same answer, unsent again."""

    async def reattach(self, prompt: str, on_text: TextCallback | None = None) -> Answer:
        """Wait for the answer to ``prompt``, the conversation's last message."""


@runtime_checkable
class InstallsNodePackages(Protocol):
    """A target that installs a ``package.json``'s npm packages where its runs find them
    (the local one); on others the loop says the packages are not installed."""

    async def missing_node_packages(self, names: list[str]) -> list[str]:
        """Which of these npm packages the target's runs cannot find."""

    async def install_node_packages(self, specs: list[str], on_output: OutputCallback) -> None:
        """npm install the specs (``express@^4.18.2``); InstallError says why not."""


class LLMBackend(Protocol):
    name: str
    state: str  # "stopped", "starting", "logged_out", "idle", "streaming", "error"
    conversation_url: str | None

    def on_state(self, listener: StateCallback) -> None:
        """Report each change of ``state`` (ReportsState does it)."""

    async def start(self) -> None:
        """Get ready to answer (launch the browser...). Raises LLMError."""

    async def new_chat(self) -> None:
        """The next prompt opens a new conversation."""

    async def resume(self, conversation_url: str) -> None:
        """The next prompt goes to this existing conversation."""

    async def ask(self, prompt: str, on_text: TextCallback | None = None) -> Answer:
        """Send a prompt in the current conversation and wait for the whole answer."""

    async def close(self) -> None:
        """Close the browser or files; the login profile stays on disk."""
