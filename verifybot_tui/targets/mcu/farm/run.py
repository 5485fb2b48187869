"""A firmware run on a labgrid place: acquire, connect the UART, flash, read, release.

The flash step is the target's ``flash`` (a preset or a command template, as for
a board on this machine) with the place filled in: ``{serial}`` is the place's
NetworkSerialPort as host:port, ``{host}`` the exporter's host, ``{place}`` its
name. The verdict comes from the UART as for every real board (real/verdict.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from pathlib import Path

from verifybot_tui.core.base.ports import OutputCallback, RunRequest
from verifybot_tui.targets.mcu.farm import claim as claims
from verifybot_tui.targets.mcu.farm.serial_tcp import network_serial, open_reader
from verifybot_tui.targets.mcu.farm.session import coordinator_address, farm_session
from verifybot_tui.targets.mcu.qemu import FirmwareRun
from verifybot_tui.targets.mcu.real import BoardSide
from verifybot_tui.targets.mcu.real.flash import flash_command, images
from verifybot_tui.targets.mcu.real.verdict import verdict
from verifybot_tui.targets.mcu.uart import END_GRACE, UartReader

FLASH_TIMEOUT = 120.0


async def run_on_place(target: BoardSide, elf: Path, workdir: Path, request: RunRequest,
                       on_output: OutputCallback) -> FirmwareRun:
    address = coordinator_address(target.config)
    uart = UartReader(on_output)
    async with farm_session(address) as session:
        held = await claims.acquire(session, target.config, address, on_output)
        pump: asyncio.Task[None] | None = None
        try:
            serial = await network_serial(session, held.name)
            pump, opened = await open_reader(serial, uart)
            said = ", its port open" if opened else ""
            on_output("note", f"labgrid: reading {serial.url()} of place {held.name}{said}")
            code, command = await _flash(target, elf, workdir, serial.host,
                                         f"{serial.host}:{serial.port}", held.name, on_output)
            if code == 0:
                code = await _read(uart, pump, request.timeout)
            command = f"{command} [labgrid place {held.name}, UART {serial.url()}]"
        finally:
            if pump is not None:
                pump.cancel()
                with contextlib.suppress(BaseException):
                    await pump
            await claims.release(session, held, on_output)
    return verdict(target.board, elf, uart, code, None, request.timeout, command)


async def _flash(target: BoardSide, elf: Path, workdir: Path, host: str, serial: str,
                 place: str, on_output: OutputCallback) -> tuple[int, str]:
    template, _ = flash_command(target.board, target.config.flash)
    names = {k: str(v) for k, v in images(target.board, elf, template).items()}
    fill = {**names, "serial": serial, "host": host, "place": place}
    argv = [part.format(**fill) for part in shlex.split(template)]
    on_output("note", f"labgrid: flashing place {place}: {shlex.join(argv)}")
    # the user's own flash tool, from their config: it reaches the farm's network and
    # devices as the probe backend's does (the firmware it flashes runs on the board)
    done = await target.local.command(argv, workdir, on_output, FLASH_TIMEOUT,
                                      sandboxed=False)
    if done.exit_code != 0:
        on_output("note", f"labgrid: the flash step exited with status {done.exit_code}")
        return 4, done.command
    return 0, done.command


async def _read(uart: UartReader, pump: asyncio.Task[None], timeout: float) -> int:
    """0/1 after the end line (and its grace), 124 on the timeout, 5 when the port closed."""
    ended = asyncio.ensure_future(uart.ended.wait())
    try:
        await asyncio.wait([ended, pump], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        ended.cancel()
    if uart.end:
        await asyncio.sleep(END_GRACE)
        return 1 if uart.failed else 0
    return 5 if pump.done() else 124
