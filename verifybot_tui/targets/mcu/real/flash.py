"""Flashing a real board: the flash tool presets, a user's own command template, the images.

The same for a board on this machine, on the Pi (probe.py) and on a farm's place
(farm/run.py): the command template for the ``flash`` setting, the firmware in
the forms it names (ELF, Intel hex, raw binary), and the tool doctor looks for.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.targets.mcu.boards import Board
from verifybot_tui.targets.sandbox.bubblewrap import sandboxed_tool

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

