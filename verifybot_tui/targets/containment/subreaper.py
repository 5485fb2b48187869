"""Without a sandbox: VerifyBot as the reaper of what its runs orphan.

VerifyBot makes itself a child subreaper, so a double-forked process that wiped its
environment and left the cgroup is reparented to VerifyBot rather than to init, and
is found as an adopted child (``adopted``); the zombies of such orphans are
collected while runs go on (``reap_while_running``), or a daemon that keeps
re-forking would fill the process table with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Iterable

from verifybot_tui.targets.containment.markers import MARKER, hold
from verifybot_tui.targets.containment.proctable import children, start_time, zombie
from verifybot_tui.targets.containment.tree import LIVE_ROOTS

PR_SET_CHILD_SUBREAPER = 36
_SUBREAPER: list[bool] = []
OWN_PIDS: set[int] = set()  # short commands VerifyBot itself runs in a session of their own


def reap(pids: Iterable[int]) -> None:
    """Collect the exit status of those of ``pids`` that are our (adopted) children:
    a subreaper must, or they stay zombies."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.waitpid(pid, os.WNOHANG)


def _my_children() -> list[int]:
    """VerifyBot's direct children (adopted ones too), from /proc/self/task/*/children."""
    pids: list[int] = []
    try:
        for task in os.scandir("/proc/self/task"):
            with open(f"{task.path}/children", encoding="ascii") as f:
                pids += [int(p) for p in f.read().split()]
    except OSError:
        return children().get(os.getpid(), [])
    return pids


def _foreign(pid: int, skip: set[int]) -> bool:
    """A child VerifyBot did not start: not a run's root, not one of its own short
    commands, and in another session than VerifyBot's (what a library such as
    Playwright starts stays in VerifyBot's session; a run's escapee left it)."""
    if pid in skip or pid in OWN_PIDS:
        return False
    try:
        return os.getsid(pid) != os.getsid(0)
    except OSError:
        return False


def reap_adopted(skip: set[int]) -> None:
    """Collect the zombies of orphans adopted as subreaper (or a daemon that keeps
    re-forking would fill the process table with them)."""
    if _SUBREAPER and _SUBREAPER[0]:
        reap(p for p in _my_children() if zombie(p) and _foreign(p, skip))


async def reap_while_running() -> None:
    """While a run without a sandbox goes on: collect its adopted orphans' zombies."""
    while True:
        reap_adopted(LIVE_ROOTS)
        await asyncio.sleep(0.05)


def become_subreaper() -> bool:
    """Make VerifyBot the child subreaper (once): orphans of its runs come to it."""
    if not _SUBREAPER:
        ok = False
        if sys.platform.startswith("linux"):
            libc = ctypes.CDLL(None, use_errno=True)
            ok = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        _SUBREAPER.append(ok)
    return _SUBREAPER[0]


def adopted(since: int, skip: set[int], other_tokens: Iterable[str]) -> set[int]:
    """Children of VerifyBot that it did not start: orphans of a run, reparented to
    it as subreaper. Each is stopped at once (a daemon that keeps re-forking is only
    caught by a stop that comes before its next hop), then looked at: one started
    before ``since`` (clock ticks) or carrying another live run's marker is let go."""
    if not _SUBREAPER or not _SUBREAPER[0]:
        return set()
    needles = [f"{MARKER}={t}".encode() for t in other_tokens if t]
    mine = {os.getpgid(0), os.getsid(0)}
    found = set()
    for pid in _my_children():
        if not _foreign(pid, skip):
            continue
        hold(pid, mine)
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            env = b""
        if (start_time(pid) or 0) < since or any(n + b"\0" in env or env.endswith(n)
                                                  for n in needles):
            hold(pid, mine, signal.SIGCONT)
        else:
            found.add(pid)
    return found
