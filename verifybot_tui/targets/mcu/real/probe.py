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
import sys
from pathlib import Path

from verifybot_tui.core.base.ports import OutputCallback, ProgramFile, RunRequest
from verifybot_tui.targets.mcu.qemu import FirmwareRun
from verifybot_tui.targets.mcu.real import BoardSide
from verifybot_tui.targets.mcu.real.flash import flash_command, images
from verifybot_tui.targets.mcu.real.verdict import verdict
from verifybot_tui.targets.mcu.uart import UartReader

HELPER = Path(__file__).parent / "board_helper.py"
FLASH_ALLOWANCE = 150.0  # seconds for the lock, the flash tool and the reset, past the timeout


def helper_spec(target: BoardSide, elf: Path, timeout: float, remote: bool) -> dict[str, object]:
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


async def run_on_board(target: BoardSide, elf: Path, workdir: Path, request: RunRequest,
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
    return verdict(target.board, elf, uart, result.exit_code, result.target_error,
                   request.timeout, result.command)


async def _remote_python(target: BoardSide, on_output: OutputCallback) -> str | None:
    """The Pi's python with pyserial: installed into the workspace venv there if missing."""
    assert target.via is not None
    if not await target.via.missing_modules(["serial"]):
        return None
    python = await target.via.install([], on_output)  # the workspace venv there
    if await target.via.missing_modules(["serial"], python):
        python = await target.via.install(["pyserial"], on_output)
    return python
