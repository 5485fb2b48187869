"""Stops that stop (issue 21): every slow case ends on Ctrl+C, SIGTERM or SIGHUP.

Each test is a reproduction run as a user runs it (``verifybot`` in a subprocess, the
replay LLM, real local programs). The waits are for conditions with generous limits;
how long each stop takes is measured by bench/stops.py, not asserted here.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from cli_runs import answers, python_answer, run_cli
from proc_helpers import below, pids_seen_as
from project import verifybot_cmd

from verifybot_tui.core.base.liveness import pid_alive


class Session:
    """A running ``verifybot`` whose stderr is read as it comes (for "wait until")."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen([*verifybot_cmd(), *args], cwd=cwd, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.err: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        """Chunks, not lines: a question waits for its answer without a newline."""
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        while chunk := os.read(fd, 65536):
            self.err.append(chunk.decode("utf-8", "replace"))

    @property
    def stderr(self) -> str:
        return "".join(self.err)

    def wait_for(self, text: str, limit: float = 90) -> None:
        end = time.monotonic() + limit
        while text not in self.stderr:
            assert self.proc.poll() is None, f"ended before {text!r}: {self.stderr}"
            assert time.monotonic() < end, f"never said {text!r}: {self.stderr}"
            time.sleep(0.05)

    def ends(self, limit: float = 20) -> int:
        """The exit status, waiting at most ``limit`` (a stop that does not stop fails)."""
        try:
            return self.proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"still running {limit} s after the stop: "
                                 f"{self.stderr}") from None


def _replay(tmp_path: Path, body: str) -> str:
    path = tmp_path / "answers.md"
    path.write_text(answers(body), encoding="utf-8")
    return f"replay:{path}"


def _run(tmp_path: Path, body: str, *extra: str, target: str = "local") -> Session:
    return Session(["run", "do it", "--llm", _replay(tmp_path, body), "--target", target,
                    "--max-retries", "0", "--workspace", str(tmp_path / "ws"), *extra],
                   tmp_path)


def _wait_gone(pid: int, limit: float = 15) -> None:
    end = time.monotonic() + limit
    while pid_alive(pid):
        assert time.monotonic() < end, f"process {pid} still runs"
        time.sleep(0.05)


@pytest.mark.timeout(120)
def test_ctrl_c_during_a_huge_answer_ends_the_run(tmp_path: Path) -> None:
    body = "![" * 2_400_000 + "\n\n" + python_answer("print(1)")
    s = _run(tmp_path, body, "--yes")
    s.wait_for("answer received")
    s.proc.send_signal(signal.SIGINT)
    assert s.ends() == 130, s.stderr


@pytest.mark.timeout(120)
def test_sigterm_while_a_backtracking_regex_is_checked(tmp_path: Path) -> None:
    s = _run(tmp_path, python_answer('print("a" * 40 + "!")'), "--yes",
             "--expect", "regex:^(a|a)+$")
    s.wait_for("exit status 0")
    s.proc.send_signal(signal.SIGTERM)
    assert s.ends() in (1, 130), s.stderr  # the check may have failed its criterion first
    assert "Traceback" not in s.stderr


@pytest.mark.timeout(120)
def test_names_that_collide_once_numbered_do_not_fill_the_disk(tmp_path: Path) -> None:
    body = ("```python\n# file: b.py\nprint('b')\n```\n\n"
            "```python\n# file: b_1.py/x.py\nprint('x')\n```\n")
    s = _run(tmp_path, body, "--yes")
    assert s.ends(60) == 0, s.stderr
    assert "b_1.py/x.py is left out" in s.stderr
    made = [p for p in (tmp_path / "ws" / "programs").rglob("*") if p.is_file()]
    assert [p.name for p in made] == ["b_1.py"]


def _ctrl_c_at(s: Session, question: str, typed: str) -> None:
    """Ctrl+C while ``question`` waits, then ``typed`` as if typed after it: the run
    ends with 130 and takes nothing of it, without a traceback."""
    s.wait_for(question)
    s.proc.send_signal(signal.SIGINT)
    s.wait_for("stopping")
    assert s.proc.stdin is not None
    try:
        s.proc.stdin.write(typed + "\n")  # typed after the stop: never read as the answer
        s.proc.stdin.flush()
    except BrokenPipeError:
        pass
    assert s.ends() == 130, s.stderr
    assert "InvalidStateError" not in s.stderr and "Traceback" not in s.stderr


@pytest.mark.timeout(120)
def test_ctrl_c_at_the_approval_question_ends_the_run_and_reads_nothing_more(
        tmp_path: Path) -> None:
    s = _run(tmp_path, python_answer("print('ran')"))
    _ctrl_c_at(s, "[a]ccept", "a")
    assert not list((tmp_path / "ws" / "outputs").glob("*.txt")), "nothing ran"


@pytest.mark.timeout(120)
def test_ctrl_c_at_the_install_question_ends_the_run_and_installs_nothing(
        tmp_path: Path) -> None:
    """The program imports a module that no index holds: the question comes before any
    install, and the yes typed after Ctrl+C is not taken."""
    s = _run(tmp_path, python_answer("import vbot_no_such_module_21c\nprint('ran')"))
    s.wait_for("[a]ccept")
    assert s.proc.stdin is not None
    s.proc.stdin.write("a\n")
    s.proc.stdin.flush()
    _ctrl_c_at(s, "Install into the workspace's virtual environment", "y")
    assert "installing vbot" not in s.stderr
    assert not (tmp_path / "ws" / "venv").exists(), "nothing installed"
    assert not list((tmp_path / "ws" / "outputs").glob("*.txt")), "nothing ran"


@pytest.mark.timeout(120)
def test_ctrl_c_at_the_host_key_question_ends_the_run_and_trusts_nothing(
        tmp_path: Path, sshd, remote_dir) -> None:
    known_hosts = tmp_path / "known_hosts"  # the server's key is not in it: asked first
    config = sshd.write_config_toml(tmp_path / "config.toml", remote_dir[0],
                                    known_hosts=str(known_hosts))
    s = _run(tmp_path, python_answer("print('ran')"), "--config", str(config), target="pi")
    _ctrl_c_at(s, "authenticity of host", "y")
    assert not known_hosts.exists() or sshd.host_key_line.split()[1] not in \
        known_hosts.read_text(), "the key is not saved"
    assert "[a]ccept" not in s.stderr, "the run did not go on"


def _sleeper(tmp_path: Path) -> str:
    # its pid goes into its run folder, the one place a sandboxed program writes
    code = "import os, time\nopen('pid', 'w').write(str(os.getpid()))\n"
    return python_answer(code + "print('started', flush=True)\ntime.sleep(300)")


def _pid(tmp_path: Path, ancestor: int, limit: float = 60) -> int:
    """The program's pid as this machine sees it. In a sandbox with its own PID
    namespace it reads another number for itself: the host's is the process below
    ``ancestor`` (VerifyBot) whose last NSpid is the one it wrote."""
    end = time.monotonic() + limit
    found_files = list((tmp_path / "ws" / "runs").glob("*/pid"))
    while not (found_files and found_files[0].read_text().strip()):
        assert time.monotonic() < end, "the program never started"
        time.sleep(0.05)
        found_files = list((tmp_path / "ws" / "runs").glob("*/pid"))
    inner = int(found_files[0].read_text())
    while True:
        found = [p for p in pids_seen_as(inner) if below(p, ancestor)]
        if found:
            return found[0]
        assert time.monotonic() < end, f"no process of ours is pid {inner} in any namespace"
        time.sleep(0.05)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 130),
                                       (signal.SIGHUP, 129)])
def test_recipe_run_stops_on_every_signal_and_kills_the_program(
        tmp_path: Path, sig: int, code: int) -> None:
    (tmp_path / "answers.md").write_text(answers(_sleeper(tmp_path)), encoding="utf-8")
    (tmp_path / "r.toml").write_text('name = "slow"\nprompt = "sleep"\n'
                                     'llm = "replay:answers.md"\ntimeout = 600\n')
    s = Session(["recipe", "run", "r.toml", "--workspace", str(tmp_path / "ws")], tmp_path)
    pid = _pid(tmp_path, s.proc.pid)
    s.proc.send_signal(sig)
    assert s.ends() == code, s.stderr
    _wait_gone(pid)


@pytest.mark.timeout(120)
def test_a_kill_9ed_run_is_interrupted_for_the_next_reader(tmp_path: Path) -> None:
    s = _run(tmp_path, _sleeper(tmp_path), "--yes")
    pid = _pid(tmp_path, s.proc.pid)
    os.kill(s.proc.pid, signal.SIGKILL)  # not reaped yet: a zombie, as under a supervisor
    try:
        proc = run_cli("history", "--json", "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        sessions = json.loads(proc.stdout)
        assert [x["status"] for x in sessions] == ["INTERRUPTED"]
        _wait_gone(pid)  # and what it left running is killed by the same reader
    finally:
        s.proc.wait()
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
