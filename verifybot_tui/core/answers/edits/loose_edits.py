"""SEARCH/REPLACE edits and unified diffs written outside any fence, as some answers
write them.

Markdown reads such an edit as prose (its ``=======`` underlines a heading, ``---``
rules a line), so extract never sees it as a block; a person still sees the edit and
the path on the line above it. These are found here, in the answer as its fences are
mended.
"""

from __future__ import annotations

import re

from verifybot_tui.core.answers.edits.search_replace import has_markers
from verifybot_tui.core.answers.fence_repair import repair_fences
from verifybot_tui.core.answers.hints import raw_names

_FENCE_RE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_START_RE = re.compile(r"^\s*<{5,9}\s*SEARCH\b")
_END_RE = re.compile(r"^\s*>{5,9}\s*REPLACE\b")


def loose_edits(answer: str) -> list[tuple[int, str]]:
    """(1-based line of the SEARCH marker or the diff's ``---`` line, the edit's text:
    a SEARCH/REPLACE edit with its path line first, or a diff) for each edit outside
    the answer's fences."""
    text = answer.replace("\r\n", "\n")
    if ("SEARCH" not in text or "REPLACE" not in text) and "\n+++ " not in text:
        return []
    lines, _ = repair_fences(text)
    rows = lines.split("\n")
    found: list[tuple[int, str]] = []
    fence = ""
    i = 0
    while i < len(rows):
        line = rows[i]
        m = _FENCE_RE.match(line)
        if m and not fence:
            fence = m.group(1)
        elif m and fence and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and (
                not m.group(2).strip()):
            fence = ""
        elif not fence and line.startswith("--- ") and i + 1 < len(rows) and (
                rows[i + 1].startswith("+++ ")):
            after = _diff_end(rows, i + 2)
            found.append((i + 1, "\n".join(rows[i:after]) + "\n"))
            i = after - 1
        elif not fence and _START_RE.match(line):
            end = next((k for k in range(i + 1, len(rows)) if _END_RE.match(rows[k])), None)
            if end is None:
                break
            body = "\n".join(rows[i:end + 1]) + "\n"
            if has_markers(body):
                found.append((i + 1, _path_above(rows, i) + body))
            i = end
        i += 1
    return found


def _diff_end(rows: list[str], i: int) -> int:
    """The line after a diff written outside a fence: its hunks run while lines are
    hunk lines (" ", "+", "-", "@@", "\\"), or the next file's headers."""
    while i < len(rows) and (rows[i][:1] in (" ", "+", "-", "\\") or rows[i].startswith("@@")):
        i += 1
    return i


def _path_above(rows: list[str], i: int) -> str:
    """The path line above an edit (``main.py``, `` `src/a.py`: ``), as a line of its own;
    "" when the line above names no single file."""
    k = i - 1
    while k >= 0 and not rows[k].strip():
        k -= 1
    if k < 0 or _END_RE.match(rows[k]):
        return ""
    names = raw_names(rows[k].strip())
    return names[0] + "\n" if len(names) == 1 else ""
