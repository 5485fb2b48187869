"""Real boards (``backend = "probe"``): flash with a tool, read the serial port, here or on the Pi.

This machine always cross-compiles. The flashing and the reading happen where the
board is plugged in, in one small helper (board_helper.py, standard library and
pyserial): run here with VerifyBot's own Python, or copied with the firmware to
the Pi and run over the SSH target's connection (``via``), whose process-tree
handling stops it on a timeout or Ctrl+C like any program there.
"""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.ports import OutputCallback, ProgramFile, RunRequest
from verifybot_tui.targets.mcu import diagnose
from verifybot_tui.targets.mcu.boards import Board
from verifybot_tui.targets.mcu.qemu import FirmwareRun
from verifybot_tui.targets.mcu.uart import UartReader
from verifybot_tui.targets.sandbox.bubblewrap import sandboxed_tool

if TYPE_CHECKING:
    from verifybot_tui.targets.mcu.target import McuTarget

HELPER = Path(__file__).parent / "board_helper.py"
FLASH_ALLOWANCE = 150.0  # seconds for the lock, the flash tool and the reset, past the timeout
_OPENOCD = "openocd -f interface/{iface} -f {target} -c \"program {{elf}} verify reset exit\""

# name -> (command template, the flash tool needs the serial port itself)
PRESETS: dict[str, tuple[str, bool]] = {
    "openocd-stlink": (_OPENOCD.replace("{iface}", "stlink.cfg"), False),
    "openocd-cmsis-dap": (_OPENOCD.replace("{iface}", "cmsis-dap.cfg"), False),
    "openocd-pi-swd": (_OPENOCD.replace("{iface}", "raspberrypi-native.cfg -c \"transport "
                                        "select swd\""), False),
    "pyocd": ("pyocd load -t {target} {{elf}}", False),
    "st-flash": ("st-flash --reset write {{bin}} {flash_origin}", False),
    "picotool": ("picotool load -x -f {{elf}}", False),
    "avrdude-arduino": ("avrdude -p {avr_part} -c arduino -P {{serial}} -b 115200 -D "
                        "-U flash:w:{{hex}}:i", True),
    "esptool": ("esptool.py --port {{serial}} write_flash 0x0 {{bin}}", True),
}
TOOLS = {"openocd-stlink": "openocd", "openocd-cmsis-dap": "openocd", "openocd-pi-swd": "openocd",
         "pyocd": "pyocd", "st-flash": "st-flash", "picotool": "picotool",
         "avrdude-arduino": "avrdude", "esptool": "esptool.py"}


def flash_command(board: Board, flash: str) -> tuple[str, bool]:
    """The command template for a preset name or the user's own template, and whether
    the tool needs the serial port (then the port is opened after it)."""
    if flash in PRESETS:
        template, needs_port = PRESETS[flash]
        if "{target}" in template and flash.startswith("openocd") and not board.openocd_target:
            raise ConfigError(f"flash preset {flash}: board {board.name} names no "
                              "openocd_target; give a command template instead")
        return template.format(target=board.openocd_target or board.mcu.lower(),
                               flash_origin=f"{board.flash[0]:#x}",
                               avr_part=board.mcu.lower().replace("atmega", "m")), needs_port
    if "{" not in flash:
        raise ConfigError(f"flash = {flash!r}: not a preset ({', '.join(PRESETS)}) nor a "
                          "command template with {elf}, {hex} or {bin}")
    return flash, "{serial}" in flash


def tool_of(flash: str) -> str:
    """The program a flash setting runs (for doctor)."""
    if flash in TOOLS:
        return TOOLS[flash]
    parts = shlex.split(flash) if flash else []
    return parts[0] if parts else ""


def images(board: Board, elf: Path, template: str) -> dict[str, Path]:
    """The firmware in the forms the template names: the ELF, Intel hex, raw binary."""
    names = {"elf": elf}
    for key, fmt in (("hex", "ihex"), ("bin", "binary")):
        if "{" + key + "}" in template:
            out = elf.with_suffix("." + key)
            argv = [board.tool("objcopy"), "-O", fmt, str(elf), str(out)]
            subprocess.run(sandboxed_tool(argv, elf.parent), check=True,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
            names[key] = out
    return names


def helper_spec(target: McuTarget, elf: Path, timeout: float, remote: bool) -> dict[str, object]:
    template, needs_port = flash_command(target.board, target.config.flash)
    names = images(target.board, elf, template)
    spec: dict[str, object] = {"flash": template, "serial": target.config.serial,
                               "baud": target.config.baud, "timeout": timeout,
                               "port_first": not needs_port}
    if remote:  # the files travel inside the spec; the helper writes them in its folder
        spec["files"] = {p.name: base64.b64encode(p.read_bytes()).decode() for p in
                         names.values()}
        spec["names"] = {k: p.name for k, p in names.items()}
    else:
        spec["names"] = {k: str(p) for k, p in names.items()}
    return spec


async def run_on_board(target: McuTarget, elf: Path, workdir: Path, request: RunRequest,
                       on_output: OutputCallback) -> FirmwareRun:
    """Flash, reset, read the serial port until the end line or the timeout."""
    uart = UartReader(on_output)

    def route(stream: str, text: str) -> None:
        if stream == "stdout":
            uart.feed(text)
        else:
            on_output("stderr", text)  # the helper's and the flash tool's words: shown, kept

    spec = helper_spec(target, elf, request.timeout, remote=target.via is not None)
    if target.via is None:
        (workdir / "vb_board.json").write_text(json.dumps(spec))
        result = await target.local.command(  # the user's flash tool and serial port
            [sys.executable, str(HELPER), "vb_board.json"], workdir, route,
            request.timeout + FLASH_ALLOWANCE, sandboxed=False)
    else:
        python = await _remote_python(target, on_output)
        files = [ProgramFile("vb_board_helper.py", "vb_board_helper.py", HELPER.read_text(),
                             "python"),
                 ProgramFile("vb_board.json", "vb_board.json", json.dumps(spec), "json")]
        remote = RunRequest(run_id=f"{request.run_id}_board", files=files,
                            entry="vb_board_helper.py", language="python",
                            timeout=request.timeout + FLASH_ALLOWANCE, python=python)
        result = await target.via.run(remote, route)
    return _outcome(target, elf, uart, result.exit_code, result.target_error, request.timeout,
                    result.command)


async def _remote_python(target: McuTarget, on_output: OutputCallback) -> str | None:
    """The Pi's python with pyserial: installed into the workspace venv there if missing."""
    assert target.via is not None
    if not await target.via.missing_modules(["serial"]):
        return None
    python = await target.via.install([], on_output)  # the workspace venv there
    if await target.via.missing_modules(["serial"], python):
        python = await target.via.install(["pyserial"], on_output)
    return python


_CODES = {3: "the board is in use by another run (its lock is held)",
          4: "flashing failed (the flash tool's output is above)",
          5: "the serial port could not be opened or failed while reading"}


def _outcome(target: McuTarget, elf: Path, uart: UartReader, code: int | None,
             target_error: str | None, timeout: float, command: str) -> FirmwareRun:
    run = FirmwareRun(None, uart.text, uart.bytes, "end-line" if uart.end else "board",
                      command=command)
    tool = target.board.tool("addr2line")
    if uart.fault_line is not None:
        run.diagnosis = diagnose.package_fault(uart.fault_line, tool, elf,
                                               target.board.irq_names)
    if uart.end:
        run.exit_code = 1 if uart.failed else 0
        if run.exit_code and not run.diagnosis:
            run.diagnosis = ("the firmware reported FAILED on the serial port: "
                             f"{uart.failed_line or 'FAILED'}")
    elif target_error:
        run.diagnosis, run.broken = f"the board could not be reached: {target_error}", True
    elif code in _CODES:  # the board's tools, not the firmware: not the LLM's to fix
        run.diagnosis, run.broken = _CODES[code], True
    elif code not in (None, 124):
        run.diagnosis = f"the board helper failed with status {code} (its output is above)"
        run.broken = True
    else:
        run.timed_out = True
        run.diagnosis = (f"no output on the serial port within {timeout:g} s" if not uart.bytes
                         else f"no end line (PASSED or FAILED) on the serial port within "
                         f"{timeout:g} s: an endless loop, or waiting on something that "
                         "never comes?")
    return run


def have_tool(flash: str) -> bool:
    tool = tool_of(flash)
    return bool(tool) and shutil.which(tool) is not None
