"""Whether a process id is alive on this machine: one check for every lock and record.

history.db marks a session interrupted when its process is gone; the browser
profile lock is stale when its owner is gone. Both ask here.
"""

from __future__ import annotations

import os


def pid_alive(pid: int | None) -> bool:
    """True when a process with this id exists (one we may not signal counts)."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
