"""Sanity checks: signs that a run which exited 0 still did not do its job.

None of these proves a failure (a program may rightly print 0), so a hit does not
fail the run: it holds the run for a judgement (the LLM judge is told the reasons,
or the user decides) instead of letting it count as a success. They are on by
default; a criteria file or recipe turns them off with ``sanity = false``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifybot_tui.core.base.ports import RunResult

# A number standing on its own (not part of a word such as "x2" or "utf8").
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_NAN_INF = re.compile(r"(?<![\w.])[-+]?(?:nan|inf|infinity)(?![\w])", re.I)
_TRACEBACK = re.compile(r"^(?:Traceback \(most recent call last\):|Exception in thread )", re.M)
_QUOTE = 160


@dataclass(frozen=True)
class Hit:
    """One sanity check that fired, and what it saw."""

    name: str  # "empty-output", "all-zero", "nan-inf", "traceback"
    reason: str  # a plain-text sentence for the judge and the user


def _line_with(text: str, pos: int) -> tuple[int, str]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    line = text[start:end if end >= 0 else len(text)].rstrip("\r")
    if len(line) > _QUOTE:
        line = line[:_QUOTE] + "..."
    return text.count("\n", 0, pos) + 1, line


def empty_output(result: RunResult) -> Hit | None:
    if result.stdout.strip():
        return None
    return Hit("empty-output", "the program printed nothing on stdout, although it was "
                               "asked to print what it did")


def all_zero(result: RunResult) -> Hit | None:
    first, count = None, 0
    for m in _NUMBER.finditer(result.stdout):  # stops at the first number that is not zero
        if float(m.group(0)) != 0:
            return None
        first = m if first is None else first
        count += 1
    if first is None:
        return None
    n, line = _line_with(result.stdout, first.start())
    return Hit("all-zero", f"every number printed is zero ({count} numbers), "
                           f"e.g. line {n}: \"{line}\"")


def nan_inf(result: RunResult) -> Hit | None:
    m = _NAN_INF.search(result.stdout)
    if m is None:
        return None
    n, line = _line_with(result.stdout, m.start())
    return Hit("nan-inf", f"the output holds {m.group(0)}, line {n}: \"{line}\"")


def traceback_printed(result: RunResult) -> Hit | None:
    for stream, text in (("stderr", result.stderr), ("stdout", result.stdout)):
        m = _TRACEBACK.search(text)
        if m:
            n, line = _line_with(text, m.start())
            last = next((ln for ln in reversed(text.splitlines()) if ln.strip()), line)
            return Hit("traceback", f"a traceback was printed on {stream} (line {n}) but the "
                                    f"program exited 0; its last line: \"{last[:_QUOTE]}\"")
    return None


CHECKS = (empty_output, all_zero, nan_inf, traceback_printed)


def check(result: RunResult) -> list[Hit]:
    """Every check that fires on a run that exited 0 (none for other runs)."""
    if result.exit_code != 0:
        return []
    return [hit for fn in CHECKS if (hit := fn(result)) is not None]


def text(hits: list[Hit]) -> str:
    """The hits as plain-text lines for the judge prompt and the feedback."""
    return "\n".join(f"- {h.reason}" for h in hits)
