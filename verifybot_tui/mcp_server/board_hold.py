"""One run at a time on a board, across every `verifybot mcp` of a workspace.

Two agents (Claude Code and Cursor, say) each start their own server; both may
send firmware to the one STM32 on the desk. A lock file per target in the
workspace (``runs/.held/<target>.lock``, an advisory ``flock`` the kernel drops when
its holder dies) makes the second wait, and names the run holding it: the file
holds "run 41" while that run has the board.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from verifybot_tui.core.store.workspace import private_dir

TELL_EVERY = 5.0  # seconds between two "waiting for" messages
POLL = 0.1


@contextlib.asynccontextmanager
async def held(folder: Path, name: str, run_id: str,
               waiting: Callable[[str], Awaitable[Any]]) -> AsyncIterator[None]:
    private_dir(folder)
    fd = os.open(folder / f"{name}.lock",
                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        told = 0.0
        while not _try_lock(fd):
            if time.monotonic() - told >= TELL_EVERY:
                holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
                await waiting(f"waiting for {name}: in use by {holder or 'another run'}")
                told = time.monotonic()
            await asyncio.sleep(POLL)
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"run {run_id}\n".encode(), 0)
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True
