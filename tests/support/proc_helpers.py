"""Processes by pid, as /proc shows them: whether a program still runs, and cleaning up.

Many tests end by asking whether what a program started outlived it; they ask
it here, the one place that knows a zombie no longer runs anything.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie (a zombie runs nothing any more)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def all_gone(pids: Iterable[int], within: float = 10) -> bool:
    """Whether every one of ``pids`` has stopped running, waiting up to ``within`` seconds."""
    pids = list(pids)
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not any(alive(p) for p in pids)


def kill_all(pids: Iterable[int]) -> None:
    """SIGKILL each of ``pids`` that is still there: a test's cleanup, whatever it asserted."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _status(pid: int, key: str) -> list[str]:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return line.split()[1:]
    except OSError:
        pass
    return []


def pids_seen_as(inner: int) -> list[int]:
    """Every process whose pid in its own (innermost) PID namespace is ``inner``: a
    program in a sandbox reads another number for itself than this machine does."""
    return [int(d) for d in os.listdir("/proc") if d.isdigit()
            and (_status(int(d), "NSpid") or ["0"])[-1] == str(inner)]


def below(pid: int, ancestor: int) -> bool:
    """Whether ``pid`` is ``ancestor`` or one of its descendants (by parent links)."""
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid <= 1:
            return False
        pid = int((_status(pid, "PPid") or ["0"])[0])
    return False


def tagged(tag: str) -> list[int]:
    """Host pids of the live processes (not this one) whose command line holds ``tag``:
    what a sandboxed run left behind, found by a word only its own program carries."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cmd = Path(f"/proc/{entry.name}/cmdline").read_bytes()
            except OSError:
                continue
            if tag.encode() in cmd and alive(int(entry.name)):
                found.append(int(entry.name))
    return found
