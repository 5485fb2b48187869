"""VerifyBot's board helper: flash a real board and read its serial port, in one process.

Run where the board is plugged in: on this machine, or copied to the Pi and run
over the SSH connection VerifyBot already holds (``via``). It depends on nothing
of VerifyBot (standard library, and pyserial where installed), reads one JSON
spec, and exits with a status VerifyBot maps to its verdict:

  0 the board printed PASSED   1 it printed FAILED    124 no end line in time
  3 the board is locked by another run   4 flashing failed   5 the serial port failed

The serial bytes go to stdout as they come; the helper's own lines (and the
flash tool's output) go to stderr prefixed "vb-board:". The port is opened
before the flash tool resets the board, so the first byte is not lost; tools
that need the port themselves (avrdude, esptool) get it first, and the port is
opened right after. One lock file per port keeps two runs off one board.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import re
import select
import shlex
import subprocess
import sys
import time
from typing import Any

END = re.compile(rb"^[^\n]{0,40}?\b(PASSED|FAILED)[^\w\n]*$")  # uart.END_LINE
LOCK_WAIT = 30.0
FLASH_TIMEOUT = 120.0


def say(text: str) -> None:
    sys.stderr.write(f"vb-board: {text}\n")
    sys.stderr.flush()


def lock(port: str, wait: float = LOCK_WAIT) -> int:
    path = f"/tmp/verifybot-board-{hashlib.sha256(port.encode()).hexdigest()[:12]}.lock"
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)  # flock needs no write access
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            if time.monotonic() > deadline:
                say(f"the board on {port} is in use by another run (lock {path})")
                sys.exit(3)
            time.sleep(0.2)


class Port:
    """The serial port: pyserial where installed, else the termios module."""

    def __init__(self, path: str, baud: int) -> None:
        try:
            import serial  # type: ignore[import-untyped]
        except ImportError:
            serial = None
        if serial is not None:
            self.dev = serial.Serial(path, baud, timeout=0)
            self.dev.reset_input_buffer()
            self.fd = self.dev.fileno()
            say(f"serial {path} opened at {baud} baud with pyserial {serial.__version__}")
        else:
            self.dev = None
            self.fd = self._termios(path, baud)
            say(f"serial {path} opened at {baud} baud with termios (pyserial is not installed)")

    @staticmethod
    def _termios(path: str, baud: int) -> int:
        import termios
        import tty
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(fd)
        attrs = termios.tcgetattr(fd)
        speed = getattr(termios, f"B{baud}", termios.B115200)
        attrs[4] = attrs[5] = speed
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        termios.tcflush(fd, termios.TCIFLUSH)
        return fd

    def read(self, wait: float) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return b""
        if self.dev is not None:
            return bytes(self.dev.read(self.dev.in_waiting or 1))
        try:
            return os.read(self.fd, 4096)
        except BlockingIOError:
            return b""

    def close(self) -> None:
        if self.dev is not None:
            self.dev.close()
        else:
            os.close(self.fd)


def write_firmware(spec: dict[str, Any]) -> None:
    for name, data in spec.get("files", {}).items():
        with open(name, "wb") as f:
            f.write(base64.b64decode(data))


def flash(spec: dict[str, Any]) -> None:
    values = {k: os.path.abspath(v) for k, v in spec["names"].items()}
    values.update(serial=spec["serial"], baud=str(spec["baud"]))
    argv = [part.format(**values) for part in shlex.split(spec["flash"])]
    say("flashing: " + " ".join(shlex.quote(a) for a in argv))
    try:
        done = subprocess.run(argv, stdout=sys.stderr, stderr=sys.stderr,
                              stdin=subprocess.DEVNULL, timeout=FLASH_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        say(f"flashing failed: {e}")
        sys.exit(4)
    if done.returncode != 0:
        say(f"flashing failed: {argv[0]} exited with status {done.returncode}")
        sys.exit(4)


def read_until_end(port: Port, timeout: float) -> int:
    out = sys.stdout.buffer
    deadline = time.monotonic() + timeout
    line = b""
    failed = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            say(f"no end line (PASSED or FAILED) on the serial port within {timeout:g} s")
            return 124
        data = port.read(min(left, 0.2))
        if not data:
            continue
        out.write(data)
        out.flush()
        line += data
        *lines, line = line.replace(b"\r", b"").split(b"\n")
        for one in lines:
            failed = failed or re.search(rb"\bFAILED\b", one) is not None
            m = END.match(one.strip())
            if m:
                return 0 if m.group(1) == b"PASSED" and not failed else 1


def main() -> None:
    with open(sys.argv[1] if len(sys.argv) > 1 else "vb_board.json") as f:
        spec = json.load(f)
    write_firmware(spec)
    lock(spec["serial"], spec.get("lock_wait", LOCK_WAIT))
    port: Port | None = None
    try:
        if spec.get("port_first", True):
            port = Port(spec["serial"], spec["baud"])
            flash(spec)
        else:
            flash(spec)
            port = Port(spec["serial"], spec["baud"])
    except OSError as e:
        say(f"cannot open the serial port {spec['serial']}: {e}")
        sys.exit(5)
    try:
        code = read_until_end(port, spec["timeout"])
    except OSError as e:  # the adapter unplugged, the board reset its USB...
        say(f"the serial port {spec['serial']} failed: {e}")
        code = 5
    finally:
        port.close()
    sys.exit(code)


if __name__ == "__main__":
    main()
