"""A compiled program's build, run first in the program's own sandbox: its status and
"go" on the sandbox init's socket, its output kept apart from the program's, and the
program's own timeout started only once the build passed.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import sys
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass

from verifybot_tui.targets.local.outcome import Outcome
from verifybot_tui.targets.local.reader import OutputReader
from verifybot_tui.targets.sandbox.init_script import BUILT, GO


@dataclass
class Build:
    """A compile step run first in the program's own sandbox (one sandbox, not two:
    each costs a run about 20 ms). ``on_built`` is called once the build passed,
    before the program starts; ``outcome`` is then the build's own. It stays None
    where the build failed, timed out or was stopped: the run's outcome is the build's."""

    argv: list[str]
    timeout: float
    on_built: Callable[[], None]
    outcome: Outcome | None = None


async def build_first(transport: asyncio.SubprocessTransport, protocol: OutputReader,
                      report: int, build: Build, started: float, timeout: float | None
                      ) -> tuple[bool, float, float | None]:
    """The build's part of a build-then-run sandbox: (cancelled, the program's start,
    its timeout). A build that passed starts the program's own time; one that failed
    is the run's outcome, on the build's own time. A cancel here is passed on to the
    stop that follows, which stops the build's tree and then raises."""
    try:
        passed = await _await_build(transport, protocol, report, build, started)
    except asyncio.CancelledError:
        return True, started, timeout
    if passed:
        return False, time.monotonic(), timeout
    return False, started, max(0.0, build.timeout - (time.monotonic() - started))


async def _await_build(transport: asyncio.SubprocessTransport, protocol: OutputReader,
                       report: int, build: Build, started: float) -> bool:
    """Wait (up to the build's timeout) for the sandbox's "built STATUS" line; once
    the build passed, take in all it wrote, keep its outcome, call ``on_built`` and
    say "go". False: it failed, timed out or the sandbox ended without a word."""
    line = asyncio.ensure_future(_status_line(report))
    try:
        await asyncio.wait([line, protocol.exited], timeout=build.timeout,
                           return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not line.done():
            line.cancel()
    text = line.result() if line.done() and not line.cancelled() else ""
    if text.strip() != f"{BUILT}0":
        return False
    await _drained(transport)
    captures, counts = protocol.split()
    build.outcome = Outcome(
        exit_code=0, stdout=captures["stdout"].text, stderr=captures["stderr"].text,
        duration=time.monotonic() - started, timed_out=False,
        stdout_bytes=counts["stdout"], stderr_bytes=counts["stderr"])
    build.on_built()
    try:
        os.write(report, GO)
    except OSError:
        return False  # the sandbox is gone: its end says the rest
    return True


async def _status_line(fd: int) -> str:
    """One line from the sandbox init's socket, read byte by byte (nothing past it is
    taken: what follows is the init's report of what it killed)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()
    data = bytearray()
    os.set_blocking(fd, False)

    def readable() -> None:
        while not done.done():
            try:
                byte = os.read(fd, 1)
            except BlockingIOError:
                return
            except OSError:
                byte = b""
            if not byte or byte == b"\n" or len(data) > 64:
                done.set_result(data.decode("ascii", "replace"))
            else:
                data.extend(byte)

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


async def _drained(transport: asyncio.SubprocessTransport, rounds: int = 1000) -> None:
    """Until the output pipes hold nothing unread: the build has ended, so what is in
    them is its own, and the program (not started yet) adds nothing meanwhile."""
    fds = []
    for n in (1, 2):
        pipe = transport.get_pipe_transport(n)
        if pipe is not None and pipe.get_extra_info("pipe") is not None:
            fds.append(pipe.get_extra_info("pipe").fileno())
    buf = bytearray(4)
    for _ in range(rounds):
        waiting = 0
        for fd in fds:
            try:
                fcntl.ioctl(fd, termios.FIONREAD, buf)
            except OSError:
                continue
            waiting += int.from_bytes(buf, sys.byteorder)
        if not waiting:
            return
        await asyncio.sleep(0)
