"""One SSH run on one channel: files, program and after-run check together (issue 22).

Against the real sshd on loopback: a run opens one session and no SFTP; a child
that holds the program's stdout no longer keeps the run open; a stop's SIGTERM
still reaches the program; what the program prints can never be taken for the
check's report.
"""

from __future__ import annotations

import asyncio

import pytest
from proc_helpers import alive
from ssh_helpers import Recorder, pids_in, request, wait_until
from sshd_fixtures import leftover_pids

pytestmark = pytest.mark.ssh


class Counted:
    """Counts what a run asks of the real connection (the calls go through unchanged)."""

    NAMES = ("create_session", "create_process", "run", "start_sftp_client")

    def __init__(self, conn) -> None:
        self.calls: list[str] = []
        for name in self.NAMES:
            real = getattr(conn, name)
            setattr(conn, name, self._counting(name, real))

    def _counting(self, name, real):
        def call(*args, **kwargs):
            self.calls.append(name)
            return real(*args, **kwargs)
        return call


async def test_a_run_is_one_channel_with_no_sftp(target):
    await target.connect()
    counted = Counted(target.conn)
    files = {"main.py": "import helper\nhelper.hi()\nopen('out.txt', 'w').write('x')\n",
             "pkg/helper.py": "def hi():\n    print('hi')\n",
             "helper.py": "from pkg.helper import hi\n"}
    result = await target.run(request("one_1", files), Recorder())
    assert result.exit_code == 0 and result.stdout == "hi\n", result.stderr
    assert result.files_changed == ["out.txt"]
    assert counted.calls == ["create_session"]


async def test_a_compiled_run_is_two_channels(target):
    await target.connect()
    counted = Counted(target.conn)
    files = {"main.c": '#include <stdio.h>\nint main(void) { puts("built"); return 0; }\n'}
    result = await target.run(request("cc_1", files, language="c"), Recorder())
    assert result.exit_code == 0 and result.stdout == "built\n", result.stderr
    assert result.files_changed == []  # the program built is not a file the run wrote
    assert counted.calls == ["create_session", "create_session"]


HOLDER = """\
import os, subprocess, sys
kid = subprocess.Popen(["setsid", "sleep", "300"])  # holds our stdout and stderr
open("kid.txt", "w").write(str(kid.pid))
print("parent done", flush=True)
"""


async def test_a_setsid_child_holding_stdout_ends_the_run_at_the_programs_exit(
        target, remote_dir):
    """As on the local target: the run is over when the program is, not when the child is."""
    result = await target.run(request("hold_1", {"main.py": HOLDER}, timeout=60), Recorder())
    assert not result.timed_out and result.exit_code == 0, result
    assert result.stdout == "parent done\n"
    [kid] = pids_in(f"{result.workdir}/kid.txt")
    assert result.escaped == [f"{kid} (sleep) killed"]
    assert wait_until(lambda: not alive(kid))
    assert leftover_pids(remote_dir[1]) == []


TERM_HANDLER = """\
import signal, sys, time
def bye(signum, frame):
    print("got TERM", flush=True)
    sys.exit(3)
signal.signal(signal.SIGTERM, bye)
print("waiting", flush=True)
time.sleep(300)
"""


async def test_a_stop_still_signals_the_program_itself(target, remote_dir):
    rec = Recorder()
    task = asyncio.ensure_future(target.run(request("term_1", {"main.py": TERM_HANDLER}), rec))
    await rec.wait_for("waiting\n")  # the whole line: print writes the newline apart
    target.stop()
    result = await task
    assert result.cancelled and result.exit_code is None
    assert result.stdout == "waiting\ngot TERM\n"
    assert leftover_pids(remote_dir[1]) == []


async def test_output_like_the_reports_line_is_the_programs(target):
    code = ("import sys\n"
            "sys.stdout.write('a\\x1evb-report not-the-token\\n')\n"
            "sys.stdout.write('\\x1evb-rep')\n"
            "sys.stdout.flush()\n"
            "sys.stdout.write('ort\\n\\x1e')\n")
    rec = Recorder()
    result = await target.run(request("look_1", {"main.py": code}), rec)
    expected = "a\x1evb-report not-the-token\n\x1evb-report\n\x1e"
    assert result.exit_code == 0 and result.stdout == expected
    assert rec.text("stdout") == expected and result.stdout_bytes == len(expected)
