"""A real OpenSSH sshd on a loopback port, and a normal user to log in as.

Why real: the behaviours the SSH target relies on (signals delivered to the
command's process group, channels dying with the connection, SFTP, host keys,
password and key auth) are sshd's, and a fake server would only test our
assumptions about it. The user is a plain non-root account because sshd
refuses session signals for root logins.

Plain functions (``start_sshd``) serve bench/ too; the pytest fixtures at the
bottom wrap them. Import the fixtures into a test module with
``from sshd_fixtures import *  # noqa: F403``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from proc_helpers import kill_all

from verifybot_tui.core.settings.config import TargetConfig

SSHD = "/usr/sbin/sshd"
TEST_USER = "vbtest"
HOST = "127.0.0.1"

__all__ = ["SSHDServer", "start_sshd", "ensure_test_user", "sshd", "remote_dir", "ssh_config",
           "leftover_pids", "session_processes", "wait_gone", "TEST_USER"]


def ensure_test_user(user: str = TEST_USER) -> Path:
    """Create the normal user the tests log in as (once per machine), return its home."""
    try:
        return Path(pwd.getpwnam(user).pw_dir)
    except KeyError:
        pass
    if os.geteuid() != 0:
        raise RuntimeError(f"user {user!r} does not exist and only root can create it")
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", user], check=True,
                   capture_output=True)
    return Path(pwd.getpwnam(user).pw_dir)


SHARED = Path(tempfile.gettempdir()) / "verifybot-test-user"  # root-only: lock, password


@contextlib.contextmanager
def _user_lock() -> Iterator[Path]:
    """The shared password's folder, locked: test sessions in other worktrees run at
    the same time on this machine and log in as the same user."""
    SHARED.mkdir(mode=0o700, exist_ok=True)
    with (SHARED / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield SHARED
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _live_holders(folder: Path) -> list[Path]:
    """The holders' pid files whose process still runs (a crashed session's go)."""
    live = []
    for pidfile in folder.glob("holder-*"):
        try:
            os.kill(int(pidfile.name.removeprefix("holder-")), 0)
            live.append(pidfile)
        except (ValueError, ProcessLookupError):
            pidfile.unlink(missing_ok=True)
    return live


def hold_password(user: str) -> str:
    """The user's password for this test session, the same for every session running.

    Each session set a password of its own before: one session starting while
    another ran changed it under the other's feet (a refused login, only when the
    machine was busy with several test runs), and one ending cleared it for all.
    """
    with _user_lock() as folder:
        stored = folder / "password"
        if not _live_holders(folder) or not stored.exists():
            stored.write_text("vb-" + secrets.token_urlsafe(12))
            stored.chmod(0o600)
            set_password(user, stored.read_text())
        (folder / f"holder-{os.getpid()}").touch()
        return stored.read_text()


def release_password(user: str) -> None:
    """The last session to stop clears the password (no password left on the account)."""
    with _user_lock() as folder:
        (folder / f"holder-{os.getpid()}").unlink(missing_ok=True)
        if not _live_holders(folder):
            (folder / "password").unlink(missing_ok=True)
            set_password(user, "")


def set_password(user: str, password: str) -> None:
    """``*`` (no password, not locked) when empty: a locked ``!`` account is refused by sshd."""
    if password:
        subprocess.run(["chpasswd"], input=f"{user}:{password}\n", text=True, check=True,
                       capture_output=True)
    else:
        subprocess.run(["usermod", "-p", "*", user], check=True, capture_output=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _keygen(path: Path, comment: str) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True, capture_output=True)


def _ppid(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat.rsplit(")", 1)[1].split()[1])


def _all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def descendants(root: int) -> list[int]:
    """Every process under ``root`` (the sshd listener: its sessions and their programs)."""
    children: dict[int, list[int]] = {}
    for pid in _all_pids():
        children.setdefault(_ppid(pid), []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def session_processes(pid: int) -> list[int]:
    """The sshd processes serving the connection that runs ``pid`` (nearest first).

    Killing or stopping them is how a test makes a connection die or go silent.
    """
    found = []
    parent = _ppid(pid)
    while parent > 1:
        try:
            cmd = Path(f"/proc/{parent}/cmdline").read_bytes().split(b"\0")[0].decode()
        except OSError:
            break
        if not cmd.startswith("sshd:"):
            break
        found.append(parent)
        parent = _ppid(parent)
    return found


def user_pids(user: str = TEST_USER) -> list[int]:
    """The user's processes, as ``ps -u`` lists them."""
    out = subprocess.run(["ps", "-u", user, "-o", "pid="], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def leftover_pids(folder: str, user: str = TEST_USER) -> list[int]:
    """The user's processes whose working folder is inside ``folder`` (one test's remote dir).

    Filtering by folder keeps a check of one test blind to another run's processes.
    """
    found = []
    for pid in user_pids(user):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd == folder or cwd.startswith(folder.rstrip("/") + "/"):
            found.append(pid)
    return found


def wait_gone(folder: str, timeout: float = 5.0) -> list[int]:
    """Leftovers in ``folder`` once they have had ``timeout`` seconds to die."""
    deadline = time.monotonic() + timeout
    while True:
        left = leftover_pids(folder)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@dataclass
class SSHDServer:
    port: int
    user: str
    home: Path
    password: str
    dir: Path  # sshd_config, keys and log (readable by the user: sshd reads keys as them)
    client_key: Path
    known_hosts: Path  # pre-filled with the host key
    host_key_line: str  # "ssh-ed25519 AAAA..." as a known_hosts entry would hold it
    proc: subprocess.Popen
    log: Path
    base: str = ""  # the folder under home that holds this session's remote dirs
    host: str = HOST
    extra: dict = field(default_factory=dict)

    def config(self, remote_dir: str, name: str = "pi", **changes) -> TargetConfig:
        values = dict(name=name, kind="ssh", host=self.host, port=self.port, user=self.user,
                      key_file=str(self.client_key), known_hosts=str(self.known_hosts),
                      password_env="VERIFYBOT_TEST_NO_SUCH_VAR", remote_dir=remote_dir)
        values.update(changes)
        return TargetConfig(**values)

    def write_config_toml(self, path: Path, remote_dir: str, workspace: Path | None = None,
                          **target) -> Path:
        """A config.toml for CLI tests: [targets.pi] on this server, default target pi."""
        import tomli_w

        cfg = self.config(remote_dir, **target)
        table = {k: getattr(cfg, k) for k in ("kind", "host", "port", "user", "key_file",
                                              "password_env", "remote_dir", "known_hosts")}
        data: dict = {"run": {"default_target": "pi", "timeout": 20.0},
                      "targets": {"pi": table}}
        if workspace is not None:
            data["run"]["workspace"] = str(workspace)
        path.write_text(tomli_w.dumps(data), encoding="utf-8")
        return path

    def session_pids(self) -> list[int]:
        return descendants(self.proc.pid)

    def stop(self) -> None:
        sessions = self.session_pids()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        kill_all(sessions)
        if self.base:
            kill_all(leftover_pids(str(self.home / self.base)))
            shutil.rmtree(self.home / self.base, ignore_errors=True)
        release_password(self.user)
        shutil.rmtree(self.dir, ignore_errors=True)


def start_sshd(user: str = TEST_USER) -> SSHDServer:
    """Start /usr/sbin/sshd -D -e on a free loopback port; the caller must ``stop()`` it."""
    home = ensure_test_user(user)
    password = hold_password(user)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir
    d = Path(tempfile.mkdtemp(prefix="vb-sshd-"))
    d.chmod(0o755)
    _keygen(d / "host_ed25519", "vb-test-host")
    _keygen(d / "client_ed25519", "vb-test-client")
    (d / "authorized_keys").write_text((d / "client_ed25519.pub").read_text())
    (d / "authorized_keys").chmod(0o644)
    host_pub = " ".join((d / "host_ed25519.pub").read_text().split()[:2])
    base = "vbt-" + secrets.token_hex(4)
    log = d / "sshd.log"
    for _attempt in range(5):
        port = _free_port()
        (d / "sshd_config").write_text(
            f"ListenAddress {HOST}:{port}\n"
            f"HostKey {d / 'host_ed25519'}\n"
            f"PidFile {d / 'sshd.pid'}\n"
            f"AuthorizedKeysFile {d / 'authorized_keys'}\n"
            "UsePAM no\nStrictModes no\nPasswordAuthentication yes\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
            f"AllowUsers {user}\nPermitRootLogin no\nMaxAuthTries 6\n"
            "Subsystem sftp internal-sftp\nLogLevel VERBOSE\n")
        proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")],
                                stdout=subprocess.DEVNULL, stderr=log.open("ab"))
        if _wait_banner(port, proc):
            break
        proc.kill()
        proc.wait()
    else:
        raise RuntimeError(f"sshd did not start; log: {log.read_text()[-2000:]}")
    kh = d / "known_hosts"
    kh.write_text(f"[{HOST}]:{port} {host_pub}\n")
    (home / base).mkdir(mode=0o755)
    pw = pwd.getpwnam(user)
    os.chown(home / base, pw.pw_uid, pw.pw_gid)
    return SSHDServer(port=port, user=user, home=home, password=password, dir=d,
                      client_key=d / "client_ed25519", known_hosts=kh, host_key_line=host_pub,
                      proc=proc, log=log, base=base)


def _wait_banner(port: int, proc: subprocess.Popen, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with socket.create_connection((HOST, port), timeout=1) as s:
                if s.recv(4).startswith(b"SSH-"):
                    return True
        except OSError:
            time.sleep(0.05)
    return False


@pytest.fixture(scope="session")
def sshd() -> Iterator[SSHDServer]:
    server = start_sshd()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def remote_dir(sshd: SSHDServer) -> Iterator[tuple[str, str]]:
    """(as configured: ``~/...``, absolute): a fresh remote_dir per test, cleaned after."""
    rel = f"{sshd.base}/t-{secrets.token_hex(4)}"
    absolute = str(sshd.home / rel)
    yield f"~/{rel}", absolute
    kill_all(leftover_pids(absolute))
    shutil.rmtree(absolute, ignore_errors=True)


@pytest.fixture
def ssh_config(sshd: SSHDServer, remote_dir: tuple[str, str]) -> TargetConfig:
    return sshd.config(remote_dir[0])
