"""Whether a process id is alive on this machine: one check for every lock and record.

history.db marks a session interrupted when its process is gone; the browser
profile lock is stale when its owner is gone. Both ask here.

A ``kill -9``ed process whose parent has not reaped it yet is a zombie: it still
answers ``kill(pid, 0)`` but will never write another row, so it counts as gone.
"""

from __future__ import annotations

import os


def pid_alive(pid: int | None) -> bool:
    """True when a process with this id exists (one we may not signal counts) and is
    not a zombie."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return _state(pid) not in ("Z", "X")


def _state(pid: int) -> str:
    """The process's state letter from /proc ("" where it cannot be read)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("ascii", "replace")
        return raw[raw.rindex(")") + 2:].split()[0]
    except (OSError, ValueError, IndexError):
        return ""
