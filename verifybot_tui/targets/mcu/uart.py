"""The UART contract: a firmware's serial output, read line by line for its end line.

The firmware prints its results and ends with an end line: a line whose last
word is PASSED or FAILED, alone or after a short label (``PASSED``, ``SELFTEST
PASSED``, ``All 5 tests PASSED``). That line, not the emulator (which never
exits by itself), ends the run, after a short grace so a fault right after it
still counts. A line where more follows the word (``PASSED crc15 (0x059E)``,
``FAILED: can_frame_pack``) is a per-test line; any line with the word FAILED
fails the run, wherever it stands (../shared/DESIGN.md, "The UART contract").
"""

from __future__ import annotations

import asyncio
import re

from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.targets.capture import OutputCapture

# The last word, after at most a short label (40 characters), with only punctuation after it.
END_LINE = re.compile(r"^[^\n]{0,40}?\b(PASSED|FAILED)[^\w\n]*$")
FAILED_WORD = re.compile(r"\bFAILED\b")
FAULT_LINE = re.compile(r"FAULT: (.*?) pc=(0x[0-9a-fA-F]+) lr=(0x[0-9a-fA-F]+)(.*)")
END_GRACE = 0.2  # seconds of output still read after the end line (a fault right after it)
CONTRACT = ("print the result on the UART and end with an end line: a line whose last word is "
            "PASSED or FAILED, alone or after a short label (\"SELFTEST PASSED\"); a line "
            "where more follows the word (\"PASSED crc (0x29B1)\") is a per-test line, and any "
            "line with the word FAILED fails the run")


def end_word(line: str) -> str:
    """"PASSED" or "FAILED" when ``line`` is an end line, else ""."""
    m = END_LINE.match(line.strip())
    return m.group(1) if m else ""


class UartReader:
    """Keeps the output (bounded), streams it on, and tells when the end line came."""

    def __init__(self, on_output: OutputCallback) -> None:
        self.on_output = on_output
        self.capture = OutputCapture()
        self.bytes = 0
        self.end: str = ""  # "PASSED" or "FAILED" once the end line was seen
        self.failed_line: str = ""  # the first line with the word FAILED
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
        self._line += text
        *lines, self._line = self._line.split("\n")
        self._line = self._line[-1000:]
        for line in lines:
            self._read(line[:1000])

    def _read(self, line: str) -> None:
        fault = FAULT_LINE.search(line)
        if fault and self.fault_line is None:
            self.fault_line = fault
        if not self.failed_line and FAILED_WORD.search(line):
            self.failed_line = line.strip()
        if not self.end:
            self.end = end_word(line)
            if self.end:
                self.ended.set()

    @property
    def failed(self) -> bool:
        """Whether the run fails on what the UART said (a FAILED anywhere)."""
        return self.end == "FAILED" or bool(self.failed_line)

    @property
    def text(self) -> str:
        return self.capture.text
