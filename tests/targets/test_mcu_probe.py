"""The real-board path without a board: QEMU behind a pseudo-terminal is the "board".

It is flashed by a command template (tests/mcu_pty_board.py hands the ELF to the
emulator and resets it) and read through pyserial, as a USB serial adapter would be:
once from this machine, once through the loopback sshd standing in for the Pi
(``via``), where the helper runs over the SSH target's connection.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import pytest
from mcu_fixtures import CRASH, SILENT, SUM, Recorder, request
from proc_helpers import all_gone
from project import need, verifybot_cmd
from sshd_fixtures import *  # noqa: F403

from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets import make_target
from verifybot_tui.targets.mcu.boards import load_board
from verifybot_tui.targets.mcu.real.flash import flash_command


@pytest.fixture(autouse=True)
def _toolchain() -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")

BOARD = Path(__file__).resolve().parent.parent / "support" / "mcu_pty_board.py"
QEMU = ["qemu-system-arm", "-M", "netduinoplus2", "-display", "none", "-monitor", "none",
        "-serial", "stdio", "-kernel"]


def lock_file(port: str) -> Path:
    """Where the board helper keeps the lock of a port (board_helper.lock)."""
    return Path(f"/tmp/verifybot-board-{hashlib.sha256(port.encode()).hexdigest()[:12]}.lock")


@pytest.fixture
def pty_board():
    """(folder, flash template for a python): the board server, stopped with its emulator."""
    folder = Path(tempfile.mkdtemp(prefix="vb-board-"))
    folder.chmod(0o777)  # the SSH test user flashes it too
    script = folder / "mcu_pty_board.py"
    shutil.copyfile(BOARD, script)
    script.chmod(0o644)
    server = subprocess.Popen([sys.executable, str(script), "serve", str(folder),
                               json.dumps(QEMU)])
    deadline = time.monotonic() + 10
    while not (folder / "ready").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    yield folder, lambda python: f"{python} {script} flash {folder} {{elf}}"
    pid = (folder / "qemu.pid").read_text() if (folder / "qemu.pid").exists() else ""
    server.terminate()
    server.wait(10)
    lock_file(str(folder / "tty")).unlink(missing_ok=True)
    if pid:
        assert all_gone([int(pid)], within=5)
    shutil.rmtree(folder, ignore_errors=True)


def board_config(folder: Path, template: str, **extra: object):
    return parse_config({"targets": {
        "pi": {"kind": "ssh", "host": "127.0.0.1"},
        "board": {"kind": "mcu", "board": "netduinoplus2", "backend": "probe",
                  "flash": template, "serial": str(folder / "tty"), **extra}}})


async def test_a_board_on_this_machine_is_flashed_and_read_through_pyserial(pty_board, tmp_path):
    folder, template = pty_board
    t = make_target(board_config(folder, template(sys.executable)), "board", tmp_path / "ws")
    try:
        rec = Recorder()
        r = await t.run(request("board_1", {"main.c": SUM}), rec)
        assert r.exit_code == 0, f"{r!r}\n{rec.text('stderr')}"
        assert r.stdout == "sum=55\nPASSED\n"
        said = rec.text("stderr")
        assert "opened at 115200 baud with pyserial 3.5" in said
        assert said.index("opened at") < said.index("vb-board: flashing:")  # port first
        assert judge(r, []).ok
        # a fault on a board is told by the board package's handler over the UART
        rec = Recorder()
        r = await t.run(request("board_2", {"main.c": CRASH}), rec)
        told = f"{r!r}\n{rec.text('stderr')}"
        assert r.exit_code == 1 and r.stdout.startswith("reading\n"), told
        assert "BusFault" in r.diagnosis and "read_sensor() (main.c:6)" in r.diagnosis, told
        rec = Recorder()
        r = await t.run(request("board_3", {"main.c": SILENT}, timeout=1.5), rec)
        told = f"{r!r}\n{rec.text('stderr')}"
        assert r.timed_out, told
        assert r.diagnosis == "no output on the serial port within 1.5 s", told
    finally:
        await t.close()


async def test_a_failing_flash_tool_is_told(pty_board, tmp_path):
    folder, _ = pty_board
    cfg = board_config(folder, f"{shutil.which('false')} {{elf}}")
    t = make_target(cfg, "board", tmp_path / "ws")
    rec = Recorder()
    r = await t.run(request("board_1", {"main.c": SUM}), rec)
    assert judge(r, []).status == "target_error"  # the board's tools: not the LLM's to fix
    assert r.target_error.startswith("flashing failed")
    assert "exited with status 1" in rec.text("stderr")


@pytest.mark.ssh
async def test_a_board_on_the_pi_is_flashed_and_read_over_ssh(pty_board, tmp_path, sshd,
                                                               ssh_config):
    folder, template = pty_board
    cfg = board_config(folder, template("python3"), via="pi")
    cfg.targets["pi"] = replace(ssh_config, name="pi")
    t = make_target(cfg, "board", tmp_path / "ws")
    try:
        await t.connect()
        # pyserial from a local wheel into the Pi's workspace venv (no network here)
        wheels = tmp_path / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d",
                        str(wheels), "pyserial==3.5"], check=True)
        wheel = next(wheels.glob("pyserial-*.whl"))
        shared = sshd.home / sshd.base / wheel.name
        shutil.copyfile(wheel, shared)
        os.chmod(shared, 0o644)
        assert t.via is not None
        await t.via.install([str(shared)], Recorder())
        context = await t.probe()
        assert "STM32F405RG" in context and "## Microcontroller boards" in context
        rec = Recorder()
        r = await t.run(request("pi_1", {"main.c": SUM}), rec)
        assert r.exit_code == 0, rec.text("stderr")
        assert r.stdout == "sum=55\nPASSED\n"
        assert "with pyserial 3.5" in rec.text("stderr")
        assert "arm-none-eabi-gcc" in r.command  # built here, flashed there
        assert "vb_board_helper.py" in r.command and ssh_config.remote_dir.lstrip("~/") in (
            r.command)
    finally:
        await t.close()


def test_one_run_at_a_time_per_board(tmp_path):
    """The helper's lock: a second run on a board in use waits, then gives up clearly."""
    import fcntl

    from verifybot_tui.targets.mcu.real.probe import HELPER

    port = str(tmp_path / "tty")
    held = lock_file(port)
    with held.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        spec = {"flash": "true", "serial": port, "baud": 115200, "timeout": 1, "names": {},
                "lock_wait": 0.3}
        (tmp_path / "spec.json").write_text(json.dumps(spec))
        done = subprocess.run([sys.executable, str(HELPER), "spec.json"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=30)
    held.unlink()
    assert done.returncode == 3
    assert f"the board on {port} is in use by another run" in done.stderr


def test_flash_presets_fill_in_the_board():
    board = load_board("netduinoplus2")
    cmd, needs_port = flash_command(board, "openocd-stlink")
    assert cmd == ('openocd -f interface/stlink.cfg -f target/stm32f4x.cfg '
                   '-c "program {elf} verify reset exit"') and not needs_port
    cmd, _ = flash_command(board, "st-flash")
    assert cmd == "st-flash --reset write {bin} 0x8000000"
    cmd, needs_port = flash_command(load_board("arduino-uno"), "avrdude-arduino")
    assert cmd.startswith("avrdude -p m328p -c arduino -P {serial}") and needs_port


@pytest.mark.ssh
def test_doctor_checks_the_flash_tool_and_serial_port_on_the_pi(pty_board, tmp_path, sshd,
                                                              remote_dir):
    folder, template = pty_board
    cfg = sshd.write_config_toml(tmp_path / "config.toml", remote_dir[0], tmp_path / "ws")
    text = cfg.read_text() + (
        '\n[targets.board]\nkind = "mcu"\nboard = "netduinoplus2"\nbackend = "probe"\n'
        f'flash = "{template("python3")}"\nserial = "{folder / "tty"}"\nvia = "pi"\n'
        '\n[targets.gone]\nkind = "mcu"\nboard = "netduinoplus2"\nbackend = "probe"\n'
        'flash = "openocd-stlink"\nserial = "/dev/serial/by-id/no-such-board"\nvia = "pi"\n')
    cfg.write_text(text)
    proc = subprocess.run([*verifybot_cmd(), "doctor", "--config", str(cfg)],
                          capture_output=True, text=True, timeout=180)
    out = proc.stdout
    assert "OK   target board: flash tool python3 on pi" in out, out + proc.stderr
    assert f"OK   target board: serial port {folder / 'tty'} on pi at 115200 baud" in out
    assert "FAIL target gone: flash tool openocd is missing on pi: sudo apt install openocd" in (
        out)
    assert "FAIL target gone: serial port /dev/serial/by-id/no-such-board does not exist on pi" in (
        out)
