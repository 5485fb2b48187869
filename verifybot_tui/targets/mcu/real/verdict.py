"""A real board's run as its serial port showed it: passed, failed, faulted, silent or unreachable.

Every real-board backend (a board here or on the Pi, a farm's place) reads the
UART the same way and ends with the same verdict; the board helper's exit codes
say what went wrong outside the firmware (not the LLM's to fix).
"""

from __future__ import annotations

from pathlib import Path

from verifybot_tui.targets.mcu import diagnose
from verifybot_tui.targets.mcu.boards import Board
from verifybot_tui.targets.mcu.qemu import FirmwareRun
from verifybot_tui.targets.mcu.uart import UartReader

_CODES = {3: "the board is in use by another run (its lock is held)",
          4: "flashing failed (the flash tool's output is above)",
          5: "the serial port could not be opened or failed while reading"}


def verdict(board: Board, elf: Path, uart: UartReader, code: int | None,
            target_error: str | None, timeout: float, command: str) -> FirmwareRun:
    """The run as the UART showed it: the end line, a fault the package printed, else
    why there was no end (the board unreachable, its tools failing, the timeout)."""
    run = FirmwareRun(None, uart.text, uart.bytes, "end-line" if uart.end else "board",
                      command=command)
    tool = board.tool("addr2line")
    if uart.fault_line is not None:
        run.diagnosis = diagnose.package_fault(uart.fault_line, tool, elf,
                                               board.irq_names)
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
