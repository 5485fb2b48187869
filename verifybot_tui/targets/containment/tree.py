"""The process tree of one local run, and stopping all of it.

A run starts in its own session, so every process it starts can be found again:
by the session id and process group it inherits, and by walking parent links in
/proc (which also finds a child that moved to its own group with ``setpgid``).
A timeout, a cancel, or simply the program ending stops whatever of that tree is
still running: TERM, a grace period, then KILL. ``LIVE_ROOTS`` and ``LIVE_TOKENS``
are every live local run of this process (the local target's and QEMU's), so a
second Ctrl+C can KILL them all at once and an ending run can tell another run's
adopted orphans from its own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

from verifybot_tui.targets.containment.proctable import HAVE_PROC, descendants, proc_table

GRACE = 2.0  # seconds between TERM and KILL
LIVE_ROOTS: set[int] = set()  # session leaders of every local run in this process
LIVE_TOKENS: set[str] = set()  # and their marker tokens (whose adopted orphans are whose)


def kill_all_now() -> None:
    """KILL every local run's tree at once (a second Ctrl+C during the grace period)."""
    for root in list(LIVE_ROOTS):
        signal_tree(root, tree_pids(root), signal.SIGKILL)


def tree_pids(root: int) -> set[int]:
    """Live (non-zombie) processes of the tree started as session leader ``root``.

    Members: the session and the process group ``root`` created (which also
    holds children whose parent already died), plus every descendant of any
    member by parent links, whatever group or session it moved to since.
    """
    table = proc_table()
    members = {pid for pid, (_, _, pgrp, sid) in table.items() if sid == root or pgrp == root}
    if root in table:
        members.add(root)
    children: dict[int, list[int]] = {}
    for pid, (_, ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    members = descendants(members, children)
    members.discard(os.getpid())
    return {pid for pid in members if table[pid][0] != "Z"}


def signal_tree(root: int, pids: set[int], sig: int) -> None:
    """Send ``sig`` to the process group ``root`` and to each of ``pids``."""
    try:
        os.killpg(root, sig)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


async def stop_tree(root: int, grace: float | None = None) -> None:
    """TERM every process of the tree, wait up to ``grace`` (GRACE) for them, KILL the rest."""
    grace = GRACE if grace is None else grace
    pids = tree_pids(root)
    if not HAVE_PROC:
        return await _stop_group(root, grace)
    if not pids:
        return
    signal_tree(root, pids, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        await asyncio.sleep(0.05)
        pids = tree_pids(root)
        if not pids:
            return
    # A process forked between a scan and its kill is caught by the next round.
    for _ in range(50):
        signal_tree(root, pids, signal.SIGKILL)
        await asyncio.sleep(0.02)
        pids = tree_pids(root)
        if not pids:
            return


async def _stop_group(root: int, grace: float) -> None:
    """Without /proc (not Linux) only the process group can be found."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(root, sig)
        except (ProcessLookupError, PermissionError):
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            try:
                os.killpg(root, 0)
            except (ProcessLookupError, PermissionError):
                return
