"""The line criteria checked on the whole output as it streams, not on a kept head and tail.

A target keeps only the head and the tail of a long output in memory; ``not:WRONG``
judged on those passes when WRONG is in the middle. So the loop feeds every stdout
chunk to an ``OutputScan`` while the program runs: each line is looked at once, by
a worker thread (a scan never holds up the event loop, so a stop never waits for
it), and each line criterion keeps only its decision and the evidence.

Regular expressions run with a time budget (the ``regex`` library's ``timeout``), so
``^(a|a)+$`` against ``aaaa...!`` fails its criterion after a second instead of
backtracking for ever. ``regex-whole`` reads the whole stdout, kept up to the same
cap as ``outputs/`` ([run] max_output_mb).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from verifybot_tui.core.verify.criterion import NUMBER, Check, Criterion, bounds, last_line, quote

if TYPE_CHECKING:  # the library itself loads with the first pattern: the app's first
    import regex  # screen has none to compile, and it costs a start ~8 ms

LINE_KINDS = ("contains", "not", "regex", "range")
LINE_MAX = 4 * 1024 * 1024  # a line longer than this is checked in pieces of this size
REGEX_SECONDS = 1.0  # what one regex criterion may spend on a whole run's output
_WHOLE_DEFAULT = 64 * 1024 * 1024


def compile_pattern(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """The one compiler of criteria patterns; regex.error (or Overflow) when it cannot."""
    import regex

    return regex.compile(pattern, flags | regex.VERSION0)


class _Rule:
    """One line criterion: its first decisive line, and how much time its regex used."""

    def __init__(self, c: Criterion) -> None:
        self.c = c
        self.decided: Check | None = None
        self.spent = 0.0
        self.regex = compile_pattern(c.pattern) if c.kind in ("regex", "range") else None

    def search(self, line: str, n: int) -> regex.Match[str] | None:
        assert self.regex is not None
        left = REGEX_SECONDS - self.spent
        started = time.monotonic()
        try:
            return self.regex.search(line, timeout=max(left, 0.01), concurrent=True)
        except TimeoutError:
            self.decided = Check(self.c, False, f"the regular expression took more than "
                                 f"{REGEX_SECONDS:g} s (at line {n}): it backtracks too much; "
                                 "simplify it")
            return None
        finally:
            self.spent += time.monotonic() - started

    def line(self, line: str, n: int) -> None:
        k = self.c.kind
        if k in ("contains", "not"):
            if self.c.spec in line:
                self.decided = Check(self.c, k == "contains", f"line {n}: {quote(line)}")
            return
        m = self.search(line, n)
        if m is None:
            return
        if k == "regex":
            self.decided = Check(self.c, True, f"line {n}: {quote(line)}")
        else:
            self.decided = _in_range(self.c, m, line, n)

    def final(self, lines: int, last: list[str]) -> Check:
        if self.decided is not None:
            return self.decided
        k, tail = self.c.kind, last_line(last)
        if k == "contains":
            return Check(self.c, False, f'"{self.c.spec}" not found in {lines} lines; {tail}')
        if k == "not":
            return Check(self.c, True, f"not in {lines} lines")
        if k == "regex":
            return Check(self.c, False, f"no line matches; {tail}")
        return Check(self.c, False, f"no line matches {self.c.pattern}; {tail}")


def _in_range(c: Criterion, m: regex.Match[str], line: str, n: int) -> Check:
    raw = m.group(1) if m.re.groups else m.group(0)
    num = NUMBER.search(raw or "")
    if num is None:
        return Check(c, False, f"line {n}: {quote(line)}: {raw!r} is not a number")
    value = float(num.group(0))
    inside = (not math.isnan(value) and (c.low is None or value >= c.low)
              and (c.high is None or value <= c.high))
    where = "" if inside else "not "
    return Check(c, inside, f"line {n}: {quote(line)}: read {num.group(0)}, "
                            f"{where}{bounds(c.low, c.high)}")


class OutputScan:
    """stdout fed as it streams; the line criteria decided on every line of it.

    ``feed`` only queues the text (cheap, on the event loop); a daemon thread splits
    it into lines and checks them. ``result`` (call it off the loop) waits for the
    thread to drain and returns the checks.
    """

    def __init__(self, criteria: list[Criterion], whole_limit: int = _WHOLE_DEFAULT) -> None:
        self.rules = [_Rule(c) for c in criteria if c.kind in LINE_KINDS]
        self.keep_whole = any(c.kind == "regex-whole" for c in criteria)
        self.whole_limit = whole_limit
        self.whole: list[str] = []
        self.whole_len = 0
        self.whole_cut = False
        self.lines = 0
        self.last: deque[str] = deque(maxlen=8)
        self._partial = ""
        self._queue: deque[str | None] = deque()
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None

    def feed(self, text: str) -> None:
        if not text:
            return
        if self.keep_whole:
            self._keep(text)
        if not self.rules:
            self._count(text)
            return
        with self._ready:
            self._queue.append(text)
            self._ready.notify()
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="verifybot-criteria",
                                            daemon=True)
            self._thread.start()

    def _keep(self, text: str) -> None:
        room = self.whole_limit - self.whole_len
        if room <= 0:
            self.whole_cut = True
            return
        self.whole.append(text[:room])
        self.whole_len += min(len(text), room)

    def _count(self, text: str) -> None:
        """No line criterion: only the line count and the last lines, for evidence."""
        self._lines(text, check=False)

    def _work(self) -> None:
        while True:
            with self._ready:
                while not self._queue:
                    self._ready.wait()
                text = self._queue.popleft()
            if text is None:
                return
            self._lines(text, check=True)

    def _lines(self, text: str, *, check: bool) -> None:
        parts = (self._partial + text).split("\n")
        self._partial = parts.pop()
        for line in parts:
            self._line(line, check)
        while len(self._partial) > LINE_MAX:  # one endless line: checked in pieces
            self._line(self._partial[:LINE_MAX], check)
            self._partial = self._partial[LINE_MAX:]

    def _line(self, line: str, check: bool) -> None:
        line = line.rstrip("\r")
        self.lines += 1
        if line.strip():
            self.last.append(line)
        if check:
            for rule in self.rules:
                if rule.decided is None:
                    rule.line(line, self.lines)

    def result(self) -> list[Check]:
        """Wait for every queued line to be checked; the line criteria's checks."""
        if self._thread is not None:
            with self._ready:
                self._queue.append(None)
                self._ready.notify()
            self._thread.join()
        if self._partial:
            self._line(self._partial, check=True)
            self._partial = ""
        return [rule.final(self.lines, list(self.last)) for rule in self.rules]

    @property
    def whole_text(self) -> str:
        return "".join(self.whole)
