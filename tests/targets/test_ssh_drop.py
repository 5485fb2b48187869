"""A connection that dies or goes silent mid-run: a target error, output kept, then recovery."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest
from ssh_helpers import Recorder, request
from sshd_fixtures import leftover_pids, session_processes, wait_gone

from verifybot_tui.targets.ssh.target import SSHTarget

pytestmark = pytest.mark.ssh

SLEEPER = "import time\nprint('before', flush=True)\ntime.sleep(60)\nprint('after')\n"


async def start_sleeper(target: SSHTarget, remote_abs: str, run_id: str
                        ) -> tuple[asyncio.Future, Recorder, list[int]]:
    rec = Recorder()
    task = asyncio.ensure_future(target.run(request(run_id, {"main.py": SLEEPER}, timeout=40),
                                            rec))
    # The whole line: print() writes "before" and its newline apart (python -u), and a link
    # stopped between the two would leave the newline on the Pi (seen once under load).
    await rec.wait_for("before\n")
    progs = leftover_pids(remote_abs)
    assert len(progs) == 1
    sessions = session_processes(progs[0])
    assert sessions, "the program should run under the connection's sshd"
    return task, rec, sessions


async def recovers(target: SSHTarget, remote_abs: str) -> None:
    """The next run reconnects and works, and the program the lost link left is stopped."""
    result = await target.run(request("after_1", {"main.py": "print('again')\n"}), Recorder())
    assert result.exit_code == 0 and result.stdout == "again\n", result
    assert target.state == "connected"
    assert wait_gone(remote_abs) == []


async def test_session_killed_mid_run(ssh_config, remote_dir, tmp_path):
    t = SSHTarget(ssh_config, tmp_path / "ws")
    try:
        task, rec, sessions = await start_sleeper(t, remote_dir[1], "killed_1")
        os.kill(sessions[0], signal.SIGKILL)
        result = await asyncio.wait_for(task, 10)
        assert result.target_error and "lost" in result.target_error.lower()
        assert result.stdout == "before\n" and result.exit_code is None
        assert not result.timed_out
        # What the CLI and the app print for it (issue 23: it read "exit status None").
        assert result.ended.startswith("target error:") and "None" not in result.ended
        assert t.state == "error" and t.last_error
        assert len(leftover_pids(remote_dir[1])) == 1  # orphaned, until the next connection
        await recovers(t, remote_dir[1])
    finally:
        await t.close()


async def test_silent_link_noticed_by_keepalive(ssh_config, remote_dir, tmp_path):
    t = SSHTarget(ssh_config, tmp_path / "ws")
    t.keepalive_interval, t.keepalive_count_max = 0.3, 2
    stopped: list[int] = []
    try:
        task, rec, sessions = await start_sleeper(t, remote_dir[1], "silent_1")
        for pid in sessions:  # the server stops answering, as over a dead Wi-Fi link
            os.kill(pid, signal.SIGSTOP)
            stopped.append(pid)
        t0 = time.monotonic()
        result = await asyncio.wait_for(task, 15)
        noticed = time.monotonic() - t0
        assert result.target_error and "keepalive" in result.target_error.lower()
        assert result.stdout == "before\n"
        assert noticed < 5, f"took {noticed:.1f} s to notice"
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        stopped.clear()
        await recovers(t, remote_dir[1])
    finally:
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        await t.close()
