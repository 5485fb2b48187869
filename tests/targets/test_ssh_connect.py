"""Connecting: host keys (first use, changed), passwords and keys, .env, unreachable hosts."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest
from ssh_helpers import Answers, Recorder, request

from verifybot_tui.core.base.errors import EXIT_TARGET, TargetError
from verifybot_tui.targets.ssh import names_pi
from verifybot_tui.targets.ssh.target import SSHTarget
from verifybot_tui.targets.ssh_connect import read_dotenv

pytestmark = pytest.mark.ssh


@pytest.fixture
def clean_home(tmp_path, monkeypatch):
    """No agent, no ~/.ssh keys or config of the developer's: only what the test gives."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return home


def host_fingerprint(sshd) -> str:
    out = subprocess.run(["ssh-keygen", "-lf", str(sshd.dir / "host_ed25519.pub")],
                         capture_output=True, text=True, check=True).stdout
    return out.split()[1]


async def whoami(target: SSHTarget) -> str:
    result = await target.run(request("who_1", {"who.sh": "id -un\n"}, language="bash"),
                              Recorder())
    assert result.exit_code == 0, result
    return result.stdout.strip()


async def connect_expecting_error(target: SSHTarget) -> TargetError:
    with pytest.raises(TargetError) as info:
        await target.connect()
    await target.close()
    assert info.value.exit_code == EXIT_TARGET
    assert target.state in ("error", "disconnected")
    return info.value


# -- host keys ------------------------------------------------------------------------


async def test_unknown_host_key_refused_when_the_user_says_no(sshd, remote_dir, tmp_path):
    kh = tmp_path / "fresh" / "known_hosts"
    answers = Answers(confirm=False)
    t = SSHTarget(sshd.config(remote_dir[0], known_hosts=str(kh)), tmp_path / "ws", answers)
    err = await connect_expecting_error(t)
    assert len(answers.questions) == 1
    q = answers.questions[0]
    assert "authenticity of host" in q and f"[127.0.0.1]:{sshd.port}" in q
    assert host_fingerprint(sshd) in q
    assert "not trusted" in err.message and host_fingerprint(sshd) in err.message
    assert not kh.exists() or sshd.host_key_line.split()[1] not in kh.read_text()


async def test_unknown_host_key_saved_when_trusted_then_not_asked_again(sshd, remote_dir,
                                                                        tmp_path):
    kh = tmp_path / "fresh" / "known_hosts"
    cfg = sshd.config(remote_dir[0], known_hosts=str(kh))
    answers = Answers(confirm=True)
    t = SSHTarget(cfg, tmp_path / "ws", answers)
    await t.connect()
    await t.close()
    assert len(answers.questions) == 1
    assert kh.read_text() == f"[127.0.0.1]:{sshd.port} {sshd.host_key_line}\n"
    assert stat.S_IMODE(kh.stat().st_mode) == 0o600
    assert stat.S_IMODE(kh.parent.stat().st_mode) == 0o700
    again = SSHTarget(cfg, tmp_path / "ws", Answers())  # asking would fail the test
    try:
        assert await whoami(again) == sshd.user
    finally:
        await again.close()


async def test_trust_new_host_flag_saves_without_asking(sshd, remote_dir, tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text("# mine\n[otherhost]:22 ssh-ed25519 " + sshd.host_key_line.split()[1])
    t = SSHTarget(sshd.config(remote_dir[0], known_hosts=str(kh)), tmp_path / "ws",
                  trust_new_host=True)
    await t.connect()
    await t.close()
    lines = kh.read_text().splitlines()
    assert lines[0] == "# mine" and lines[1].startswith("[otherhost]:22 ")
    assert lines[2] == f"[127.0.0.1]:{sshd.port} {sshd.host_key_line}"


async def test_unknown_host_key_with_nobody_to_ask(sshd, remote_dir, tmp_path):
    t = SSHTarget(sshd.config(remote_dir[0], known_hosts=str(tmp_path / "kh")), tmp_path / "ws")
    err = await connect_expecting_error(t)
    assert "--trust-new-host" in err.message and host_fingerprint(sshd) in err.message


async def test_changed_host_key_is_refused(sshd, remote_dir, tmp_path):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")],
                   check=True)
    other = " ".join((tmp_path / "other.pub").read_text().split()[:2])
    kh = tmp_path / "known_hosts"
    kh.write_text(f"[127.0.0.1]:{sshd.port} {other}\n")
    t = SSHTarget(sshd.config(remote_dir[0], known_hosts=str(kh)), tmp_path / "ws",
                  Answers(), trust_new_host=True)  # even --trust-new-host must not override
    err = await connect_expecting_error(t)
    assert "HOST KEY CHANGED" in err.message
    assert "reinstalled" in err.message and "ssh-keygen -R" in err.message
    assert host_fingerprint(sshd) in err.message
    assert kh.read_text() == f"[127.0.0.1]:{sshd.port} {other}\n"


# -- authentication -------------------------------------------------------------------


async def test_wrong_key_is_a_clear_target_error(sshd, remote_dir, tmp_path, clean_home):
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "stray")],
                   check=True)
    t = SSHTarget(sshd.config(remote_dir[0], key_file=str(tmp_path / "stray")), tmp_path / "ws")
    err = await connect_expecting_error(t)
    assert "authentication failed" in err.message
    assert f"key file {tmp_path / 'stray'}" in err.message
    assert f"vbtest@127.0.0.1:{sshd.port}" in err.message
    assert "password" not in err.message.split("(tried")[1].split(")")[0]


async def test_missing_key_file(sshd, remote_dir, tmp_path):
    t = SSHTarget(sshd.config(remote_dir[0], key_file=str(tmp_path / "nope")), tmp_path / "ws")
    err = await connect_expecting_error(t)
    assert "key_file" in err.message and "nope" in err.message


async def test_wrong_password_is_a_clear_target_error(sshd, remote_dir, tmp_path, clean_home,
                                                      monkeypatch):
    monkeypatch.setenv("VB_TEST_PW", "not-the-password")
    t = SSHTarget(sshd.config(remote_dir[0], key_file="", password_env="VB_TEST_PW"),
                  tmp_path / "ws")
    err = await connect_expecting_error(t)
    assert "authentication failed" in err.message and "VB_TEST_PW" in err.message
    assert "not-the-password" not in str(err)


async def test_password_from_password_env_and_never_written(sshd, remote_dir, tmp_path,
                                                            clean_home, monkeypatch):
    monkeypatch.setenv("VB_TEST_PW", sshd.password)
    ws = tmp_path / "ws"
    t = SSHTarget(sshd.config(remote_dir[0], key_file="", password_env="VB_TEST_PW"), ws)
    try:
        assert await whoami(t) == sshd.user
        md = await t.probe()
    finally:
        await t.close()
    assert sshd.password not in md and sshd.password not in repr(t.__dict__)
    for path in [*ws.rglob("*"), *Path(remote_dir[1]).rglob("*")]:
        if path.is_file():
            assert sshd.password.encode() not in path.read_bytes(), path


async def test_password_asked_once_and_kept_for_reconnects(sshd, remote_dir, tmp_path,
                                                           clean_home):
    answers = Answers(secret=sshd.password)
    t = SSHTarget(sshd.config(remote_dir[0], key_file=""), tmp_path / "ws", answers)
    try:
        await t.connect()
        await t.close()
        assert await whoami(t) == sshd.user  # reconnects without asking
    finally:
        await t.close()
    assert answers.questions == [f"Password for vbtest@127.0.0.1:{sshd.port}:"]


async def test_dotenv_of_the_older_scripts(sshd, remote_dir, tmp_path, clean_home):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text(f"# old script settings\nPI_HOST=127.0.0.1\nexport PI_USER='vbtest'\n"
                             f'PI_PASSWORD="{sshd.password}"\n')
    t = SSHTarget(sshd.config(remote_dir[0], host="", user="", key_file=""), ws)
    try:
        assert await whoami(t) == sshd.user
    finally:
        await t.close()


async def test_unreachable_host(sshd, remote_dir, tmp_path):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t = SSHTarget(sshd.config(remote_dir[0], port=port), tmp_path / "ws")
    err = await connect_expecting_error(t)
    assert f"Cannot reach vbtest@127.0.0.1:{port}" in err.message
    assert t.last_error == err.message


async def test_the_time_the_user_spends_typing_a_password_is_not_the_networks(monkeypatch):
    """A connect deadline of 1 s, a password dialog answered after 1.5 s: still in time.

    The dialog's time is left out of the deadline (asyncssh's own login timeout
    counted it, so a slow typist or a busy machine failed); the rest still times out.
    """
    import asyncio

    from verifybot_tui.targets.ssh_connect import _Client, _within

    class SlowTypist:
        async def secret(self, question: str) -> str:
            await asyncio.sleep(1.5)
            return "vb-slow-typist-pw-zz"

    client = _Client(None, SlowTypist(), "pi", lambda e: None)  # type: ignore[arg-type]

    async def login_that_asks() -> str:
        return str(await client._next_password())

    logged_in = await _within(1.0, asyncio.ensure_future(login_that_asks()), client)
    assert logged_in == "vb-slow-typist-pw-zz"
    assert client.time_asking() >= 1.5
    stuck = asyncio.ensure_future(asyncio.sleep(60))
    with pytest.raises(TimeoutError):
        await _within(0.2, stuck, _Client(None, None, "pi", lambda e: None))
    assert stuck.cancelled()


def test_only_a_link_that_was_up_is_reported_lost() -> None:
    """The first attempt at an unknown host ends (its key is not trusted yet) and says so
    late on a busy machine, after the retry connected: that must not mark it lost."""
    from verifybot_tui.targets.ssh_connect import _Client

    lost: list[Exception | None] = []
    refused = _Client(None, None, "pi", lost.append)
    refused.connection_lost(OSError("Host key is not trusted"))
    assert lost == []
    up = _Client(None, None, "pi", lost.append)
    up.auth_completed()
    up.connection_lost(error := OSError("reset"))
    assert lost == [error]


# -- plain helpers --------------------------------------------------------------------


def test_read_dotenv(tmp_path):
    env = tmp_path / ".env"
    env.write_text("A=1\n# c\n\nexport B = 'two words'\nC=\"x=y\"\nD=plain # note\nbad line\n")
    assert read_dotenv(env) == {"A": "1", "B": "two words", "C": "x=y", "D": "plain"}
    assert read_dotenv(tmp_path / "missing") == {}


@pytest.mark.parametrize("prompt", [
    "blink an LED on my Raspberry Pi", "read a BME280 over I2C", "toggle GPIO17",
    "use gpiozero to read a button", "import RPi.GPIO as GPIO", "talk to the sensor over UART",
    "spi loopback test", "raspi camera", "read smbus2 register", "run it on the pi",
    "wire the sensor pins", "Pi 4 temperature",
])
def test_names_pi(prompt):
    assert names_pi(prompt)


@pytest.mark.parametrize("prompt", [
    "compute pi to 100 digits", "write a spider", "sort a list", "a UARTS-like protocol",
    "epic game", "explain the spirit of python", "print pi 3.14159 to 5 places",
    "a pico-8 game",
])
def test_names_pi_not(prompt):
    assert not names_pi(prompt)
