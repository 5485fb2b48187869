"""The run marker: ``VERIFYBOT_RUN=<token>`` in a run's environment, which every
process the program starts inherits (a setsid double fork too), so what escaped
its tree is still found by it, frozen and killed.

Leftovers are frozen (SIGSTOP) until no new one appears, then KILLed
(``freeze_and_kill``): a daemon that keeps re-forking cannot outrun the scan,
since a stopped process forks no more.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import signal
import time
from collections.abc import Callable

from verifybot_tui.targets.containment.proctable import children, descendants, describe, zombie

MARKER = "VERIFYBOT_RUN"  # the variable that tags every process of one run
_counter = itertools.count(1)


def new_token() -> str:
    """A token unique to one run, for its ``VERIFYBOT_RUN`` variable."""
    return f"{os.getpid()}-{next(_counter)}-{secrets.token_hex(8)}"


def marker_pids(token: str) -> list[int]:
    """Live processes of our user whose environment carries ``VERIFYBOT_RUN=token``."""
    if not token or not os.path.isdir("/proc/self"):
        return []
    needle = f"{MARKER}={token}".encode()
    me, uid = os.getpid(), os.getuid()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if uid != 0 and entry.stat().st_uid != uid:
                continue  # root reads every user's: a child may have changed its uid
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle + b"\0" in env or env.endswith(needle):
            if not zombie(int(entry.name)):
                found.append(int(entry.name))
    return found


def kill_marked(token: str, extra: Callable[[], set[int]] | None = None
                ) -> tuple[list[str], list[str]]:
    """KILL every process carrying the run's marker, and what ``extra`` finds (adopted
    orphans), with all their descendants: (named killed, named not killable)."""
    if not token and extra is None:
        return [], []
    return freeze_and_kill(lambda: set(marker_pids(token)) | (extra() if extra else set()))


def _with_descendants(pids: set[int]) -> set[int]:
    return descendants(pids, children()) - {os.getpid()}


def freeze_and_kill(find: Callable[[], set[int]], passes: int = 5
                    ) -> tuple[list[str], list[str]]:
    """Stop (SIGSTOP) what ``find`` returns, its process groups and all its
    descendants, again and again until no new process shows up, then KILL them all:
    a process that keeps forking cannot outrun a scan, since a stopped process forks
    no more. A child forked at the very moment of a stop is found by the next pass.
    Returns (named killed, named not killable)."""
    names: dict[int, str] = {}
    mine = {os.getpgid(0), os.getsid(0)}
    for _ in range(passes):
        if not _freeze(find, names, mine):
            break
        for pid in names:
            hold(pid, mine, signal.SIGKILL)
    left = set(names)
    deadline = time.monotonic() + 2.0
    while left and time.monotonic() < deadline:
        left = {p for p in left if not zombie(p)}  # a zombie runs nothing any more
        if left:
            time.sleep(0.01)
    return [n for p, n in names.items() if p not in left], [names[p] for p in left]


def _freeze(find: Callable[[], set[int]], names: dict[int, str], mine: set[int],
            rounds: int = 200) -> bool:
    """Stop what ``find`` returns until nothing new shows up; True if any was new."""
    grew = False
    misses = 0
    for _ in range(rounds):
        new = {p for p in _with_descendants(find() | set(names)) - set(names)
               if not zombie(p)}
        if not new:
            # A daemon that hops (fork, exit, again) can be between pids during one
            # scan of /proc; before anything is found, a few more scans make that
            # unlikely to repeat (each costs milliseconds).
            misses += 1
            if grew or misses >= 4:
                break
            time.sleep(0.002)
            continue
        grew = True
        for pid in new:
            names[pid] = describe(pid)
            hold(pid, mine)
    return grew


def hold(pid: int, mine: set[int], sig: int = signal.SIGSTOP) -> None:
    """SIGSTOP (or ``sig``) a process and its whole process group, never VerifyBot's
    own (``mine``: its group and session): a daemon that forks and exits in a loop
    keeps its group, and a group is stopped in one call, hop or no hop."""
    with contextlib.suppress(OSError):
        group = os.getpgid(pid)
        if group not in mine and group > 1:
            os.killpg(group, sig)
    with contextlib.suppress(OSError):
        os.kill(pid, sig)
