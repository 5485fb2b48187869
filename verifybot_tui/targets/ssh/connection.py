"""The SSH target's one kept-open connection: opening, losing and reopening it.

What a run needs of the Pi beyond the link is learnt here once per connection:
the remote folder (``remote_dir``), whether the workspace venv exists there,
and whether runs get a systemd scope of their own. Run folders whose program
may have outlived a lost link are kept and cleaned once the link is back.
"""

from __future__ import annotations

import asyncio
import posixpath
import shlex
import time
from pathlib import Path

import asyncssh

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import Prompter, ReportsState
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets import ssh_scripts as scripts
from verifybot_tui.targets.installs.venv import VENV_DIR
from verifybot_tui.targets.ssh_connect import Settings, open_connection, resolve_settings


class SSHConnection(ReportsState):
    """The one kept-open connection to the Pi, and what is known there once it is open.

    The SSH target is this plus what runs on it; the process side reads the link
    (``conn``), says when a channel found it dead (``drop``), and registers each
    run's stop event (``stops``) so a stop or a close reaches every run.
    """

    keepalive_interval = 5.0
    keepalive_count_max = 3
    stop_grace = 2.0

    def __init__(self, config: TargetConfig, workspace: Path, prompter: Prompter | None = None,
                 trust_new_host: bool = False) -> None:
        self.name = config.name or "pi"
        self.config = config
        self.workspace = Path(workspace)
        self.prompter = prompter
        self.trust_new_host = trust_new_host
        self.state = "disconnected"
        self.last_error: str | None = None
        self.remote_dir = ""  # absolute, known once connected
        self.settings: Settings | None = None
        self.conn: asyncssh.SSHClientConnection | None = None
        self._connecting: asyncio.Task | None = None
        self._generation = 0
        self._typed_password: str | None = None  # only in memory, for reconnects
        self.has_venv = False
        self.scopes = False  # the Pi runs user sessions: each run gets a systemd scope
        self.orphans: list[str] = []  # run folders whose program may outlive a lost link
        self.stops: set[asyncio.Event] = set()
        self.closing = False  # close() is stopping the runs: they end as target errors

    async def connect(self) -> None:
        await self.connection()

    def connect_soon(self) -> None:
        """Start connecting in the background (the TUI shows the state meanwhile)."""
        if self.conn is None and (self._connecting is None or self._connecting.done()):
            self._connecting = asyncio.get_running_loop().create_task(self._open())
            self._connecting.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def connection(self) -> asyncssh.SSHClientConnection:
        """The open connection: the one kept, else a new one (the same a connecting waits on)."""
        if self.conn is not None:
            if not self.conn.is_closed():
                return self.conn
            self.conn = None  # lost before its callback could say so
        self.connect_soon()
        assert self._connecting is not None
        return await asyncio.shield(self._connecting)

    def _lost(self, generation: int, exc: Exception | None) -> None:
        if generation != self._generation:
            return
        self.conn = None
        if exc is not None:
            self.state = "error"
            self.last_error = f"Connection to {self.where} lost: {exc}"
        elif self.state != "error":
            self.state = "disconnected"

    def drop(self, exc: Exception) -> None:
        """The link is dead (a channel found it so before its own callback did)."""
        self._lost(self._generation, exc)

    @property
    def where(self) -> str:
        """The host as the user knows it, for messages."""
        return self.settings.where if self.settings else self.config.host

    async def _open(self) -> asyncssh.SSHClientConnection:
        self.state = "connecting"
        self._generation += 1
        generation = self._generation
        try:
            settings, password = resolve_settings(self.config, self.workspace)
            self.settings = settings
            conn, used = await open_connection(
                settings, password=self._typed_password or password, prompter=self.prompter,
                trust_new_host=self.trust_new_host,
                on_lost=lambda exc: self._lost(generation, exc),
                keepalive_interval=self.keepalive_interval,
                keepalive_count_max=self.keepalive_count_max)
            if used and used != password:
                self._typed_password = used
            try:
                await self._learn_remote_dir(conn)
            except BaseException:
                conn.abort()
                raise
        except TargetError as e:
            self.state, self.last_error = "error", e.message
            raise
        except (asyncssh.Error, OSError) as e:
            self.state = "error"
            self.last_error = f"SSH connection to {self.where} failed: {e}"
            raise TargetError(self.last_error) from None
        self.conn = conn
        self.state, self.last_error = "connected", None
        await self._reap_orphans(conn)
        return conn

    async def _learn_remote_dir(self, conn: asyncssh.SSHClientConnection) -> None:
        r = await conn.run('printf "%s" "$HOME"', timeout=15, encoding="utf-8")
        home = str(r.stdout or "").strip() or "."
        rd = self.config.remote_dir.strip() or "~/verifybot"
        if rd == "~":
            rd = home
        elif rd.startswith("~/"):
            rd = posixpath.join(home, rd[2:])
        elif not rd.startswith("/"):
            rd = posixpath.join(home, rd)
        self.remote_dir = posixpath.normpath(rd)
        venv_py = posixpath.join(self.remote_dir, VENV_DIR, "bin", "python")
        r = await conn.run(f"test -x {shlex.quote(venv_py)}", timeout=15)
        self.has_venv = r.exit_status == 0
        self.scopes = await self._probe_scopes(conn)

    @staticmethod
    async def _probe_scopes(conn: asyncssh.SSHClientConnection) -> bool:
        """Whether ``systemd-run --user --scope`` works there (a Pi with user sessions)."""
        try:
            r = await conn.run(scripts.SCOPE_PROBE, timeout=15)
        except (TimeoutError, asyncssh.Error, OSError):
            return False
        return r.exit_status == 0

    async def _reap_orphans(self, conn: asyncssh.SSHClientConnection) -> None:
        orphans, self.orphans = self.orphans, []
        for run_dir in orphans:
            try:
                await conn.run(f"cd {shlex.quote(run_dir)} && "
                               f"{scripts.group_kill_sh(self.stop_grace)}; "
                               f"{scripts.leftover_sh(self.scopes)}", timeout=self.stop_grace + 10)
            except (TimeoutError, asyncssh.Error, OSError):
                self.orphans.append(run_dir)

    async def close(self) -> None:
        """Stop the runs (they end as target errors), then close the link."""
        self.closing = True
        for event in list(self.stops):
            event.set()
        deadline = time.monotonic() + self.stop_grace + 8
        while self.stops and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        conn, self.conn = self.conn, None
        if conn is not None:
            conn.close()
            try:
                await asyncio.wait_for(conn.wait_closed(), 5)
            except (TimeoutError, OSError, asyncssh.Error):
                pass
        self.state = "disconnected"
        self.closing = False

    def python(self, override: str | None = None) -> str:
        """The Python there: the one named, else the workspace venv's once made, else python3."""
        if override:
            return override
        if self.has_venv:
            return posixpath.join(self.remote_dir, VENV_DIR, "bin", "python")
        return "python3"
