"""A local program cannot leave its run (issue 21, point 5).

With bubblewrap the program runs in its own PID namespace: it sees and signals
only its own processes, and everything in the namespace dies with it (also when
VerifyBot is SIGKILLed); a daemon it leaves is still named in the verdict, as
without the sandbox, before the namespace's end kills it. Where no sandbox is
possible (``sandbox = "off"`` here) the escapes of the adversarial pass are still
found and killed: a move into the root cgroup with a wiped environment, a daemon
that keeps re-forking (pid hopping), and a child that changes its uid. Cgroup
folders are gone after a kill.

Processes are found from the host by a tag in their command line: a sandboxed
program's own idea of its pid is a number in its namespace.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from cli_runs import python_answer, replay, run_cli
from proc_helpers import all_gone, tagged
from project import ROOT, need, verifybot_cmd

from verifybot_tui.core.base.ports import ProgramFile, RunRequest
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.containment import cgroups
from verifybot_tui.targets.local.target import LocalTarget
from verifybot_tui.targets.sandbox import limits
from verifybot_tui.targets.sandbox.bubblewrap import NO_SANDBOX


@pytest.fixture(autouse=True)
def _bubblewrap() -> None:
    need("bwrap")



def kill_tagged(tag: str) -> None:
    """Cleanup, whatever was asserted: stop then KILL every tagged process until none is left."""
    for _ in range(200):
        pids = tagged(tag)
        if not pids:
            return
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except OSError:
                    pass
        time.sleep(0.01)


def cgroup2_mount() -> Path:
    """Where the cgroup v2 hierarchy is mounted: its root cgroup."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        if right.split(" ", 1)[0] == "cgroup2":
            return Path(left.split()[4])
    raise AssertionError("no cgroup2 mount")


def local_config(folder: Path, **keys: object) -> Path:
    lines = [f"{k} = {str(v).lower() if isinstance(v, bool) else repr(v)}"
             for k, v in keys.items()]
    config = folder / "config.toml"
    config.write_text("[targets.local]\n" + "\n".join(lines).replace("'", '"') + "\n")
    return config


def run_program(tmp_path: Path, code: str, *, env: dict[str, str] | None = None,
                **keys: object) -> subprocess.CompletedProcess[str]:
    return run_cli("run", "contained", "--llm", replay(tmp_path, python_answer(code)),
                   "--target", "local", "--yes", "--max-retries", "0",
                   "--workspace", str(tmp_path / "ws"),
                   "--config", str(local_config(tmp_path, **keys)), cwd=tmp_path, env=env)


# -- the sandbox -------------------------------------------------------------------------

LOOK_AROUND = """
    import os, signal
    mine = os.getpid()
    others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != mine]
    seen = [p for p in others if b"verifybot" in open(f"/proc/{p}/cmdline", "rb").read()]
    print("VERIFYBOT SEEN", len(seen))
    hit = 0
    for pid in range(1, 40000):
        try:
            os.kill(pid, 0)
            hit += pid != mine and pid not in others and pid != os.getppid()
        except OSError:
            pass
    print("OTHERS SIGNALLABLE", hit)
"""


def test_a_sandboxed_program_sees_and_signals_nothing_of_ours(tmp_path: Path) -> None:
    proc = run_program(tmp_path, LOOK_AROUND)  # sandbox = "auto" by default
    assert proc.returncode == 0, proc.stderr
    assert "VERIFYBOT SEEN 0" in proc.stdout and "OTHERS SIGNALLABLE 0" in proc.stdout
    off = run_program(tmp_path, LOOK_AROUND, sandbox="off")  # the difference it makes
    assert "VERIFYBOT SEEN 0" not in off.stdout, off.stdout


CONNECT = """
    import socket
    try:
        socket.create_connection(("127.0.0.1", PORT), timeout=5).close()
        print("NETWORK reached")
    except OSError as e:
        print("NETWORK unreachable", e)
"""


@pytest.mark.parametrize("network", [True, False])
def test_network_on_or_off(tmp_path: Path, network: bool) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        code = CONNECT.replace("PORT", str(server.getsockname()[1]))
        proc = run_program(tmp_path, code, network=network)
    assert proc.returncode == 0, proc.stderr
    assert ("NETWORK reached" if network else "NETWORK unreachable") in proc.stdout


def test_doctor_says_whether_runs_are_sandboxed(tmp_path: Path) -> None:
    # two local targets in one config, one doctor run with bubblewrap and one without
    config = local_config(tmp_path)
    config.write_text(config.read_text() + '\n[targets.plain]\nkind = "local"\n'
                      'sandbox = "off"\n\n[targets.strict]\nkind = "local"\n'
                      'sandbox = "require"\n')
    found = run_cli("doctor", "--config", str(config), cwd=tmp_path)
    assert "OK   target local: sandbox: bubblewrap" in found.stdout, found.stdout
    assert "WARN target plain: sandbox off" in found.stdout, found.stdout
    assert "OK   target strict: sandbox: bubblewrap" in found.stdout, found.stdout
    none = run_cli("doctor", "--config", str(config), cwd=tmp_path,
                   env={"PATH": "/nonexistent"})
    assert "WARN target local: no sandbox: bubblewrap is not installed" in none.stdout
    assert "FAIL target strict: no sandbox: bubblewrap is not installed" in none.stdout


def test_a_bad_sandbox_value_is_refused_with_the_key(tmp_path: Path) -> None:
    proc = run_program(tmp_path, "print(1)", sandbox="always")
    assert proc.returncode == 2
    assert "targets.local.sandbox" in proc.stderr and '"auto", "require" or "off"' in proc.stderr


DAEMON = """
    import os, subprocess, sys, time
    # setsid, a wiped environment, a new name: every trick of the unsandboxed escapes
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "TAG"],
                     start_new_session=True, env={})
    print("started", flush=True)
    time.sleep(SLEEP)
"""


def test_everything_in_the_sandbox_dies_with_a_sigkilled_verifybot(tmp_path: Path) -> None:
    tag = f"vbtag-{uuid.uuid4().hex[:8]}"
    code = DAEMON.replace("TAG", tag).replace("SLEEP", "600")
    config = local_config(tmp_path)
    proc = subprocess.Popen(
        [*verifybot_cmd(), "run", "daemon", "--llm", replay(tmp_path, python_answer(code)),
         "--target", "local", "--yes", "--max-retries", "0", "--workspace",
         str(tmp_path / "ws"), "--config", str(config)],
        cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 60
        while not tagged(tag) and time.monotonic() < end:
            time.sleep(0.05)
        daemon = tagged(tag)
        assert daemon, proc.communicate(timeout=30)
        proc.kill()
        proc.communicate(timeout=30)
        assert all_gone(daemon), "the sandboxed daemon outlived a SIGKILLed VerifyBot"
    finally:
        proc.kill()
        kill_tagged(tag)


def test_a_daemon_in_the_sandbox_ends_with_the_run(tmp_path: Path) -> None:
    tag = f"vbtag-{uuid.uuid4().hex[:8]}"
    proc = run_program(tmp_path, DAEMON.replace("TAG", tag).replace("SLEEP", "0.5"))
    try:
        assert proc.returncode == 0, proc.stderr
        assert all_gone(tagged(tag), within=5), "the daemon outlived its sandboxed run"
    finally:
        kill_tagged(tag)


def test_a_user_other_than_root_gets_the_sandbox_too(tmp_path: Path) -> None:
    """VerifyBot itself runs as nobody (setpriv): bubblewrap then makes its namespaces
    as an unprivileged user; the program still sees nothing of VerifyBot."""
    assert os.getuid() == 0, "the tests run as root (scripts/test, CI): root switches user"
    need("setpriv")
    home = Path(tempfile.mkdtemp(prefix="vb-nobody-"))
    try:
        os.chmod(home, 0o777)
        closed = [d for d in [ROOT, *ROOT.parents] if not d.stat().st_mode & 0o001]
        assert not closed, f"other users cannot enter {closed[0]}, so nobody cannot run this clone"
        llm = replay(home, python_answer(LOOK_AROUND))
        config = local_config(home)
        os.chmod(home / "answers.md", 0o644)
        os.chmod(config, 0o644)
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "XDG_CONFIG_HOME": str(home),
               "XDG_STATE_HOME": str(home), "XDG_DATA_HOME": str(home),
               "PYTHONPATH": str(ROOT)}
        proc = subprocess.run(
            ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             *verifybot_cmd(), "run", "look", "--llm", llm, "--target", "local", "--yes",
             "--max-retries", "0", "--workspace", str(home / "ws"), "--config",
             str(config)], cwd=home, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "VERIFYBOT SEEN 0" in proc.stdout and "OTHERS SIGNALLABLE 0" in proc.stdout
    finally:
        shutil.rmtree(home, ignore_errors=True)


# -- what the sandbox's end kills is named ----------------------------------------------

# A double fork with setsid: the daemon (sleep, its argument the test's tag) is no
# longer in the program's session nor its child. The parent waits until the daemon
# has exec'd sleep (its end of the pipe closes on exec), so the name is sleep's.
LEAVE_DAEMON = """
    import os
    r, w = os.pipe()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            if not HOLD:
                null = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(null, fd)
            os.execvp("sleep", ["sleep", "TAG"])
        os._exit(0)
    os.close(w)
    os.read(r, 1)
    print("parent done", flush=True)
"""

# A child left in the program's own session is part of its tree, as without the
# sandbox: it ends with the run and is not named as escaped.
LEAVE_CHILD = """
    import subprocess
    subprocess.Popen(["sleep", "TAG"])
    print("parent done", flush=True)
"""


def sleep_tag() -> str:
    """A unique argument for sleep (seconds it would sleep), found again in /proc."""
    return f"1000.{uuid.uuid4().int % 10**9:09d}"


def sandboxed(tmp_path: Path) -> LocalTarget:
    return LocalTarget(TargetConfig(name="local"), tmp_path / "ws")


def py_request(code: str, timeout: float = 30) -> RunRequest:
    code = textwrap.dedent(code).strip() + "\n"
    return RunRequest(run_id="prog_1", files=[ProgramFile("main.py", "main.py", code, "python")],
                      entry="main.py", language="python", timeout=timeout)


@pytest.mark.parametrize("hold", [False, True], ids=["detached", "holding_stdout"])
async def test_a_daemon_left_in_the_sandbox_is_named_and_killed(tmp_path: Path,
                                                               hold: bool) -> None:
    tag = sleep_tag()
    code = LEAVE_DAEMON.replace("HOLD", str(hold)).replace("TAG", tag)
    try:
        result = await sandboxed(tmp_path).run(py_request(code), lambda s, t: None)
        assert result.exit_code == 0 and result.stdout == "parent done\n", result.stderr
        assert not result.timed_out
        assert len(result.escaped) == 1, result.escaped
        assert re.fullmatch(r"\d+ \(sleep\) killed", result.escaped[0]), result.escaped
        assert all_gone(tagged(tag), within=5), "the daemon outlived its sandboxed run"
    finally:
        kill_tagged(tag)


async def test_a_program_that_leaves_nothing_names_nothing(tmp_path: Path) -> None:
    result = await sandboxed(tmp_path).run(py_request("print('hi')"), lambda s, t: None)
    assert (result.exit_code, result.stdout, result.stderr) == (0, "hi\n", "")
    assert result.escaped == []


async def test_a_child_left_in_the_programs_session_ends_unnamed(tmp_path: Path) -> None:
    """As without the sandbox: what stayed in the tree is stopped, not said to escape."""
    tag = sleep_tag()
    try:
        result = await sandboxed(tmp_path).run(py_request(LEAVE_CHILD.replace("TAG", tag)),
                                               lambda s, t: None)
        assert result.exit_code == 0 and result.escaped == [], result.escaped
        assert all_gone(tagged(tag), within=5), "the child outlived its sandboxed run"
    finally:
        kill_tagged(tag)


async def test_exit_status_and_stderr_of_a_signalled_program_stay_as_they_were(
        tmp_path: Path) -> None:
    """A program killed by a signal ends with 128 + the signal in the sandbox (what
    bubblewrap reports), and nothing but the program writes to its stderr."""
    code = "import os, signal\nprint('before', flush=True)\nos.kill(os.getpid(), signal.SIGSEGV)"
    result = await sandboxed(tmp_path).run(py_request(code), lambda s, t: None)
    assert (result.exit_code, result.stdout, result.stderr) == (128 + 11, "before\n", "")
    assert result.escaped == []


def test_the_verdict_of_a_sandboxed_run_names_the_daemon(tmp_path: Path) -> None:
    tag = sleep_tag()
    try:
        proc = run_program(tmp_path, LEAVE_DAEMON.replace("HOLD", "True").replace("TAG", tag))
        assert proc.returncode == 0, proc.stderr
        assert "parent done" in proc.stdout
        assert re.search(r"escaped the program's process tree: \d+ \(sleep\) killed",
                         proc.stderr), proc.stderr
        assert "NOT killable" not in proc.stderr
        assert all_gone(tagged(tag), within=5)
    finally:
        kill_tagged(tag)


# -- where no sandbox is possible --------------------------------------------------------


def assert_escaped_and_killed(proc: subprocess.CompletedProcess[str], tag: str) -> None:
    """The run passed, its verdict names what escaped as killed, and it is gone."""
    assert proc.returncode == 0, proc.stderr
    assert "escaped the program's process tree" in proc.stderr
    assert "killed" in proc.stderr and "NOT killable" not in proc.stderr
    assert all_gone(tagged(tag), within=5)

CGROUP_MOVE = """
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            try:
                open(ROOT_PROCS, "w").write(str(os.getpid()))
            except OSError as e:
                print("cannot move", e, flush=True)
            os.execve(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)",
                                       "TAG"], {})
        os._exit(0)
    time.sleep(0.5)
    print("parent done")
"""


def test_a_move_into_the_root_cgroup_with_a_wiped_environment_is_found(tmp_path: Path) -> None:
    base = cgroups.cgroup_base()
    assert base is not None, "this kind of machine (and CI's) has a writable cgroup v2"
    root_procs = cgroup2_mount() / "cgroup.procs"
    tag = f"vbtag-{uuid.uuid4().hex[:8]}"
    code = CGROUP_MOVE.replace("ROOT_PROCS", repr(str(root_procs))).replace("TAG", tag)
    try:
        proc = run_program(tmp_path, code, sandbox="off")
        assert "cannot move" not in proc.stdout
        assert_escaped_and_killed(proc, tag)
    finally:
        kill_tagged(tag)


HOPPER = """
    import os, subprocess, sys, time
    hop = "import os\\nwhile True:\\n    if os.fork():\\n        os._exit(0)\\n"
    daemon = subprocess.Popen([sys.executable, "-c", hop], start_new_session=True)
    open(GROUP, "w").write(str(daemon.pid))  # its process group, which every hop keeps
    time.sleep(0.5)
    print("parent done")
"""


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs: the group is stopped first (a
    hopper's pids change too fast to scan), then looked for, zombies aside."""
    try:
        os.killpg(pgid, signal.SIGSTOP)
    except ProcessLookupError:
        return False
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                fields = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                return True
    return False


def test_a_pid_hopping_daemon_is_found_and_killed(tmp_path: Path) -> None:
    """Without a cgroup (which would hold every hop) the marker check must outrun a
    daemon that forks and exits as fast as it can."""
    group = tmp_path / "group"
    pgid = 0
    try:
        proc = run_program(tmp_path, HOPPER.replace("GROUP", repr(str(group))),
                           sandbox="off", env={cgroups.NO_CGROUP: "1"})
        pgid = int(group.read_text())
        assert proc.returncode == 0, proc.stderr
        assert "escaped the program's process tree" in proc.stderr
        assert "NOT killable" not in proc.stderr
        time.sleep(0.5)
        assert not group_alive(pgid), "the hopping daemon is still running"
    finally:
        if pgid > 1:
            for sig in (signal.SIGSTOP, signal.SIGKILL):
                try:
                    os.killpg(pgid, sig)
                except ProcessLookupError:
                    pass


UID_CHANGE = """
    import subprocess, time
    # /usr/bin/python3: an interpreter under /root (pyenv) is out of the other user's reach
    subprocess.Popen(["/usr/bin/python3", "-c", "import time; time.sleep(600)", "TAG"],
                     start_new_session=True, user=65534, group=65534, extra_groups=[],
                     cwd="/")
    time.sleep(0.5)
    print("parent done")
"""


def test_a_child_that_changes_uid_is_found_and_killed(tmp_path: Path) -> None:
    """Without a cgroup (VERIFYBOT_NO_CGROUP=1) only the marker check is left: it looks
    at every user's processes when VerifyBot runs as root."""
    assert os.getuid() == 0, "the tests run as root (scripts/test, CI): only root changes uid"
    tag = f"vbtag-{uuid.uuid4().hex[:8]}"
    try:
        proc = run_program(tmp_path, UID_CHANGE.replace("TAG", tag), sandbox="off",
                           env={cgroups.NO_CGROUP: "1"})
        assert_escaped_and_killed(proc, tag)
    finally:
        kill_tagged(tag)


FOREVER = """
    import subprocess, sys, time
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", "TAG"])
    print("started", flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_cgroup_folders_are_removed_after_a_kill_9(tmp_path: Path, sandbox: str) -> None:
    base = cgroups.cgroup_base()
    assert base is not None, "this kind of machine (and CI's) has a writable cgroup v2"
    tag = f"vbtag-{uuid.uuid4().hex[:8]}"
    config = local_config(tmp_path, sandbox=sandbox)
    code = FOREVER.replace("TAG", tag)
    proc = subprocess.Popen(
        [*verifybot_cmd(), "run", "forever", "--llm", replay(tmp_path, python_answer(
            code, "TIMEOUT: 300\n\nHere:")), "--target", "local", "--yes",
         "--max-retries", "0", "--workspace", str(tmp_path / "ws"), "--config", str(config)],
        cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        end = time.monotonic() + 60
        while not tagged(tag) and time.monotonic() < end:
            time.sleep(0.05)
        assert tagged(tag), proc.communicate(timeout=30)
        # Root on a host with cgroup v1 controllers: the run's cgroup is its pids one.
        bases = [b for b in (base, limits.v1_pids_base()) if b is not None]
        mine = [p for b in bases for p in b.glob(f"verifybot-{proc.pid}-*")]
        assert mine, "the run should have had a cgroup"
        proc.kill()
        proc.communicate(timeout=30)
        listing = run_cli("history", "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
        assert listing.returncode == 0, listing.stderr
        assert all_gone(tagged(tag), within=5)
        assert [p for p in mine if p.exists()] == [], "cgroup folders left behind"
    finally:
        proc.kill()
        kill_tagged(tag)


# -- where no sandbox can be made --------------------------------------------------------


def test_a_run_without_a_sandbox_says_so_at_start(tmp_path: Path) -> None:
    proc = run_program(tmp_path, "print('ran')", env={NO_SANDBOX: "1"})
    assert proc.returncode == 0 and "ran" in proc.stdout, proc.stderr
    first = proc.stderr.index("[verifybot] target local: no sandbox here")
    assert first < proc.stderr.index("sending the initial prompt"), proc.stderr
    quiet = run_program(tmp_path, "print('ran')")
    assert "no sandbox" not in quiet.stderr


def test_sandbox_require_refuses_to_run_without_one(tmp_path: Path) -> None:
    proc = run_program(tmp_path, "open('RAN', 'w').write('x')", sandbox="require",
                       env={NO_SANDBOX: "1"})
    assert proc.returncode == 4, proc.stderr
    assert 'sandbox = "require", but no sandbox can be made here' in proc.stderr
    assert "sending the initial prompt" not in proc.stderr  # refused before anything went
    assert not list((tmp_path / "ws").glob("runs/*/RAN"))
    ok = run_program(tmp_path, "print('ran')", sandbox="require")  # with bubblewrap: runs
    assert ok.returncode == 0 and "ran" in ok.stdout, ok.stderr


async def test_a_target_with_sandbox_require_refuses_in_the_app_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI's runs go through the target itself: it refuses rather than run bare."""
    from verifybot_tui.core.base.errors import TargetError

    monkeypatch.setenv(NO_SANDBOX, "1")
    target = LocalTarget(TargetConfig(name="local", sandbox="require"), tmp_path / "ws")
    with pytest.raises(TargetError, match="no sandbox can be made here"):
        await target.run(py_request("open('RAN', 'w').write('x')"), lambda s, t: None)
    assert not (tmp_path / "ws" / "runs" / "prog_1" / "RAN").exists()
