"""The per-user lock file beside each place held: tells a live VerifyBot from a killed one.

The coordinator only knows that ``host/user`` holds a place, not which process;
the kernel drops a file lock when its process dies, however it died. Holding a
place (claim.py) takes the lock; doctor's listing (session.py) and a start's
check (preflight.py) read it, and nothing else here talks to the coordinator.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path


def lock_folder() -> Path:
    """Where the locks are: the user's state folder (XDG_STATE_HOME), verifybot/labgrid."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "verifybot" / "labgrid"


def lock_path(address: str, place: str) -> Path:
    """The lock file of one place of one coordinator."""
    key = hashlib.sha256(f"{address}\0{place}".encode()).hexdigest()[:16]
    return lock_folder() / f"{place[:40].replace('/', '_')}-{key}.lock"


def try_lock(address: str, place: str) -> tuple[int | None, Path]:
    """The place's lock taken (its open file), or None when a live VerifyBot holds it."""
    path = lock_path(address, place)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None, path
    return fd, path


def held_by_me(address: str, place: str) -> str:
    """What holds a place this user has acquired, as its lock file tells (never made or
    changed here): a running VerifyBot, one that ended (the next start releases it), or
    the user's own labgrid-client session."""
    path = lock_path(address, place)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return "your own labgrid-client session, not VerifyBot's: used as it is"
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return f"a running VerifyBot of yours, pid {pid_in(path)}"
    finally:
        os.close(fd)
    if not path.stat().st_size:
        return "your own labgrid-client session, not VerifyBot's: used as it is"
    return (f"left by a VerifyBot of yours that ended, pid {pid_in(path)}: the next run "
            "releases it")


def pid_in(path: Path) -> str:
    """The pid a lock file names, for a message ("?" when unreadable)."""
    try:
        return path.read_text().strip() or "?"
    except OSError:
        return "?"


def unlock(fd: int) -> None:
    """Drop a lock taken with try_lock and close its file."""
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
