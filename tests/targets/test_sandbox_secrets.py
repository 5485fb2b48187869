"""Nothing secret is inside the sandbox, and nothing in it acts on the user's terminal
(issue 28, item 1): hostile answers replayed against fake secrets planted in a temp HOME.

The planted secrets are what the hostile pass found: an SSH key, a browser profile's
cookie file, VerifyBot's own config, another workspace's history.db, an agent socket
(a real listening one), an API key in the environment. The answer tries to read each,
write the user's ``~/.bashrc``, reach the socket, and, as root, use its powers: its
capabilities, ``/dev/tty``, ``TIOCSTI``, a remount of ``/``. VerifyBot runs once as
root and once as an ordinary user (``setpriv``); the same answer with ``sandbox =
"off"`` reads the key, so the test would see a sandbox that let it through.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runs import python_answer, replay
from project import ROOT, need, verifybot_cmd

NOBODY = 65534
API_KEY = "sk-fake-planted-0123456789abcdef"

HOSTILE = r'''
import ctypes, errno, fcntl, os, socket, termios
SECRETS = __PATHS__
for name, path in SECRETS.items():
    try:
        with open(path, "rb") as f:
            print("GOT", name, f.read(60))
    except OSError as e:
        print("DENIED", name, errno.errorcode.get(e.errno, e.errno))
for name, path in SECRETS.items():
    print("LISTED" if os.path.exists(os.path.dirname(path)) else "NO DIR", name)
print("ENV SSH_AUTH_SOCK", os.environ.get("SSH_AUTH_SOCK", "unset"))
print("ENV API KEY", "OPENAI_API_KEY" in os.environ or __API__ in str(os.environ))
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(__AGENT__)
    print("AGENT REACHED")
except OSError as e:
    print("AGENT UNREACHABLE", errno.errorcode.get(e.errno, e.errno))
for target in (__BASHRC__, os.path.expanduser("~/.bashrc")):
    try:
        with open(target, "a") as f:
            f.write("echo MARKER\n")
        print("WROTE", target)
    except OSError as e:
        print("NOT WRITTEN", target, errno.errorcode.get(e.errno, e.errno))
caps = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]
print("CAPEFF", caps)
try:
    os.open("/dev/tty", os.O_RDWR)
    print("TTY OPENED")
except OSError as e:
    print("TTY REFUSED", errno.errorcode.get(e.errno, e.errno))
typed = 0
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x")
        typed += 1
    except OSError:
        pass
print("TIOCSTI TYPED", typed)
try:
    tty = os.open(__PTS__, os.O_RDWR | os.O_NOCTTY)
    print("PTS OPENED")
    fcntl.ioctl(tty, termios.TIOCSTI, b"x")
    print("PTS TYPED")
except OSError as e:
    print("PTS REFUSED", errno.errorcode.get(e.errno, e.errno))
libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND = 32, 4096
rc = libc.mount(b"none", b"/", None, MS_REMOUNT | MS_BIND, None)
print("REMOUNT", "done" if rc == 0 else errno.errorcode.get(ctypes.get_errno(), "?"))
pts = [p for p in os.listdir("/dev/pts") if p.isdigit()]
print("HOST PTS", len(pts))
'''


class Home:
    """A temp HOME holding fake secrets, owned by ``uid`` (who could read them unsandboxed)."""

    def __init__(self, root: Path, uid: int) -> None:
        self.root = root
        self.paths = {
            "ssh": root / ".ssh" / "id_ed25519",
            "cookie": root / ".local/share/verifybot/profiles/chatgpt/Default/Cookies",
            "config": root / ".config/verifybot/config.toml",
            "other_ws": root / "other-ws" / "history.db",
        }
        for name, path in self.paths.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"PLANTED-{name.upper()}-SECRET\n")
        self.bashrc = root / ".bashrc"
        self.bashrc.write_text("# the user's own\n")
        self.agent_dir = Path(tempfile.mkdtemp(prefix="vb-agent-"))
        self.agent = self.agent_dir / "agent.sock"
        self.server = socket.socket(socket.AF_UNIX)
        self.server.bind(str(self.agent))
        self.server.listen()
        self.master, slave = os.openpty()  # the user's terminal: a program must not type in it
        self.pts = os.ttyname(slave)
        os.close(slave)
        for path in [root, *root.rglob("*"), self.agent_dir, self.agent, Path(self.pts)]:
            os.lchown(path, uid, uid)

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ["PATH"], "HOME": str(self.root),
                "XDG_CONFIG_HOME": str(self.root / ".config"),
                "XDG_DATA_HOME": str(self.root / ".local/share"),
                "XDG_STATE_HOME": str(self.root / ".local/state"),
                "PYTHONPATH": str(ROOT), "SSH_AUTH_SOCK": str(self.agent),
                "OPENAI_API_KEY": API_KEY}

    def answer(self) -> str:
        code = (HOSTILE.replace("__PATHS__", repr({k: str(v) for k, v in self.paths.items()}))
                .replace("__AGENT__", repr(str(self.agent)))
                .replace("__BASHRC__", repr(str(self.bashrc)))
                .replace("__API__", repr(API_KEY)).replace("__PTS__", repr(self.pts)))
        return python_answer(code)

    def close(self) -> None:
        self.server.close()
        os.close(self.master)
        shutil.rmtree(self.agent_dir, ignore_errors=True)


@pytest.fixture
def home() -> Iterator[Path]:
    """A fresh folder every user may enter (the worktree must be enterable too)."""
    need("bwrap", "setpriv")
    root = Path(tempfile.mkdtemp(prefix="vb-home-"))
    os.chmod(root, 0o755)
    closed = [d for d in [ROOT, *ROOT.parents] if not d.stat().st_mode & 0o001]
    assert not closed, f"other users cannot enter {closed[0]}, so nobody cannot run this clone"
    yield root
    shutil.rmtree(root, ignore_errors=True)


def run_as(user: int, home: Home, sandbox: str = "auto") -> subprocess.CompletedProcess[str]:
    llm = replay(home.root, home.answer())
    config = home.root / "vb.toml"
    config.write_text(f'[targets.local]\nsandbox = "{sandbox}"\n')
    for path in (config, home.root / "answers.md"):
        os.chown(path, user, user)
    switch = [] if user == 0 else ["setpriv", f"--reuid={user}", f"--regid={user}",
                                   "--clear-groups"]
    return subprocess.run(
        [*switch, *verifybot_cmd(), "run", "hostile", "--llm", llm, "--target", "local",
         "--yes", "--max-retries", "0", "--workspace", str(home.root / "ws"),
         "--config", str(config)], cwd=home.root, env=home.env(), capture_output=True,
        text=True, timeout=120)


@pytest.mark.parametrize("user", [0, NOBODY], ids=["root", "user"])
def test_a_hostile_program_finds_no_secret_and_no_power(home: Path, user: int) -> None:
    assert os.getuid() == 0, "the tests run as root (scripts/test, CI): root switches user"
    planted = Home(home, user)
    try:
        proc = run_as(user, planted)
    finally:
        planted.close()
    out = proc.stdout
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in planted.paths:
        assert f"DENIED {name} ENOENT" in out and f"NO DIR {name}" in out, out
    assert "PLANTED" not in out + proc.stderr
    assert "ENV SSH_AUTH_SOCK unset" in out and "ENV API KEY False" in out
    assert "AGENT UNREACHABLE ENOENT" in out
    # what it wrote went to its private /tmp (the temp HOME lies under /tmp), gone with it
    assert planted.bashrc.read_text() == "# the user's own\n"
    assert "CAPEFF 0000000000000000" in out
    assert "TTY REFUSED" in out and "TIOCSTI TYPED 0" in out
    assert "REMOUNT EPERM" in out and "HOST PTS 0" in out
    assert "PTS REFUSED ENOENT" in out and "PTS OPENED" not in out


@pytest.mark.parametrize("user", [0, NOBODY], ids=["root", "user"])
def test_without_the_sandbox_the_same_answer_reads_the_key(home: Path, user: int) -> None:
    """What the test above would see if the sandbox let things through."""
    planted = Home(home, user)
    try:
        proc = run_as(user, planted, sandbox="off")
    finally:
        planted.close()
    assert "GOT ssh b'PLANTED-SSH-SECRET" in proc.stdout, proc.stdout + proc.stderr
    assert "AGENT REACHED" in proc.stdout
    assert "echo MARKER" in planted.bashrc.read_text()
    assert "PTS OPENED" in proc.stdout
    if user == 0:  # root's powers, which the sandbox drops
        assert "PTS TYPED" in proc.stdout and "REMOUNT done" in proc.stdout
