"""Processes by pid, as /proc shows them: whether a program still runs, and cleaning up.

Many tests end by asking whether what a program started outlived it; they ask
it here, the one place that knows a zombie no longer runs anything.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable


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
