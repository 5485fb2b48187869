"""One remote program's end, and the run's result made of it.

A run, the build before it and each install step start a program on the Pi the
same way (process.execute) and need the same facts of its end: the channel
fills in the output as it arrives, the process side the status, the stop and
what the program left. Below every other part of the SSH target.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.targets.capture import OutputCapture

EXIT_NOT_FOUND = 127  # what a shell reports for a missing command


def safe_rel(name: str) -> str:
    """A file name confined to its folder (the loop already confines them; belt and braces)."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("/", "..", ".")]
    return "/".join(parts) or "unnamed"


@dataclass
class Outcome:
    """One remote process's end: what the run and install paths both need."""

    exit_code: int | None = None
    stdout: OutputCapture = field(default_factory=OutputCapture)
    stderr: OutputCapture = field(default_factory=OutputCapture)
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    timed_out: bool = False
    cancelled: bool = False
    target_error: str | None = None
    duration: float = 0.0
    files_changed: list[str] = field(default_factory=list)
    escaped: list[str] = field(default_factory=list)  # "PID (name) killed": left the group


def run_result(o: Outcome, command: str, run_dir: str, compile_failed: bool = False) -> RunResult:
    """The run's result: the program's end, with the command as typed in its run folder."""
    return RunResult(
        exit_code=o.exit_code, stdout=o.stdout.text, stderr=o.stderr.text,
        duration=o.duration, timed_out=o.timed_out, cancelled=o.cancelled,
        compile_failed=compile_failed, files_changed=o.files_changed,
        command=f"cd {shlex.quote(run_dir)} && {command}",
        target_error=o.target_error, workdir=run_dir,
        stdout_bytes=o.stdout_bytes, stderr_bytes=o.stderr_bytes, escaped=o.escaped)
