"""What of a run is still alive once its tree was stopped, named for the verdict and
killed: what a sandbox left while it winds down, what escaped into the run's cgroup,
what carries its marker, and (without a sandbox) the orphans VerifyBot adopted.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from verifybot_tui.targets.containment import cgroups
from verifybot_tui.targets.containment.markers import kill_marked, marker_pids
from verifybot_tui.targets.containment.proctable import alive, describe
from verifybot_tui.targets.containment.subreaper import adopted, reap_adopted
from verifybot_tui.targets.containment.tree import LIVE_ROOTS, LIVE_TOKENS


def _ended_by(cgroup: Path | None, token: str, deadline: float) -> bool | None:
    """True once nothing of a sandbox is alive (in its cgroup, or without one carrying
    its marker); False if something is and ``deadline`` has passed; None: look again."""
    pids = cgroups.cgroup_pids(cgroup) if cgroup is not None else marker_pids(token)
    if not any(alive(p) for p in pids):
        return True
    return False if time.monotonic() >= deadline else None


async def sandbox_ended(cgroup: Path | None, token: str, wait: float = 0.5) -> bool:
    """``await_sandbox_end`` without holding the event loop: once the program ended,
    the sandbox winds down by itself in a few milliseconds; the stop that follows
    then finds nothing to signal (and waits for nothing). True once nothing of it
    is alive (False: still there after ``wait``)."""
    deadline = time.monotonic() + wait
    while (ended := _ended_by(cgroup, token, deadline)) is None:
        await asyncio.sleep(0.002)
    return ended


def await_sandbox_end(cgroup: Path | None, token: str, wait: float = 1.0) -> bool:
    """Wait (bounded) for every process of a sandbox to be gone once its outer bwrap
    ended: bubblewrap's own pid 1 tells its exit status before it has exited itself,
    and the kernel's kill of the namespace's other processes takes a moment. Without
    this wait, they would be named as left running, or seen alive after the stop.
    True once nothing of it is alive: in its cgroup, or (none) carrying its marker."""
    deadline = time.monotonic() + wait
    while (ended := _ended_by(cgroup, token, deadline)) is None:
        time.sleep(0.002)
    return ended


def _empty_cgroup(cgroup: Path) -> tuple[list[str], list[int]]:
    """Name what lives in the run's cgroup, KILL it and remove the cgroup: (named, the
    pids still there). A zombie there (a sandbox's pid 1 not yet reaped) ran nothing."""
    names = [describe(pid) for pid in cgroups.cgroup_pids(cgroup) if alive(pid)]
    for _ in range(50):
        if not cgroups.kill_cgroup(cgroup):
            break
        time.sleep(0.01)
    left = cgroups.cgroup_pids(cgroup)
    cgroups.remove_cgroup(cgroup)
    return names, left


def leftover_check(cgroup: Path | None, token: str, since: int,
                   sandbox_ended: bool = False) -> list[str]:
    """Processes still alive once the run's tree was stopped: they escaped it (a
    setsid double fork). Found in the run's cgroup, by the run's marker variable,
    or (without a sandbox) as orphans adopted by VerifyBot since the run started;
    named for the verdict, then killed.

    ``sandbox_ended``: the run's sandbox was seen gone as a whole: its cgroup empty
    (a sandboxed process cannot leave it: no cgroup file system in there, no
    capability to mount one), or without a cgroup no process carrying its marker.
    Nothing leaves a PID namespace and the kernel kills what is in it when it ends,
    so the marker's freeze scans (which catch a daemon hopping from pid to pid
    outside one) have nothing to find; each reads all of /proc, and together they
    were most of what a short run cost after it ended. Orphans adopted by VerifyBot
    are still looked for."""
    names, left = _empty_cgroup(cgroup) if cgroup is not None else ([], [])

    def extra() -> set[int]:
        return adopted(since, LIVE_ROOTS, LIVE_TOKENS)

    killed: list[str] = []
    unkillable: list[str] = []
    if not sandbox_ended or extra():
        killed, unkillable = kill_marked(token, extra)
    seen = {n.split(" ", 1)[0] for n in names}
    names += [n for n in killed if n.split(" ", 1)[0] not in seen]
    reap_adopted(LIVE_ROOTS)
    not_killed = [describe(p) for p in left]
    not_killed += [n for n in unkillable if n not in not_killed]
    return [f"{n} killed" for n in names] + [f"{n} NOT killable" for n in not_killed]
