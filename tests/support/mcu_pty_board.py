"""A stand-in for a real board on a serial port: QEMU behind a pseudo-terminal.

``serve DIR ARGV_JSON`` opens a pty, links its device to DIR/tty (the board's serial
port, which pyserial opens like any USB serial adapter), and waits for flash
requests. ``flash DIR ELF`` (the flash command template's program) copies the ELF
into DIR, asks the server to "flash" it and waits until it did: the server stops
the emulator it ran (the board's old firmware), starts a new one with this ELF
(a reset), and copies the emulator's serial output into the pty. The server runs
as its own process so the flash command, run as another user over SSH, can reach it.
``blank DIR`` puts the board back as it was served (no emulator, no firmware files,
nothing unread on its serial port): a farm kept for several tests blanks its boards
between them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import termios
import threading
import time
import tty
from pathlib import Path


def relay(proc: subprocess.Popen[bytes], master: int) -> None:
    assert proc.stdout is not None
    while True:
        data = proc.stdout.read1(4096)
        if not data:
            return
        os.write(master, data)


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait()


def serve(folder: Path, argv: list[str]) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    name = os.ttyname(slave)
    os.chmod(name, 0o666)  # the SSH test user opens it too
    (folder / "tty").unlink(missing_ok=True)
    (folder / "tty").symlink_to(name)
    proc: subprocess.Popen[bytes] | None = None
    relaying: threading.Thread | None = None
    signal.signal(signal.SIGTERM, lambda *_: (stop(proc), sys.exit(0)))
    (folder / "ready").write_text(str(os.getpid()))
    while True:
        request = folder / "flash.request"
        if (folder / "blank.request").exists():
            stop(proc)
            if relaying is not None:
                relaying.join()  # its last bytes written: nothing comes after the flush
            termios.tcflush(slave, termios.TCIOFLUSH)
            for left in [*folder.glob("fw-*.elf"), folder / "qemu.pid", folder / "flash.done"]:
                left.unlink(missing_ok=True)
            (folder / "blank.request").unlink()
            (folder / "blank.done").write_text("")
            continue
        if not request.exists():
            time.sleep(0.02)
            continue
        elf = request.read_text().strip()
        request.unlink()
        stop(proc)
        proc = subprocess.Popen([*argv, elf], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        (folder / "qemu.pid").write_text(str(proc.pid))
        relaying = threading.Thread(target=relay, args=(proc, master), daemon=True)
        relaying.start()
        (folder / "flash.done").write_text(elf)


def flash(folder: Path, elf: str) -> int:
    target = folder / f"fw-{os.getpid()}.elf"
    shutil.copyfile(elf, target)
    os.chmod(target, 0o644)
    (folder / "flash.done").unlink(missing_ok=True)
    # Whole or not at all: the server polls for the file, and one seen between its
    # creation and its write read an empty path (a loaded run's board then said nothing).
    pending = folder / f"flash.request.{os.getpid()}"
    pending.write_text(str(target))
    pending.replace(folder / "flash.request")
    deadline = time.monotonic() + 30  # the server polls every 20 ms; a loaded machine is slow
    while time.monotonic() < deadline:
        if (folder / "flash.done").exists():
            print(f"flashed {elf}", file=sys.stderr)
            return 0
        time.sleep(0.02)
    print("the board did not take the firmware", file=sys.stderr)
    return 1


def blank(folder: Path, within: float = 30) -> None:
    """Ask the server to blank the board and wait until it did."""
    (folder / "blank.done").unlink(missing_ok=True)
    (folder / "blank.request").write_text("")
    deadline = time.monotonic() + within
    while not (folder / "blank.done").exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"the board in {folder} was not blanked within {within:g} s")
        time.sleep(0.02)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(Path(sys.argv[2]), json.loads(sys.argv[3]))
    else:
        sys.exit(flash(Path(sys.argv[2]), sys.argv[3]))
