"""The UART contract: a firmware's serial output, read line by line for its end line.

The firmware prints its result and ends with a line saying PASSED or FAILED;
that line (not the emulator, which never exits by itself) ends the run.
"""

from __future__ import annotations

import asyncio
import re

from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.targets.capture import OutputCapture

END_LINE = re.compile(r"^\W*(PASSED|FAILED)\b")
FAULT_LINE = re.compile(r"FAULT: (.*?) pc=(0x[0-9a-fA-F]+) lr=(0x[0-9a-fA-F]+)(.*)")
CONTRACT = ("print the result on the UART and end with a line saying PASSED or FAILED "
            "(only the word on that line)")


class UartReader:
    """Keeps the output (bounded), streams it on, and tells when the end line came."""

    def __init__(self, on_output: OutputCallback) -> None:
        self.on_output = on_output
        self.capture = OutputCapture()
        self.bytes = 0
        self.end: str = ""  # "PASSED" or "FAILED" once seen
        self.fault_line: re.Match[str] | None = None  # the board package's own report
        self.ended = asyncio.Event()
        self._line = ""

    def feed(self, text: str) -> None:
        """A chunk of the serial output, already decoded (undecodable bytes replaced)."""
        self.bytes += len(text.encode("utf-8", "replace"))
        text = text.replace("\r\n", "\n").replace("\r", "")
        if not text:
            return
        self.capture.add(text)
        self.on_output("stdout", text)
        if self.end:
            return
        self._line += text
        *lines, self._line = self._line.split("\n")
        self._line = self._line[-1000:]
        for line in lines:
            fault = FAULT_LINE.search(line)
            if fault and self.fault_line is None:
                self.fault_line = fault
            m = END_LINE.match(line)
            if m:
                self.end = m.group(1)
                self.ended.set()
                return

    @property
    def text(self) -> str:
        return self.capture.text
