"""Nothing the program starts outlives VerifyBot (issue 11, items 2, 3 and 8).

Real `verifybot run` processes with real programs that fork, ignore TERM,
detach with setsid, and a VerifyBot that is hung up on, interrupted twice or
SIGKILLed at random moments. Each test then looks in /proc for what is left.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_runs import answers, db_rows, python_answer, run_cli
from proc_helpers import alive, all_gone, kill_all
from project import verifybot_cmd

from verifybot_tui.core.store.workspace import private_dir, write_private
from verifybot_tui.targets import live_runs
from verifybot_tui.targets.containment import cgroups, markers
from verifybot_tui.targets.containment.proctable import start_time
from verifybot_tui.targets.sandbox.bubblewrap import NO_SANDBOX


@pytest.fixture(autouse=True)
def no_sandbox(monkeypatch: pytest.MonkeyPatch) -> None:
    """These programs report their pids and the test looks them up in /proc: in the
    sandbox those would be numbers in its PID namespace. So they run without it
    (VERIFYBOT_NO_SANDBOX=1), which is also what tests the guards that machines
    without bubblewrap rely on; tests/targets/test_sandbox.py covers the sandbox."""
    monkeypatch.setenv(NO_SANDBOX, "1")


FORKING = """
    import os, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    open({pidfile!r}, "a").write(f"{{os.getpid()}} {{child.pid}}\\n")
    print("pids", os.getpid(), child.pid, flush=True)
    for i in range(3000):
        print("tick", i, flush=True)
        time.sleep(0.01)
"""


def transcript(tmp_path: Path, code: str) -> Path:
    t = tmp_path / "slow.md"
    t.write_text(answers(python_answer(code, "TIMEOUT: 300\n\nA slow one:")))
    return t


def start(tmp_path: Path, code: str, *extra: str, ws: Path | None = None,
          **kw: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*verifybot_cmd(), "run", "slow", "--llm", f"replay:{transcript(tmp_path, code)}",
         "--target", "local", "--yes", "--max-retries", "0",
         "--workspace", str(ws or tmp_path / "ws"), *extra],
        cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        **kw)  # type: ignore[call-overload]


def wait_for_pids(pidfile: Path, count: int = 1, deadline: float = 60) -> list[int]:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if pidfile.exists():
            lines = pidfile.read_text().splitlines()
            if len(lines) >= count and lines[-1].count(" ") == 1:
                return [int(p) for line in lines for p in line.split()]
        time.sleep(0.02)
    raise AssertionError("the program never wrote its pids")


# -- 2. a closed terminal is Ctrl+C ------------------------------------------------------


def test_sighup_stops_the_tree_writes_interrupted_and_exits_129(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    ws = tmp_path / "ws"
    proc = start(tmp_path, FORKING.format(pidfile=str(pidfile)))
    pids = wait_for_pids(pidfile)
    try:
        proc.send_signal(signal.SIGHUP)
        proc.communicate(timeout=30)
        assert proc.returncode == 129
        assert all_gone(pids), "the program's tree outlived the hang-up"
        assert db_rows(ws, "SELECT status FROM sessions") == [("INTERRUPTED",)]
        assert db_rows(ws, "SELECT status FROM attempts") == [("STOPPED",)]
        listing = run_cli("history", "--workspace", str(ws), cwd=tmp_path).stdout
        assert "STOPPED" in listing and "cancelled: stopped before the program ended" in listing
    finally:
        kill_all(pids)


@pytest.mark.tmux
def test_tmux_kill_session_mid_run_leaves_no_process(tmp_path: Path) -> None:
    def run(llm: Path, ws: Path) -> str:
        return " ".join([*verifybot_cmd(), "run", "slow", "--llm", f"replay:{llm}",
                         "--target", "local", "--yes", "--workspace", str(ws)])

    close_the_terminal_mid_run(tmp_path, (100, 30), run)


def close_the_terminal_mid_run(tmp_path: Path, size: tuple[int, int],
                               verifybot: Callable[[Path, Path], str]) -> None:
    """The shell command ``verifybot(llm, ws)`` (a VerifyBot answered by the replay
    transcript ``llm`` with the FORKING program, its workspace ``ws``) in a tmux session
    that is killed once the program wrote its pids: no process of it may outlive the
    terminal, and the session is recorded INTERRUPTED."""
    assert shutil.which("tmux"), "tmux is needed (apt install tmux)"
    pidfile = tmp_path / "pids"
    ws = tmp_path / "ws"
    llm = transcript(tmp_path, FORKING.format(pidfile=str(pidfile)))
    shell = f"cd {tmp_path} && {verifybot(llm, ws)}"
    tmux = ["tmux", "-L", f"vb-hup-{os.getpid()}-{size[0]}", "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "vb", "-x", str(size[0]), "-y",
                    str(size[1]), shell], check=True, timeout=10)
    pids: list[int] = []
    try:
        pids = wait_for_pids(pidfile)
        subprocess.run([*tmux, "kill-session", "-t", "vb"], check=True, timeout=10)
        assert all_gone(pids, within=15), "the program outlived the closed terminal"
        deadline = time.monotonic() + 15
        while db_rows(ws, "SELECT status FROM sessions") != [("INTERRUPTED",)]:
            assert time.monotonic() < deadline, db_rows(ws, "SELECT status FROM sessions")
            time.sleep(0.1)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=10)
        kill_all(pids)


async def test_a_stop_while_the_program_starts_still_stops_its_whole_tree(
        tmp_path: Path) -> None:
    """The race behind a closed terminal that left a process running: a stop (Ctrl+C,
    a hang-up, a quit) that lands while the program is being started, after the fork
    but before its pipes are connected. asyncio's own clean-up then KILLs only the
    first process; whatever it had forked must be stopped too."""
    from verifybot_tui.core.settings.config import TargetConfig
    from verifybot_tui.targets.local.target import LocalTarget

    target = LocalTarget(TargetConfig(name="local"), tmp_path / "ws")
    pidfile = tmp_path / "pids"
    script = f"sleep 600 & echo $$ $! > {pidfile}; wait"
    before = set(forked_children())  # the suite's own children (a session's sshd, say)
    task = asyncio.create_task(target.processes.exec(["sh", "-c", script], tmp_path,
                                                     lambda *a: None, 30, dict(os.environ)))
    pids: list[int] = []
    try:
        # One loop step at a time until the program is forked (the limit is a time, not
        # a count of steps).
        end = time.monotonic() + 20
        while not set(forked_children()) - before and not task.done() \
                and time.monotonic() < end:
            await asyncio.sleep(0)
        assert set(forked_children()) - before and not task.done(), "never started"
        # The event loop is held (a busy moment) while the program forks its own child.
        pids = wait_for_pids(pidfile, deadline=10)
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=15)
        assert task in done, "the stop hung: the first process killed, its child kept the pipes"
        assert task.cancelled(), "the stop was not passed on"
        assert all_gone(pids, within=5), [p for p in pids if alive(p)]
    finally:  # a failure above leaves nothing running, and no task for the loop's close
        if not pids and pidfile.exists():
            pids = [int(p) for p in pidfile.read_text().split()]
        kill_all(pids)
        task.cancel()
        await asyncio.wait({task}, timeout=15)


def forked_children() -> list[int]:
    """Processes whose parent is this test's process."""
    me = os.getpid()
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    raw = f.read()
            except OSError:
                continue
            if int(raw[raw.rfind(")") + 2:].split()[1]) == me:
                found.append(int(entry.name))
    return found


# -- 3. a second Ctrl+C still kills ------------------------------------------------------


def test_second_ctrl_c_kills_a_term_ignoring_program_at_once(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    ws = tmp_path / "ws"
    code = f"""
        import os, signal, subprocess, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
        open({str(pidfile)!r}, "w").write(f"{{os.getpid()}} {{child.pid}}\\n")
        time.sleep(600)
    """
    proc = start(tmp_path, code)
    pids = wait_for_pids(pidfile)
    try:
        time.sleep(0.3)  # the child has set its handler too
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)  # within the 2 s grace period: TERM was ignored
        assert any(alive(p) for p in pids)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
        assert proc.returncode == 130
        assert not any(alive(p) for p in pids), "a TERM-ignoring program outlived two Ctrl+C"
        assert db_rows(ws, "SELECT status FROM sessions") == [("INTERRUPTED",)]
    finally:
        kill_all(pids)


# -- 8. containment beyond the process group ---------------------------------------------


DOUBLE_FORK = """
    import os, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            open({pidfile!r}, "w").write(f"{{os.getpid()}} 0\\n")
            time.sleep(600)
        os._exit(0)
    time.sleep(1)
    print("parent done")
"""


def _run_double_fork(tmp_path: Path, env: dict[str, str] | None = None
                     ) -> tuple[subprocess.CompletedProcess[str], int]:
    pidfile = tmp_path / "escaped"
    code = DOUBLE_FORK.format(pidfile=str(pidfile))
    proc = run_cli("run", "detach", "--llm", f"replay:{transcript(tmp_path, code)}",
                   "--target", "local", "--yes", "--max-retries", "0",
                   "--workspace", str(tmp_path / "ws"), cwd=tmp_path, env=env)
    return proc, wait_for_pids(pidfile)[0]


def test_setsid_double_fork_is_killed_and_named_as_escaped(tmp_path: Path) -> None:
    """With a writable cgroup v2 (this machine, CI as root in a container) the cgroup
    catches the escaped grandchild; without one the run's marker variable finds it.
    Either way it is named in the verdict and killed."""
    proc, escaped = _run_double_fork(tmp_path)
    try:
        assert proc.returncode == 0, proc.stderr
        how = "cgroup" if cgroups.cgroup_base() is not None else "marker only"
        print(f"containment here: {how}")
        assert f"escaped the program's process tree: {escaped} (python" in proc.stderr
        assert "killed" in proc.stderr and "NOT killable" not in proc.stderr
        assert all_gone([escaped])
    finally:
        kill_all([escaped])


def test_setsid_double_fork_without_cgroup_is_found_by_the_marker(tmp_path: Path) -> None:
    """VERIFYBOT_NO_CGROUP=1 switches the cgroup off (as on a machine without a writable
    cgroup v2): the leftover check finds the escaped grandchild by VERIFYBOT_RUN."""
    proc, escaped = _run_double_fork(tmp_path, env={cgroups.NO_CGROUP: "1"})
    try:
        assert proc.returncode == 0, proc.stderr
        assert f"escaped the program's process tree: {escaped} (python" in proc.stderr
        assert "killed" in proc.stderr and "NOT killable" not in proc.stderr
        assert all_gone([escaped])
        assert not list((tmp_path / "ws").glob("**/verifybot-*")), "no cgroup expected"
    finally:
        kill_all([escaped])


def test_marker_finds_only_the_runs_own_processes(tmp_path: Path) -> None:
    """A process with another run's token (or none) is never named nor killed."""
    token = markers.new_token()
    mine = subprocess.Popen(["sleep", "60"], env={**os.environ, markers.MARKER: token})
    other = subprocess.Popen(["sleep", "60"], env={**os.environ,
                                                   markers.MARKER: token + "0"})
    try:
        assert markers.marker_pids(token) == [mine.pid]
        killed, unkillable = markers.kill_marked(token)
        assert killed == [f"{mine.pid} (sleep)"] and unkillable == []
        assert mine.wait(timeout=10) == -signal.SIGKILL
        assert other.poll() is None
    finally:
        for p in (mine, other):
            p.kill()
            p.wait()


def test_sigkilled_verifybot_takes_its_program_along(tmp_path: Path) -> None:
    """The parent-death signal ends the direct child at once; the next command that
    reads history kills the rest of the recorded group (after its start-time check)."""
    pidfile = tmp_path / "pids"
    ws = tmp_path / "ws"
    proc = start(tmp_path, FORKING.format(pidfile=str(pidfile)))
    program, child = wait_for_pids(pidfile)
    try:
        proc.kill()
        proc.communicate(timeout=30)
        assert all_gone([program]), "the direct child outlived a SIGKILLed VerifyBot"
        listing = run_cli("history", "--workspace", str(ws), cwd=tmp_path)
        assert "INTERRUPTED" in listing.stdout
        assert all_gone([child]), "the next start did not kill the orphaned group"
    finally:
        kill_all([program, child])


def test_an_unrelated_process_with_a_recorded_number_is_never_hit(tmp_path: Path) -> None:
    """A record of ours (0600 in a 0700 folder) that names a process group: no number
    read from a workspace file is acted on, so the process with it now lives on."""
    ws = tmp_path / "ws"
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        live = private_dir(ws / live_runs.LIVE_DIR)
        write_private(live / "x.json", json.dumps({
            "owner": 999999, "owner_start": 1, "pgid": bystander.pid,
            "leader_start": start_time(bystander.pid), "cgroup": None}))
        assert live_runs.sweep_live(ws) == []
        assert bystander.poll() is None
        assert not (live / "x.json").exists()
    finally:
        bystander.kill()
        bystander.wait()


MOMENTS = ["early", "early", "program", "program", "late"]
"""Where each lane's five kills land, shuffled per lane: "early" at a random moment soon
after the start (before or while the workspace is made), "program" right after the
program wrote its pids, "late" a little after that. The moments are counted from
events (the start, the program's pid line), not from the clock, so a loaded machine
that starts slowly moves the kills with it: each lane kills a running program twice
or more, and makes at least three integrity checks."""


def _kill_at(proc: subprocess.Popen[str], moment: str, pidfile: Path, rng: random.Random) -> None:
    before = len(pidfile.read_text().splitlines()) if pidfile.exists() else 0
    if moment == "early":
        time.sleep(rng.uniform(0.0, 1.0))
    else:
        wait_for_pids(pidfile, before + 1)
        time.sleep(rng.uniform(0.0, 0.3) if moment == "program" else rng.uniform(0.3, 1.0))
    proc.kill()


def _sigkill_lane(tmp_path: Path, lane: int, kills: int) -> tuple[Path, list[int], int]:
    """``kills`` runs in one workspace, each SIGKILLed at a random moment: before, during
    or after the program starts. (workspace, the program's pids, integrity checks made)."""
    ws, pidfile = tmp_path / f"ws{lane}", tmp_path / f"pids{lane}"
    home = tmp_path / f"lane{lane}"  # its own replay file: lanes never read one being written
    home.mkdir()
    rng = random.Random(11 + lane)
    moments = rng.sample(MOMENTS, k=len(MOMENTS))[:kills]
    pids: list[int] = []
    checked = 0
    for i, moment in enumerate(moments):
        proc = start(home, FORKING.format(pidfile=str(pidfile)), ws=ws)
        try:
            _kill_at(proc, moment, pidfile, rng)
        finally:
            proc.kill()
            proc.communicate(timeout=30)
        if pidfile.exists():
            pids = [int(p) for p in pidfile.read_text().split()]
        if not (ws / "history.db").exists():
            assert moment == "early", (lane, i, moment)
            continue  # killed before it made the workspace: nothing to check yet
        checked += 1
        con = sqlite3.connect(f"file:{ws / 'history.db'}?mode=ro", uri=True)
        try:
            assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",), (lane, i)
        finally:
            con.close()
    return ws, pids, checked


def test_twenty_sigkills_at_random_moments(tmp_path: Path) -> None:
    """Twenty kills in four workspaces side by side (five in a row in each: every run
    starts over the leftovers of the one killed before it). Side by side, the waits
    for the random moments overlap; each workspace's history must still read whole."""
    from concurrent.futures import ThreadPoolExecutor

    all_pids: list[int] = []
    try:
        with ThreadPoolExecutor(4) as pool:
            lanes = list(pool.map(lambda k: _sigkill_lane(tmp_path, k, 5), range(4)))
        all_pids = [p for _, pids, _ in lanes for p in pids]
        for ws, _, _ in lanes:
            listing = run_cli("history", "--json", "--workspace", str(ws), cwd=tmp_path)
            assert listing.returncode == 0, listing.stderr
            sessions = json.loads(listing.stdout)
            assert len(sessions) <= 5
            assert {s["status"] for s in sessions} <= {"INTERRUPTED"}, [
                s["status"] for s in sessions]
            for s in sessions:
                assert all(a["status"] not in ("RUNNING", "PENDING") for a in s["attempts"])
        checked = sum(c for _, _, c in lanes)
        # each lane killed a running program at least three times ("program", "late")
        assert len(all_pids) >= 4 * 3 * 2, all_pids
        assert all_gone(all_pids), [p for p in all_pids if alive(p)]
        assert checked >= 4 * 3, checked
        print(f"{checked} integrity checks ok, {len(all_pids)} program processes, none left")
    finally:
        kill_all(all_pids + [int(p) for f in tmp_path.glob("pids*") for p in f.read_text().split()])


@pytest.mark.tmux
def test_tmux_kill_session_of_the_tui_mid_run_leaves_no_process(tmp_path: Path) -> None:
    def app(llm: Path, ws: Path) -> str:
        config = tmp_path / "config.toml"
        config.write_text(f'[run]\nauto_accept = true\nworkspace = "{ws}"\n')
        return "TEXTUAL_ANIMATIONS=none " + " ".join([
            *verifybot_cmd(), "slow", "--llm", f"replay:{llm}", "--target", "local",
            "--config", str(config)])

    close_the_terminal_mid_run(tmp_path, (120, 40), app)


def test_next_start_kills_what_escaped_a_sigkilled_run_by_its_marker(tmp_path: Path) -> None:
    """A run's note names its marker: an escaped process of a VerifyBot that was
    SIGKILLed (no group left to kill) is found by it at the next start."""
    token = markers.new_token()
    escaped = subprocess.Popen(["sleep", "60"], start_new_session=True,
                               env={**os.environ, markers.MARKER: token})
    gone_owner = subprocess.Popen(["true"])
    gone_owner.wait()
    ws = tmp_path / "ws"
    private_dir(ws / live_runs.LIVE_DIR)
    write_private(ws / live_runs.LIVE_DIR / f"{gone_owner.pid}-0.json", json.dumps({
        "owner": gone_owner.pid, "owner_start": -1, "pgid": 0, "leader_start": None,
        "cgroup": None, "token": token}))
    try:
        assert live_runs.sweep_live(ws) == [str(escaped.pid)]
        assert escaped.wait(timeout=10) == -signal.SIGKILL
        assert not list((ws / live_runs.LIVE_DIR).glob("*.json"))
    finally:
        escaped.kill()
        escaped.wait()
