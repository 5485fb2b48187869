"""The SSH target against a real sshd: running, streaming, stopping, building, probing."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import pytest
from output_order import INTERLEAVED, Acks, expected_interleaving, interleaved_lines
from proc_helpers import alive
from ssh_helpers import Recorder, pids_in, request, wait_until
from sshd_fixtures import leftover_pids, wait_gone

from verifybot_tui.targets.installs.venv import InstallError
from verifybot_tui.targets.ssh.launch import launch_script
from verifybot_tui.targets.ssh.target import SSHTarget

pytestmark = pytest.mark.ssh

FORKER = """\
import os, subprocess, sys, time
kids = [subprocess.Popen(["sleep", "300"]) for _ in range(2)]
pid = os.fork()
if pid == 0:
    time.sleep(300)
    os._exit(0)
with open("kids.txt", "w") as f:
    f.write(" ".join(str(p) for p in [k.pid for k in kids] + [pid]))
print("forked", flush=True)
time.sleep(300)
"""


async def test_python_output_streams_in_order_and_stays_apart(target, remote_dir):
    code = ("import sys, time\n"
            "for i in range(4):\n"
            "    print('line', i)\n"
            "    time.sleep(0.25)\n"
            "print('oops', file=sys.stderr)\n"
            "open('result.txt', 'w').write('42')\n")
    rec = Recorder()
    result = await target.run(request("stream_1", {"main.py": code}), rec)
    assert result.exit_code == 0 and result.target_error is None
    assert result.stdout == "line 0\nline 1\nline 2\nline 3\n"
    assert result.stderr == "oops\n"
    assert rec.text("stdout") == result.stdout and rec.text("stderr") == result.stderr
    first, last = rec.when("line 0\n"), rec.when("line 3\n")
    assert last - first > 0.5, "lines arrived together, not as printed"
    assert result.files_changed == ["result.txt"]
    assert result.workdir == f"{remote_dir[1]}/runs/stream_1"
    assert result.command.endswith("python3 -u main.py")
    # The versioned copy beside the run folder, the run copy under its own name.
    assert Path(remote_dir[1], "main_1.py").read_text() == code
    assert Path(result.workdir, "main.py").read_text() == code
    assert state_is(target, "connected")


def state_is(target, state: str) -> bool:
    return target.state == state


async def test_multi_file_python_imports_its_sibling(target):
    files = {"main.py": "from helper import answer\nprint(answer())\n",
             "helper.py": "def answer():\n    return 42\n"}
    result = await target.run(request("multi_1", files, entry="main.py"), Recorder())
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "42\n"
    assert result.files_changed == []  # no __pycache__ reported


async def test_exit_status_invalid_utf8_and_bytes(target):
    code = ("import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe end\\n')\n"
            "sys.stdout.flush()\nsys.exit(3)\n")
    result = await target.run(request("bytes_1", {"main.py": code}), Recorder())
    assert result.exit_code == 3
    assert result.stdout == "ok \ufffd\ufffd end\n"
    assert result.stdout_bytes == 10


async def test_bash_script(target):
    result = await target.run(request("sh_1", {"run.sh": "echo \"from $0\"; touch made.txt\n"},
                                      language="bash"), Recorder())
    assert result.exit_code == 0
    assert result.stdout == "from run.sh\n"
    assert result.files_changed == ["made.txt"]


async def test_timeout_kills_the_whole_tree(target, remote_dir):
    rec = Recorder()
    result = await target.run(request("fork_1", {"main.py": FORKER}, timeout=1.5), rec)
    assert result.timed_out and result.exit_code is None
    assert result.target_error is None
    assert "forked" in result.stdout  # output before the timeout is kept
    kids = pids_in(f"{result.workdir}/kids.txt")
    assert len(kids) == 3
    assert wait_until(lambda: not any(alive(p) for p in kids)), "children left running"
    assert wait_gone(remote_dir[1]) == []
    assert 1.4 < result.duration < 6


async def test_timeout_with_term_ignored_still_kills(target, remote_dir):
    code = ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
            "print('stubborn', flush=True)\ntime.sleep(300)\n")
    result = await target.run(request("stubborn_1", {"main.py": code}, timeout=1.0), Recorder())
    assert result.timed_out and result.stdout == "stubborn\n"
    assert wait_gone(remote_dir[1]) == []


async def test_cancel_stops_the_tree_and_lets_cancel_through(target, remote_dir):
    rec = Recorder()
    task = asyncio.ensure_future(target.run(request("cancel_1", {"main.py": FORKER}), rec))
    await rec.wait_for("forked")
    kids = pids_in(f"{remote_dir[1]}/runs/cancel_1/kids.txt")
    assert len(kids) == 3 and all(alive(p) for p in kids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The stop finished before the CancelledError came out: nothing to wait for.
    assert not any(alive(p) for p in kids)
    assert leftover_pids(remote_dir[1]) == []


async def test_stop_ends_the_run_as_cancelled(target, remote_dir):
    rec = Recorder()
    task = asyncio.ensure_future(target.run(request("stop_1", {"main.py": FORKER}), rec))
    await rec.wait_for("forked")
    target.stop()
    result = await task
    assert result.cancelled and not result.timed_out and result.exit_code is None
    assert wait_gone(remote_dir[1]) == []


async def test_children_left_by_a_finished_program_are_stopped(target, remote_dir):
    code = ("import subprocess\n"
            "p = subprocess.Popen(['sleep', '300'], stdout=subprocess.DEVNULL,\n"
            "                     stderr=subprocess.DEVNULL)\n"
            "open('kid.txt', 'w').write(str(p.pid))\nprint('bye')\n")
    result = await target.run(request("bg_1", {"main.py": code}), Recorder())
    assert result.exit_code == 0 and result.stdout == "bye\n"
    assert wait_until(lambda: not any(alive(p) for p in pids_in(f"{result.workdir}/kid.txt")))
    assert leftover_pids(remote_dir[1]) == []


async def test_c_is_compiled_on_the_target(target):
    files = {"main.c": '#include <stdio.h>\n#include "util.h"\n'
                       'int main(void) { printf("%d\\n", twice(21)); return 0; }\n',
             "util.c": '#include "util.h"\nint twice(int x) { return 2 * x; }\n',
             "util.h": "int twice(int x);\n"}
    result = await target.run(request("c_1", files, entry="main.c", language="c"), Recorder())
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "42\n" and not result.compile_failed
    assert result.command.endswith("-lm && ./prog") and "gcc" in result.command


async def test_c_compile_error(target):
    rec = Recorder()
    files = {"main.c": "int main(void) { return undefined_thing; }\n"}
    result = await target.run(request("cerr_1", files, language="c"), rec)
    assert result.compile_failed and result.exit_code not in (0, None)
    assert "undefined_thing" in result.stderr and "error" in result.stderr
    assert "undefined_thing" in rec.text("stderr")  # the compiler's output streamed too


async def test_cpp_runs(target):
    files = {"main.cpp": "#include <iostream>\nint main() { std::cout << \"cpp ok\\n\"; }\n"}
    result = await target.run(request("cpp_1", files, language="cpp"), Recorder())
    assert result.exit_code == 0 and result.stdout == "cpp ok\n", result.stderr


async def test_probe_describes_the_machine_and_is_saved(target, tmp_path, sshd, remote_dir):
    await target.run(request("p_1", {"main.py": "print(1)\n"}), Recorder())
    # Another connection's program must show among the running processes; the
    # probe's own commands must not, nor a zombie (its child, never reaped: a list
    # full of other runs' zombies once hid the live processes).
    other = SSHTarget(target.config, tmp_path / "ws2")
    rec = Recorder()
    code = ("import os, time\nif os.fork() == 0:\n    os._exit(0)\ntime.sleep(0.3)\n"
            "print('ready', flush=True)\ntime.sleep(60)\n")
    task = asyncio.ensure_future(other.run(request("bgprobe_1", {"sleeper.py": code}), rec))
    try:
        await rec.wait_for("ready")
        md = await target.probe()
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await other.close()
    saved = (tmp_path / "ws" / "context" / "pi.md").read_text()
    assert saved == md
    assert md.startswith("# Target: pi\n")
    for heading in ("## System", "## Python", "## Tools", "## Hardware", "## Workspace"):
        assert f"\n{heading}\n" in md
    assert f"- Hostname: {os.uname().nodename}" in md
    assert "- Version: Python 3." in md
    assert "- gcc: gcc" in md
    assert "runs" in md and remote_dir[1] in md  # the remote dir's listing
    assert "sleeper.py" in md and "<defunct>" not in md
    assert "importlib.metadata" not in md and "for t in gcc" not in md
    assert "- I2C:" in md and "- GPIO:" in md


async def test_missing_modules(target):
    assert await target.missing_modules(["json", "no_such_module_vb"]) == ["no_such_module_vb"]
    assert await target.missing_modules([]) == []


def build_wheel(folder: Path) -> Path:
    """A tiny pure wheel, so installing needs no network."""
    import base64
    import hashlib
    import zipfile

    files = {"vbdemo/__init__.py": "ANSWER = 42\n",
             "vbdemo-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: vbdemo\nVersion: 0.1\n",
             "vbdemo-0.1.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
                                           "Root-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    record.append("vbdemo-0.1.dist-info/RECORD,,")
    files["vbdemo-0.1.dist-info/RECORD"] = "\n".join(record) + "\n"
    path = folder / "vbdemo-0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    path.chmod(0o644)
    return path


async def test_install_into_the_remote_venv_then_runs_use_it(target, sshd, remote_dir):
    wheel = build_wheel(sshd.home / sshd.base)
    assert await target.missing_modules(["vbdemo"]) == ["vbdemo"]
    rec = Recorder()
    python = await target.install([str(wheel)], rec)
    assert python == f"{remote_dir[1]}/venv/bin/python"
    assert "$ python3 -I -m venv --system-site-packages" in rec.text("stdout")
    assert await target.missing_modules(["vbdemo", "json"], python) == []
    code = "import sys, vbdemo\nprint(vbdemo.ANSWER, sys.prefix)\n"
    r = await target.run(request("venv_1", {"main.py": code}), Recorder())
    assert r.stdout == f"42 {remote_dir[1]}/venv\n", r.stderr
    script = "python3 -c 'import vbdemo; print(vbdemo.ANSWER)'\n"
    r = await target.run(request("venv_2", {"x.sh": script}, language="bash"), Recorder())
    assert r.stdout == "42\n", r.stderr
    bad = sshd.home / sshd.base / "bad.whl"
    bad.write_text("")
    with pytest.raises(InstallError) as info:
        await target.install([str(bad)], Recorder())
    assert "bad.whl" in info.value.message


async def test_install_falls_back_to_pip_user_without_a_venv(target, sshd, remote_dir):
    wheel = build_wheel(sshd.home / sshd.base)
    await target.connect()
    blocker = Path(remote_dir[1], "venv")  # a file where the venv would go: venv fails
    blocker.parent.mkdir(parents=True)
    blocker.write_text("")
    rec = Recorder()
    user_site = sshd.home / ".local" / "lib"
    try:
        python = await target.install([str(wheel)], rec)
        assert python == "python3"
        assert "trying pip --user" in rec.text("stderr")
        managed = any(Path("/usr/lib").glob("python3*/EXTERNALLY-MANAGED"))  # PEP 668
        assert ("--break-system-packages" in rec.text("stdout")) == managed
        assert await target.missing_modules(["vbdemo"], python) == []
    finally:
        for found in user_site.glob("python3*/site-packages/vbdemo*"):
            shutil.rmtree(found, ignore_errors=True)


async def test_close_stops_a_running_program(target, remote_dir):
    rec = Recorder()
    task = asyncio.ensure_future(target.run(request("close_1", {"main.py": FORKER}), rec))
    await rec.wait_for("forked\n")
    await target.close()
    result = await task
    assert result.target_error == "stopped: the target was closed"
    assert not result.cancelled and result.exit_code is None and result.stdout == "forked\n"
    assert target.state == "disconnected"
    assert wait_gone(remote_dir[1]) == []


DOUBLE_FORK = """\
import os, sys, time
print("marker", bool(os.environ.get("VERIFYBOT_RUN")), flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        open("escaped.txt", "w").write(str(os.getpid()))
        time.sleep(300)
    os._exit(0)
while not os.path.exists("escaped.txt"):
    time.sleep(0.01)
time.sleep(0.2)
print("parent done")
"""


async def test_a_setsid_double_fork_is_named_as_escaped_and_killed(target, remote_dir):
    """Issue 11 item 8(c) on the Pi: the grandchild left the group and its parent; the
    leftover check finds it by the run's VERIFYBOT_RUN marker, names it and kills it."""
    result = await target.run(request("df_1", {"main.py": DOUBLE_FORK}), Recorder())
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "marker True\nparent done\n"
    [escaped] = pids_in(f"{result.workdir}/escaped.txt")
    assert result.escaped == [f"{escaped} (python3) killed"]
    assert wait_until(lambda: not alive(escaped))
    assert leftover_pids(remote_dir[1]) == []
    assert ".vb_run" not in result.files_changed and "escaped.txt" in result.files_changed


async def test_a_plain_run_names_nothing_as_escaped(target):
    result = await target.run(request("plain_1", {"main.py": "print('hi')"}), Recorder())
    assert result.exit_code == 0 and result.escaped == []


async def test_no_user_systemd_here_so_runs_use_the_group_and_the_marker(target):
    """The test sshd has no user systemd: the probe says so for real, and the program
    is started without systemd-run (the marker check above is what holds)."""
    await target.connect()
    assert target.scopes is False
    script = launch_script(target, ["python3", "main.py"], "/tmp/x", False, "tok-1")
    assert "systemd-run" not in script and "VERIFYBOT_RUN=tok-1" in script


def test_with_user_sessions_each_run_gets_its_own_scope(ssh_config, tmp_path):
    """Command construction only (no user systemd to test against here)."""
    from verifybot_tui.targets.ssh_scripts import leftover_sh, scope_prefix

    t = SSHTarget(ssh_config, tmp_path / "ws")
    t.scopes = True
    script = launch_script(t, ["python3", "main.py"], "/tmp/x", False, "123-4-ab")
    assert ("exec systemd-run --user --scope --quiet --collect "
            "--unit=verifybot-123-4-ab.scope -- python3 main.py </dev/null") in script
    assert scope_prefix("1-2-3") in script.replace("123-4-ab", "1-2-3")
    assert 'systemctl --user kill -s KILL "verifybot-$tok.scope"' in leftover_sh(True)
    assert "cgroup.procs" in leftover_sh(True) and "systemctl" not in leftover_sh(False)


async def test_stdout_and_stderr_arrive_in_the_order_they_were_written(target, remote_dir):
    acks = Acks(Path(f"{remote_dir[1]}/runs/order_1"))  # sshd on loopback: the same files
    result = await target.run(request("order_1", {"main.py": INTERLEAVED}), acks)
    assert result.exit_code == 0 and result.target_error is None
    assert interleaved_lines(acks.chunks) == expected_interleaving()
    assert result.stdout.count("out ") == 12 and result.stderr.count("err ") == 12


async def test_a_failing_callback_is_raised_after_the_run_and_the_connection_lives(target):
    calls = []

    def broken(stream: str, text: str) -> None:
        calls.append(text)
        raise RuntimeError("widget gone")

    code = "import sys\nfor _ in range(50):\n    sys.stdout.write('x' * 10000 + '\\n')\n"
    with pytest.raises(RuntimeError, match="widget gone"):
        await target.run(request("broken_1", {"main.py": code}), broken)
    assert len(calls) == 1, "called once, then no more"
    rec = Recorder()
    again = await target.run(request("after_1", {"main.py": "print('still here')\n"}), rec)
    assert again.exit_code == 0 and rec.text("stdout") == "still here\n"
