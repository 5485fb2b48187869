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
LINE_HEAD = 1000  # characters of a line kept to read it; the rest is only scanned for FAILED
CARRY = 80  # characters before a chunk kept: a word split between chunks, and its context
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
        self._line = ""  # the current line's first LINE_HEAD characters
        self._carry = ""  # the last characters of the current line past its head

    def feed(self, text: str) -> None:
        """A chunk of the serial output, already decoded (undecodable bytes replaced)."""
        self.bytes += len(text.encode("utf-8", "replace"))
        text = text.replace("\r\n", "\n").replace("\r", "")
        if not text:
            return
        self.capture.add(text)
        self.on_output("stdout", text)
        *lines, rest = text.split("\n")
        for piece in lines:
            self._add(piece, line_end=True)
            self._read(self._line)
            self._line, self._carry = "", ""
        self._add(rest, line_end=False)

    def _add(self, piece: str, *, line_end: bool) -> None:
        """Part of the current line: its head is kept whole (for the end line and the
        fault line), the rest only scanned for the word FAILED, so a line of any length
        is read in bounded memory."""
        room = LINE_HEAD - len(self._line)
        if room > 0:
            self._line += piece[:room]
            piece = piece[room:]
        if self.failed_line or (not piece and not self._carry):
            return
        window = (self._carry or self._line[-CARRY:]) + piece
        for m in FAILED_WORD.finditer(window):
            if m.end() == len(window) and not line_end:
                break  # a word character may follow in the next chunk
            seen = window[max(0, m.start() - 60):m.end() + 20]
            self.failed_line = f"{self._line[:80].strip()} ... {seen.strip()}"
            return
        self._carry = window[-CARRY:]

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
