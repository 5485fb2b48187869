"""``verifybot doctor`` for an mcu target: toolchain, emulator, flash tool, serial port.

Each finding is a (level, text) pair; a missing piece names the apt or pip line
that installs it, since a cross toolchain is rarely on a machine by chance.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib.util import find_spec

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.ports import ProgramFile, RunRequest, Target
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.mcu.boards import Board, load_board
from verifybot_tui.targets.mcu.real.flash import flash_command, tool_of
from verifybot_tui.targets.mcu.sources import arduino

APT = {  # program -> the Debian package holding it
    "arm-none-eabi-gcc": "gcc-arm-none-eabi", "arm-none-eabi-addr2line": "binutils-arm-none-eabi",
    "arm-none-eabi-objcopy": "binutils-arm-none-eabi", "avr-gcc": "gcc-avr",
    "avr-addr2line": "binutils-avr", "avr-objcopy": "binutils-avr", "make": "make",
    "qemu-system-arm": "qemu-system-arm", "qemu-system-avr": "qemu-system-misc",
    "openocd": "openocd", "st-flash": "stlink-tools", "picotool": "picotool",
    "avrdude": "avrdude",
}
PIP = {"pyocd": "pyocd", "esptool.py": "esptool"}

Finding = tuple[str, str]


def _install_line(missing: list[str]) -> str:
    apt = sorted({APT[m] for m in missing if m in APT})
    pip = sorted({PIP[m] for m in missing if m in PIP})
    parts = [f"sudo apt install {' '.join(apt)}"] if apt else []
    parts += [f"pip install {' '.join(pip)}"] if pip else []
    return " and ".join(parts) or "install them"


def _newlib(board: Board, library: str = "libc_nano.a") -> str:
    """Where a newlib-nano library is, as the compiler sees it ("" when it is not installed)."""
    try:
        out = subprocess.run([board.compiler, *board.cpu_flags, "--specs=nano.specs",
                              f"-print-file-name={library}"], capture_output=True, text=True,
                             timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out if os.path.isabs(out) else ""


def toolchain(board: Board) -> list[Finding]:
    tools = [board.compiler, board.tool("addr2line"), board.tool("objcopy"), "make"]
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        return [("FAIL", f"missing {', '.join(missing)}: {_install_line(missing)}")]
    found = [("OK", f"{board.compiler} for the {board.mcu}; addr2line, objcopy and make")]
    if board.arch == "cortex-m" and not _newlib(board):
        found.append(("FAIL", "newlib-nano is not installed for this compiler: "
                              "sudo apt install libnewlib-arm-none-eabi"))
    elif board.arch == "cortex-m" and not _newlib(board, "libstdc++_nano.a"):
        found.append(("WARN", "C++ firmware will not link (cannot find -lstdc++_nano): "
                              "sudo apt install libstdc++-arm-none-eabi-newlib"))
    if board.arch == "avr" and not os.path.isdir("/usr/lib/avr/include"):
        found.append(("WARN", "avr-libc's headers were not found in /usr/lib/avr: "
                              "sudo apt install avr-libc"))
    return found + arduino_core(board)


def arduino_core(board: Board) -> list[Finding]:
    """The Arduino AVR core sketches build against (boards that name an Arduino board)."""
    if not board.arduino:
        return []
    if not arduino.installed():
        return [("WARN", f"Arduino sketches (.ino) will not build: the Arduino AVR core is "
                         f"not installed: sudo apt install {arduino.PACKAGE}")]
    if arduino.settings(board) is None:
        return [("WARN", f"the Arduino AVR core has no board {board.arduino!r} "
                         f"({arduino.CORE / 'boards.txt'}): sketches will not build")]
    return [("OK", f"Arduino sketches: {arduino.PACKAGE} {arduino.core_version()} "
                   f"({', '.join(arduino.libraries())})")]


def emulator(board: Board) -> list[Finding]:
    if not board.qemu:
        return [("FAIL", f"no emulator models {board.name}: use backend = \"probe\"")]
    if shutil.which(board.qemu[0]) is None:
        return [("FAIL", f"{board.qemu[0]} is missing: {_install_line([board.qemu[0]])}")]
    return [("OK", f"emulator {' '.join(board.qemu)}")]


def real_board(cfg: TargetConfig, board: Board) -> list[Finding]:
    """The flash tool, the serial port and pyserial, here (``via``: checked on the Pi
    by the ssh target's own line and at the first run)."""
    try:
        flash_command(board, cfg.flash)
    except ConfigError as e:
        return [("FAIL", str(e))]
    if cfg.via:
        return []  # checked on the Pi: remote_checks
    found: list[Finding] = []
    tool = tool_of(cfg.flash)
    if shutil.which(tool) is None:
        found.append(("FAIL", f"flash tool {tool} is missing: {_install_line([tool])}"))
    else:
        found.append(("OK", f"flash tool {tool}"))
    if find_spec("serial") is None:
        found.append(("FAIL", "pyserial is not installed: pip install pyserial"))
    if not os.path.exists(cfg.serial):
        found.append(("FAIL", f"serial port {cfg.serial} does not exist: is the board "
                              "plugged in? (ls /dev/serial/by-id/)"))
    elif not os.access(cfg.serial, os.R_OK | os.W_OK):
        found.append(("FAIL", f"serial port {cfg.serial} is not readable and writable: "
                              "sudo usermod -aG dialout $USER, then log in again"))
    else:
        found.append(("OK", f"serial port {cfg.serial} at {cfg.baud} baud"))
    return found


def check_target(cfg: TargetConfig, base: str | None = None) -> list[Finding]:
    """Every finding for one [targets.NAME] of kind mcu."""
    from pathlib import Path

    try:
        board = load_board(cfg.board, Path(base) if base else None)
    except ConfigError as e:
        return [("FAIL", str(e))]
    found = [("OK", f"board {board.name}: {board.description}")]
    found += toolchain(board)
    if cfg.backend == "labgrid":  # the place's board: doctor asks the coordinator (farm)
        try:
            flash_command(board, cfg.flash)
        except ConfigError as e:
            found.append(("FAIL", str(e)))
        return found
    found += emulator(board) if cfg.backend == "qemu" else real_board(cfg, board)
    return found


_REMOTE_SH = """\
tool={tool}; port={port}
if command -v "$tool" >/dev/null 2>&1; then echo "tool-ok"; else echo "tool-missing"; fi
if [ ! -e "$port" ]; then echo "port-missing"
elif [ -r "$port" ] && [ -w "$port" ]; then echo "port-ok"; else echo "port-denied"; fi
if {python} -c 'import serial' >/dev/null 2>&1; then echo "pyserial-ok"
else echo "pyserial-missing"; fi
"""


async def remote_checks(via: Target, cfg: TargetConfig) -> list[Finding]:
    """The flash tool, the serial port and pyserial on the Pi the board hangs off."""
    import shlex

    tool = tool_of(cfg.flash)
    script = _REMOTE_SH.format(tool=shlex.quote(tool), port=shlex.quote(cfg.serial),
                               python="python3")
    request = RunRequest(run_id="vb_doctor_board", files=[ProgramFile(
        "check.sh", "check.sh", script, "bash")], entry="check.sh", language="bash",
        timeout=30.0)
    result = await via.run(request, lambda stream, text: None)
    seen = set(result.stdout.split())
    on = f" on {cfg.via}"
    found: list[Finding] = []
    found.append(("OK", f"flash tool {tool}{on}") if "tool-ok" in seen else
                 ("FAIL", f"flash tool {tool} is missing{on}: {_install_line([tool])} there"))
    if "port-ok" in seen:
        found.append(("OK", f"serial port {cfg.serial}{on} at {cfg.baud} baud"))
    elif "port-denied" in seen:
        found.append(("FAIL", f"serial port {cfg.serial}{on} is not readable and writable: "
                              "sudo usermod -aG dialout $USER there, then log in again"))
    else:
        found.append(("FAIL", f"serial port {cfg.serial} does not exist{on}: is the board "
                              "plugged in? (ls /dev/serial/by-id/ there)"))
    if "pyserial-missing" in seen:
        found.append(("WARN", f"pyserial is not installed{on}: the first run installs it into "
                              "the workspace venv there (or: sudo apt install python3-serial)"))
    return found
