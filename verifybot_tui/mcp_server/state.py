"""What a warm server keeps between calls: the config, each target, who holds a board.

A call must not pay for what the previous one already did: each target is made (and
connected) once and used by every call after; a target's reachability is kept from
its last connect. A board, a Pi or a farm place runs one program at a time, so a run
there waits for the run before it (and says whose it is); the local target runs
each call in its own run folder at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.ports import Target
from verifybot_tui.core.settings.config import Config, TargetConfig
from verifybot_tui.core.store.history import History
from verifybot_tui.mcp_server.board_hold import held
from verifybot_tui.targets import make_target
from verifybot_tui.targets.sandbox.bubblewrap import sandbox_label

REACHABLE_FOR = 60.0  # seconds a connect's result stands for list_targets


def sandboxed(t: TargetConfig) -> bool:
    """Whether what a client sends runs in the sandbox on this target: the local one and
    a QEMU board where bubblewrap works; a Pi, a real board or a farm place never."""
    if t.kind == "local" or (t.kind == "mcu" and t.backend == "qemu"):
        return sandbox_label(t.kind, t.sandbox) == ""
    return False


@dataclass
class Holder:
    """Who uses a target that runs one program at a time."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    run_id: str = ""


class ServerState:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.workspace = config.workspace
        self._targets: dict[str, Target] = {}
        self._making: dict[str, asyncio.Lock] = {}
        self._reached: dict[str, tuple[float, bool, str]] = {}
        self._holders: dict[str, Holder] = {}
        # One connection for every call: sessions, attempts and runs written as they come.
        self.history = History(self.workspace)

    # -- which targets a client may use -----------------------------------------------

    def offered(self) -> list[str]:
        """The targets a client may use: sandboxed ones, and those [mcp] targets lists."""
        return [n for n, t in self.config.targets.items()
                if sandboxed(t) or n in self.config.mcp.targets]

    def check_offered(self, name: str) -> TargetConfig:
        t = self.config.targets.get(name)
        if t is None:
            raise ConfigError(f"unknown target {name!r}; the targets offered here: "
                              f"{', '.join(self.offered()) or 'none'} (list_targets)")
        if name not in self.offered():
            raise ConfigError(
                f"target {name!r} runs programs without a sandbox, so it is not offered to "
                f"MCP clients; the user can offer it by listing it in their config: "
                f"[mcp] targets = [\"{name}\"]")
        return t

    # -- the targets themselves ---------------------------------------------------------

    async def target(self, name: str) -> Target:
        """The target ``name``, made and connected once; a failed connect is tried again
        by the next call (the Pi may be back)."""
        self.check_offered(name)
        lock = self._making.setdefault(name, asyncio.Lock())
        async with lock:
            if name not in self._targets:
                target = make_target(self.config, name, self.workspace)
                try:
                    await target.connect()
                except Exception as e:
                    self._reached[name] = (time.monotonic(), False, str(e))
                    await target.close()
                    raise
                self._reached[name] = (time.monotonic(), True, "")
                self._targets[name] = target
            return self._targets[name]

    async def reachable(self, name: str) -> tuple[bool, str]:
        """Whether the target answered its last connect (kept a minute); connect if unknown."""
        kept = self._reached.get(name)
        if kept is None or time.monotonic() - kept[0] > REACHABLE_FOR:
            try:
                await asyncio.wait_for(self.target(name), 15)
            except Exception as e:
                if name not in self._reached or self._reached[name][1]:
                    self._reached[name] = (time.monotonic(), False, str(e) or type(e).__name__)
            kept = self._reached[name]
        return kept[1], kept[2]

    async def close(self) -> None:
        targets, self._targets = list(self._targets.values()), {}
        await asyncio.gather(*(t.close() for t in targets), return_exceptions=True)
        self.history.close()

    # -- one run at a time on a board -------------------------------------------------

    @asynccontextmanager
    async def hold(self, name: str, run_id: Callable[[], str],
                   waiting: Callable[[str], Awaitable[Any]]) -> AsyncIterator[None]:
        """Hold target ``name`` for one run; a local target needs no holding. While
        another run has it, ``waiting`` is told whose it is, every few seconds."""
        if self.config.targets[name].kind == "local":
            yield
            return
        holder = self._holders.setdefault(name, Holder())
        while True:
            if holder.lock.locked():
                await waiting(f"waiting for {name}: in use by run {holder.run_id}")
            try:
                await asyncio.wait_for(holder.lock.acquire(), 5)
                break
            except TimeoutError:
                continue
        holder.run_id = run_id()
        try:
            # Then the other servers of this workspace (another agent's) on the same board.
            async with held(self.workspace / "runs" / ".held", name, holder.run_id, waiting):
                yield
        finally:
            holder.run_id = ""
            holder.lock.release()
