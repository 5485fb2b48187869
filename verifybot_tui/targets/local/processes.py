"""The processes one local target runs, from start to outcome: each started in its
sandbox (if any) within the target's limits, its output streamed, recorded as a live
run, and stopped with all it started once it ends, times out or is cancelled; then
whatever escaped is named and killed.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets import live_runs
from verifybot_tui.targets.containment import cgroups
from verifybot_tui.targets.containment.leftovers import (
    await_sandbox_end,
    leftover_check,
    sandbox_ended,
)
from verifybot_tui.targets.containment.markers import MARKER, new_token
from verifybot_tui.targets.containment.proctable import ticks_now
from verifybot_tui.targets.containment.subreaper import reap_while_running
from verifybot_tui.targets.containment.tree import LIVE_ROOTS, LIVE_TOKENS, stop_tree
from verifybot_tui.targets.local.build_step import Build, build_first
from verifybot_tui.targets.local.launch import close_fd, start, wait_and_stop, wrapped
from verifybot_tui.targets.local.outcome import Outcome
from verifybot_tui.targets.local.reader import OutputReader
from verifybot_tui.targets.sandbox import limits
from verifybot_tui.targets.sandbox.init_script import escaped_in_sandbox


class Processes:
    """The processes of one local target: what runs now, and what ``close`` stopped."""

    def __init__(self, config: TargetConfig, workspace: Path) -> None:
        self.config = config  # the target's: its limits, read at each start
        self.workspace = workspace  # where the records of live runs go
        self.running: set[int] = set()  # session leaders of live runs
        self.closing: set[int] = set()

    async def close(self) -> None:
        """Stop every running process's whole tree; each one's outcome says so."""
        roots = list(self.running)
        self.closing.update(roots)
        await asyncio.gather(*(stop_tree(root) for root in roots))

    async def exec(self, argv: list[str], cwd: Path, on_output: OutputCallback,
                   timeout: float | None, env: dict[str, str],
                   sandbox: list[str] | None = None, build: Build | None = None
                   ) -> Outcome:
        """Run one process (in ``sandbox``, a bubblewrap prefix, when given, within the
        target's limits) and stop whatever it started once it ends or times out; with
        ``build`` (sandbox only), the build first, in the same sandbox, then the process
        on its own timeout."""
        loop = asyncio.get_running_loop()
        started, since = time.monotonic(), ticks_now()
        argv, report, stdin = wrapped(argv, sandbox, build.argv if build else None)
        cgroup = cgroups.new_cgroup()
        guard = limits.Guard(limits.Limits.of(self.config), cgroup) if sandbox else None
        cgroup = guard.cgroup if guard is not None else cgroup  # root: one with pids.max
        env = {**env, MARKER: new_token()}  # see leftover_check
        try:
            transport, protocol, cancelled = await start(
                loop, lambda: OutputReader(loop, on_output), argv, cwd, env, cgroup, stdin, guard)
        except BaseException:
            close_fd(report)
            if cgroup:
                cgroups.remove_cgroup(cgroup)
            raise
        finally:
            close_fd(stdin)
        root, token = transport.get_pid(), env[MARKER]
        self.running.add(root)
        LIVE_ROOTS.add(root)
        LIVE_TOKENS.add(token)
        live = live_runs.record_live(self.workspace, root, cgroup, token)
        reaper = None if sandbox else asyncio.ensure_future(reap_while_running())
        if guard is not None:
            guard.watch(cwd, lambda: asyncio.ensure_future(stop_tree(root)))
        try:
            settle = (lambda: sandbox_ended(cgroup, token)) if sandbox else None
            if sandbox and build is not None and not cancelled:
                cancelled, started, timeout = await build_first(
                    transport, protocol, report, build, started, timeout)
            timed_out = await wait_and_stop(root, protocol, cancelled, timeout, settle)
        finally:
            if reaper is not None:
                reaper.cancel()
            if guard is not None:
                guard.stop_watch()
            LIVE_TOKENS.discard(token)
            escaped = [] if report < 0 else escaped_in_sandbox(report)
            close_fd(report)
            ended = bool(sandbox) and await_sandbox_end(cgroup, token)
            escaped += leftover_check(cgroup, token, since, ended)
            protocol.finish()
            transport.close()
            self.running.discard(root)
            LIVE_ROOTS.discard(root)
            live_runs.clear_live(live)
        return self._outcome(root, transport, protocol, started, timed_out, escaped, guard)

    def _outcome(self, root: int, transport: asyncio.SubprocessTransport,
                 protocol: OutputReader, started: float, timed_out: bool, escaped: list[str],
                 guard: limits.Guard | None) -> Outcome:
        """What one ended process came to, with the limit it hit (if any)."""
        interrupted = root in self.closing
        self.closing.discard(root)
        if protocol.errors:
            raise protocol.errors[0]
        code = transport.get_returncode()
        stderr = protocol.captures["stderr"].text
        hit = guard.finish(code, stderr, code != 0) if guard is not None else ""
        return Outcome(
            exit_code=None if timed_out or interrupted else code,
            stdout=protocol.captures["stdout"].text, stderr=stderr,
            duration=time.monotonic() - started, timed_out=timed_out,
            stdout_bytes=protocol.counts["stdout"], stderr_bytes=protocol.counts["stderr"],
            interrupted=interrupted, escaped=escaped, limit=hit)
