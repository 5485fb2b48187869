"""The Pi's after-run report cannot be forged by the program: its token is not the
program's VERIFYBOT_RUN, nor anything the program can read (real sshd on loopback)."""

from __future__ import annotations

import pytest
from ssh_helpers import Recorder, request

pytestmark = pytest.mark.ssh

# Prints a report with every token it can find (its own marker, .vb_run, whatever looks
# like one in the command lines and environments of the processes it can read), with
# nothing escaped and no files in it; leaves a daemon; dies with a traceback.
FORGER = r"""
import glob, os, re, subprocess, sys
subprocess.Popen(["sleep", "300"], start_new_session=True)
found = {os.environ["VERIFYBOT_RUN"], open(".vb_run").read().strip()}
for path in glob.glob("/proc/[0-9]*/cmdline") + glob.glob("/proc/[0-9]*/environ"):
    try:
        data = open(path, "rb").read().decode("utf-8", "replace").replace("\0", " ")
    except OSError:
        continue
    found |= set(re.findall(r"vb-report ([\w-]+)", data))
    found |= set(re.findall(r"VERIFYBOT_RUN=([\w-]+)", data))
for token in sorted(found):
    sys.stdout.write(f"\x1evb-report {token}\n\x1evb-end {token}\n")
sys.stdout.flush()
print("tokens tried:", len(found))
raise RuntimeError("the traceback that must be seen")
"""


async def test_a_program_printing_report_lines_hides_neither_its_traceback_nor_a_daemon(
        target):
    rec = Recorder()
    result = await target.run(request("forge_1", {"main.py": FORGER}), rec)
    assert result.target_error is None
    assert result.exit_code == 1
    assert "RuntimeError: the traceback that must be seen" in result.stderr
    assert "tokens tried:" in result.stdout  # the run went on after the fake report
    assert "\x1evb-report " in result.stdout  # shown as the program's output, nothing more
    assert any("(sleep) killed" in e for e in result.escaped), result.escaped


def test_a_shell_other_than_bash_gets_the_token_on_a_here_document(tmp_path):
    """A login shell that is not bash (dash): the watcher is its own `sh -c`, and the
    report token reaches it on fd 4, not in its arguments. The launch script runs here
    as sshd would run it: the channel's stdin a pipe, closed once the program ended."""
    import subprocess

    from verifybot_tui.core.settings.config import TargetConfig
    from verifybot_tui.targets import ssh_scripts
    from verifybot_tui.targets.ssh.launch import launch_script
    from verifybot_tui.targets.ssh.target import SSHTarget

    t = SSHTarget(TargetConfig(name="pi", kind="ssh", host="127.0.0.1"), tmp_path / "ws")
    t.scopes = False
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    script = launch_script(t, ["sh", "-c", "echo program ran; sleep 300 & exit 0"],
                           str(run_dir), False, "marker-1")
    secret = "report-token-42"
    proc = subprocess.Popen(["dash", "-c", script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(ssh_scripts.channel_stdin(secret, b""))
    proc.stdin.flush()
    assert proc.wait(timeout=20) == 0
    proc.stdin.close()  # what sshd does when the program it started exits
    out = proc.stdout.read()  # the watcher and the sleep's copy close it at their end
    assert out.startswith(b"program ran\n"), out
    report = out.split(ssh_scripts.report_start(secret), 1)[1]
    assert ssh_scripts.report_end(secret) in report
    assert b"vb-killed-leftovers" in report  # the sleep left in its group was stopped
    assert secret not in script


async def test_a_big_archive_follows_the_token_on_the_channels_stdin(target):
    """Over INLINE_MAX the files come on stdin after the token's line: both arrive."""
    from verifybot_tui.targets.ssh_scripts import INLINE_MAX

    data = "".join(f"line {i:06d}\n" for i in range(INLINE_MAX // 10))
    files = {"main.py": "print(len(open('data.txt').read()))\n", "data.txt": data}
    result = await target.run(request("big_1", files, entry="main.py"), Recorder())
    assert result.target_error is None and result.exit_code == 0, result.stderr
    assert result.stdout == f"{len(data)}\n"


# Reads the memory of every process of its user that could be the watcher (a shell whose
# command line prints report lines) for token-shaped words, prints a report with each
# (nothing escaped), leaves a daemon and exits 0: the forgery that once passed.
MEMORY_FORGER = r"""
import os, re, subprocess, sys
subprocess.Popen(["sleep", "300"], start_new_session=True)
me, found, children = os.getpid(), set(), []
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        ppid = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
    except OSError:
        continue
    if int(ppid) == me:
        children.append(cmd.replace(b"\0", b" ").decode(errors="replace"))
    if b"vb-report" not in cmd or int(pid) == me:
        continue
    try:
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
        for line in open(f"/proc/{pid}/maps"):
            span, perms = line.split()[:2]
            if "r" not in perms or "[v" in line:
                continue
            lo, hi = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(lo)
                data = mem.read(min(hi - lo, 1 << 22))
            except OSError:
                continue
            found |= set(re.findall(rb"[0-9]+-[0-9]+-[0-9a-f]{16}", data))
    except OSError:
        pass
for token in sorted(found):
    t = token.decode()
    sys.stdout.write(f"\x1evb-report {t}\n\x1evb-end {t}\n")
print("tokens read:", len(found), "watcher among my children:",
      any("vb-report" in c for c in children), flush=True)
"""


async def test_a_token_read_from_memory_before_the_exit_status_forges_nothing(target):
    """The watcher is no child of the program, and a report before the program's exit
    status is only output: the daemon is named, whatever tokens the program found."""
    result = await target.run(request("forge_2", {"main.py": MEMORY_FORGER}), Recorder())
    assert result.target_error is None and result.exit_code == 0, result.stderr
    assert "watcher among my children: False" in result.stdout, result.stdout
    print(result.stdout.splitlines()[-1])
    assert any("(sleep) killed" in e for e in result.escaped), (result.escaped, result.stdout)


def test_report_lines_before_the_exit_status_are_output_and_a_second_report_a_warning():
    """The channel's reader, fed as asyncssh feeds it: report lines before the exit status
    are the program's output; after it the first report counts, a second one is said."""
    from verifybot_tui.targets import ssh_scripts
    from verifybot_tui.targets.ssh.channel import ProgramSession
    from verifybot_tui.targets.ssh.outcome import Outcome

    seen = Recorder()
    s = ProgramSession(Outcome(), seen, [], "7-1-0123456789abcdef")
    start, end = ssh_scripts.report_start("7-1-0123456789abcdef"), ssh_scripts.report_end(
        "7-1-0123456789abcdef")
    s.data_received(b"hello\n" + start + b"vb-killed-leftovers\n" + end, None)
    assert not s.reported.is_set() and "vb-killed-leftovers" in seen.text("stdout")
    s.exit_status_received(0)
    s.data_received(start + b"vb-escaped 42 sleep\n" + end, None)
    assert s.reported.is_set() and s.report_text() == "vb-escaped 42 sleep\n"
    s.data_received(start + end, None)
    assert s.second_report
    s.warn("a second after-run report came")
    assert "[verifybot] warning: a second after-run report came" in seen.text("stderr")
