"""What one local process came to, and the ``RunResult`` a run makes of it (with the
files the program changed and what its build said).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from verifybot_tui.core.base.ports import OutputCallback, RunResult
from verifybot_tui.targets.local.run_folder import snapshot

EXIT_NOT_FOUND = 127  # what a shell reports for a missing command


@dataclass
class Outcome:
    """One ended process: its exit, its output (bounded) and how it ended."""

    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool
    stdout_bytes: int
    stderr_bytes: int
    interrupted: bool = False  # stopped from outside (close()) rather than by the timeout
    escaped: list[str] = field(default_factory=list)  # found in the cgroup after the stop
    limit: str = ""  # the limit the run hit, in words ("" none)


def result(run: Outcome, command: str, workdir: Path, *, compile_failed: bool = False,
           files_changed: list[str] | None = None) -> RunResult:
    """The RunResult of a finished (build or program) process."""
    return RunResult(
        exit_code=run.exit_code, stdout=run.stdout, stderr=run.stderr,
        duration=run.duration, timed_out=run.timed_out, compile_failed=compile_failed,
        files_changed=files_changed or [], command=command, workdir=str(workdir),
        stdout_bytes=run.stdout_bytes, stderr_bytes=run.stderr_bytes, escaped=run.escaped,
        target_error="stopped: the target was closed" if run.interrupted else None,
        diagnosis=run.limit)


def ran(done: Outcome, command: str, workdir: Path, before: dict[str, tuple[int, int]],
        written: set[str], built: Outcome | None) -> RunResult:
    """A program's result: the files it changed in its run folder (not those we wrote)
    and the warnings of a build that passed."""
    after = snapshot(workdir)
    changed = sorted(name for name, stat in after.items()
                     if before.get(name) != stat and name not in written)
    made = result(done, command, workdir, files_changed=changed)
    if built is not None:
        made.build_stderr = built.stderr
        made.build_seconds = round(built.duration, 3)
    return made


def not_started(message: str, workdir: Path, on_output: OutputCallback) -> RunResult:
    """A run that could not start (no such language, tool or interpreter): the message,
    passed on as the run's stderr, and a shell's exit for a missing command."""
    text = message + "\n"
    on_output("stderr", text)
    return RunResult(exit_code=EXIT_NOT_FOUND, stdout="", stderr=text, duration=0.0,
                     workdir=str(workdir), stderr_bytes=len(text.encode()))
