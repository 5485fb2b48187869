"""A criterion and its check as values, and how their evidence is worded.

Both the parser and checker of criteria (criteria) and the scan of a streaming
output (output_scan) need these: the types, the number a range reads, how a line
seen is quoted and how bounds are said. They live here, below both, so neither of
the two has to import the other to share them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BARE_KINDS = ("no-stderr", "compiles-clean")  # kinds without a spec
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)", re.I)
"""A number as a range criterion reads it from a line (inf and nan included)."""
_LINE_LIMIT = 160  # how much of a line the evidence quotes


@dataclass(frozen=True)
class Criterion:
    """One parsed criterion; ``text`` is how the user wrote it (KIND:SPEC)."""

    kind: str
    spec: str = ""
    low: float | None = None  # range
    high: float | None = None  # range; duration's limit
    min_size: int = 0  # file
    code: int = 0  # exit

    @property
    def text(self) -> str:
        return self.kind if self.kind in BARE_KINDS else f"{self.kind}:{self.spec}"

    def describe(self) -> str:
        """The criterion as a plain-text sentence for the LLM and the user."""
        k, s = self.kind, self.spec
        if k == "contains":
            return f'the output contains "{s}"'
        if k == "not":
            return f'the output does not contain "{s}"'
        if k == "regex":
            return f"a line of the output matches the regular expression {s}"
        if k == "regex-whole":
            return f"the whole output matches the regular expression {s}"
        if k == "exit":
            return f"the program exits with status {self.code}"
        if k == "range":
            return (f"the number captured by the regular expression {self.pattern} "
                    f"is {bounds(self.low, self.high)}")
        if k == "file":
            size = f" of at least {self.min_size} bytes" if self.min_size else ""
            return f"the program creates a file matching {self.pattern} in its folder{size}"
        if k == "no-stderr":
            return "the program prints nothing on stderr"
        if k == "duration":
            return f"the run takes at most {self.high:g} seconds"
        return "the program compiles without errors or warnings"

    @property
    def pattern(self) -> str:
        """range's regex / file's glob: the spec without its bounds or size."""
        if self.kind in ("range", "file") and ":" in self.spec:
            head, _, tail = self.spec.rpartition(":")
            if self.kind == "range" or tail.isdigit():
                return head
        return self.spec


@dataclass(frozen=True)
class Check:
    """A criterion checked against one run: met or not, and what was seen."""

    criterion: Criterion
    met: bool
    evidence: str  # the line seen, the value read, or what was missing


def bounds(low: float | None, high: float | None) -> str:
    """A range's bounds in words: "between 1 and 2", "at least 1", "at most 2"."""
    if low is not None and high is not None:
        return f"between {low:g} and {high:g}"
    if low is not None:
        return f"at least {low:g}"
    return f"at most {high:g}"


def quote(line: str) -> str:
    """A line of output as the evidence quotes it: in quotes, cut past 160 characters."""
    line = line.rstrip("\r")
    if len(line) > _LINE_LIMIT:
        line = line[:_LINE_LIMIT] + "..."
    return f'"{line}"'


def last_line(lines: list[str]) -> str:
    """The last non-empty line as evidence of what a run ended on."""
    for line in reversed(lines):
        if line.strip():
            return f"the last line was {quote(line)}"
    return "the output was empty"
