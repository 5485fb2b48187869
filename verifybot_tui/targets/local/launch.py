"""Starting a local process and stopping it: in its own session, with the
parent-death signal, in its cgroup and within its limits, safe against a stop that
lands mid-start; then waited for and its whole tree stopped (the local target's runs
and QEMU's).
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from verifybot_tui.targets.containment.markers import MARKER, new_token
from verifybot_tui.targets.containment.subreaper import become_subreaper
from verifybot_tui.targets.containment.tree import LIVE_TOKENS, stop_tree
from verifybot_tui.targets.local.reader import OutputReader
from verifybot_tui.targets.sandbox import limits
from verifybot_tui.targets.sandbox.init_script import build_then_run

PR_SET_PDEATHSIG = 1
_libc: ctypes.CDLL | None = None


def _prctl_pdeathsig(parent: int) -> None:
    """In the child before exec: die by SIGKILL when the parent (VerifyBot) dies."""
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(137)


def preexec(cgroup: Path | None, guard: limits.Guard | None = None) -> object:
    """The function the child runs before exec (None where nothing applies): the
    parent-death signal, the run's cgroups, and (``guard``) its limits' rlimits."""
    if not sys.platform.startswith("linux"):
        return None
    global _libc
    if _libc is None:  # loaded in the parent: nothing is loaded after the fork
        _libc = ctypes.CDLL(None, use_errno=True)
    procs = [str(cgroup / "cgroup.procs")] if cgroup else []
    rlimits = guard.limits.rlimits() if guard is not None else []
    parent = os.getpid()

    def run() -> None:
        _prctl_pdeathsig(parent)
        for path in procs:
            try:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            except OSError:
                pass  # the run goes on uncontained; the leftover check says so
        limits.set_rlimits(rlimits)
    return run


async def start(loop: asyncio.AbstractEventLoop, reader: Callable[[], OutputReader],
                argv: list[str], cwd: Path, env: dict[str, str], cgroup: Path | None,
                stdin: int = subprocess.DEVNULL, guard: limits.Guard | None = None
                ) -> tuple[asyncio.SubprocessTransport, OutputReader, bool]:
    """Start the program in its own session; True if a stop came meanwhile.

    A stop (Ctrl+C, a hang-up, a quit) that lands after the fork but before the
    pipes are connected would make asyncio KILL only the first process and then
    wait for pipes its children still hold. So the start is finished whatever
    comes, and the caller, told of the stop, stops the whole tree and passes it on.

    Until the caller records the new root (right after this returns), the child is
    known by its marker: another run ending meanwhile (``recipe run --parallel``,
    ``compare``) would otherwise take it for an orphan adopted from its own tree.
    """
    token = env.get(MARKER) or new_token()
    env = {**env, MARKER: token}
    fresh = token not in LIVE_TOKENS
    LIVE_TOKENS.add(token)
    spawn = asyncio.ensure_future(loop.subprocess_exec(
        reader, *argv, cwd=cwd, env=env, stdin=stdin,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=preexec(cgroup, guard)))
    cancelled = False
    try:
        while not spawn.done():
            try:
                await asyncio.wait([spawn])
            except asyncio.CancelledError:
                cancelled = True
    finally:
        if fresh:
            LIVE_TOKENS.discard(token)
    if spawn.cancelled() or (cancelled and spawn.exception() is not None):
        raise asyncio.CancelledError
    transport, protocol = spawn.result()  # an OSError (cannot exec) goes to the caller
    return transport, protocol, cancelled


def wrapped(argv: list[str], sandbox: list[str] | None, build: list[str] | None
            ) -> tuple[list[str], int, int]:
    """The argv to start, the end we read the sandbox's reports on and the child's stdin.

    The sandbox's init reports on a pipe; with a build (its argv) in the same sandbox,
    on a socket that carries the build's status to us and "go" back. Unsandboxed, orphans are
    adopted by us (a subreaper), not by init."""
    if sandbox and build is not None:
        ours, theirs = socket.socketpair()
        return ([*sandbox, *build_then_run(build, argv)],
                ours.detach(), theirs.detach())
    if sandbox:
        report, stdin = os.pipe()
        return [*sandbox, *argv], report, stdin
    become_subreaper()
    return argv, subprocess.DEVNULL, subprocess.DEVNULL


async def wait_and_stop(root: int, protocol: OutputReader, cancelled: bool,
                        timeout: float | None,
                        settle: Callable[[], Awaitable[bool]] | None = None) -> bool:
    """Wait for the program to end (or time out: True), then stop its whole tree;
    ``settle``, once it ended by itself, first lets a sandbox wind down on its own
    (True: all of it is gone, so there is nothing to stop)."""
    timed_out = stopped = False
    try:
        try:
            if cancelled:
                raise asyncio.CancelledError
            await asyncio.wait_for(asyncio.shield(protocol.exited), timeout)
        except TimeoutError:
            timed_out = True
        settled = False
        if settle is not None and not timed_out:
            settled = await asyncio.shield(settle())
        # Ended or timed out: nothing it started may outlive it (a sandbox seen gone
        # as a whole has nothing left to stop: that costs a scan of /proc).
        if not settled:
            await asyncio.shield(stop_tree(root))
        stopped = True
        # Pipes close once every holder is dead; one that escaped keeps them open.
        await asyncio.wait([protocol.closed], timeout=1.0)
    finally:
        if not stopped:
            await asyncio.shield(stop_tree(root))
    return timed_out


def close_fd(fd: int) -> None:
    """Close one end of the sandbox's report pipe (DEVNULL, a negative number: none)."""
    if fd >= 0:
        os.close(fd)
