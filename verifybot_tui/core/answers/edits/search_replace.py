"""SEARCH/REPLACE edits (aider's format), read and applied as a person applies them.

    path/to/file.py            <- optional, before the fence or as its first line
    <<<<<<< SEARCH
    the lines as they are
    =======
    the lines as they become
    >>>>>>> REPLACE

The SEARCH part must be in the file once: exactly, else with trailing spaces
ignored, else with indentation ignored (the REPLACE part then moves by the same
indentation). Found twice, or not at all, it is a problem for the LLM, never a
guess. An empty SEARCH creates the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_START_RE = re.compile(r"^\s*<{5,9}\s*SEARCH\b.*$")
_DIVIDER_RE = re.compile(r"^\s*={5,9}\s*$")
_END_RE = re.compile(r"^\s*>{5,9}\s*REPLACE\b.*$")
_PATH_LINE_RE = re.compile(r"^\s*(?:#+\s*|//\s*)?(?:file(?:name)?:\s*)?`?"
                           r"([\w.\-/\\\[\]@+]+\.[A-Za-z0-9]+|[\w.\-/]*(?:Makefile|Dockerfile))`?"
                           r":?\s*$")


@dataclass(frozen=True)
class SearchReplace:
    """One edit: its file ("" when the text does not say), the two parts, and where."""

    path: str
    search: str  # lines joined with "\n", each ending "\n" ("" when empty)
    replace: str
    line: int  # 0-based line of the "<<<<<<< SEARCH" marker in the text read


def has_markers(text: str) -> bool:
    """Whether ``text`` holds a whole SEARCH/REPLACE edit (all three markers, in order)."""
    if "SEARCH" not in text or "REPLACE" not in text:
        return False
    lines = text.split("\n")
    start = next((i for i, ln in enumerate(lines) if _START_RE.match(ln)), None)
    if start is None:
        return False
    div = next((i for i in range(start + 1, len(lines)) if _DIVIDER_RE.match(lines[i])), None)
    return div is not None and any(_END_RE.match(ln) for ln in lines[div + 1:])


def parse_edits(text: str) -> tuple[list[SearchReplace], list[str]]:
    """The edits in ``text`` in order, and the lines outside them that are not blank
    (a path line before an edit names it, and the ones after it)."""
    lines = text.split("\n")
    edits: list[SearchReplace] = []
    outside: list[str] = []
    path = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if not _START_RE.match(line):
            m = _PATH_LINE_RE.match(line)
            if m:
                path = m.group(1).replace("\\", "/")
            elif line.strip() and not line.strip().startswith("```"):
                outside.append(line)
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not _DIVIDER_RE.match(lines[j]):
            j += 1
        k = j + 1
        while k < len(lines) and not _END_RE.match(lines[k]):
            k += 1
        if j >= len(lines) or k >= len(lines):
            outside.append(line)  # an unfinished edit: not one to apply
            break
        edits.append(SearchReplace(path, _joined(lines[i + 1:j]), _joined(lines[j + 1:k]), i))
        i = k + 1
    return edits, outside


def _joined(lines: list[str]) -> str:
    return "".join(ln + "\n" for ln in lines)


def apply_edit(text: str | None, edit: SearchReplace, path: str) -> tuple[str | None, str]:
    """(the new text, "") or (None, why not: one sentence naming ``path``)."""
    if not edit.search.strip():
        if text is None or not text.strip() or text.strip() == edit.replace.strip():
            return edit.replace, ""
        return None, (f"its SEARCH part is empty, which creates a new file, but {path} "
                      "already exists")
    if text is None:
        return None, f"{path} is not in the project"
    return replace_once(text, edit.search, edit.replace, path)


def replace_once(text: str, old: str, new: str, path: str) -> tuple[str | None, str]:
    """``text`` with the one place that holds ``old`` (lines) made ``new``."""
    hay = "\n" + text if text.endswith("\n") else "\n" + text + "\n"
    needle = "\n" + old
    at = hay.find(needle)
    count = 0 if at < 0 else 1 if hay.find(needle, at + 1) < 0 else _count(hay, needle)
    if count == 1:
        out = hay[:at + 1] + new + hay[at + len(needle):]
        return out[1:], ""
    if count > 1:
        return None, (f"its SEARCH part is in {path} {count} times, so it is not clear "
                      "which to change")
    return _tolerant(text, old, new, path)


def _count(hay: str, needle: str) -> int:
    """Occurrences of ``needle`` that may overlap (two "import json" lines in a row
    share the newline between them)."""
    count, at = 0, hay.find(needle)
    while at >= 0:
        count, at = count + 1, hay.find(needle, at + 1)
    return count


def _tolerant(text: str, old: str, new: str, path: str) -> tuple[str | None, str]:
    """The match that ignores trailing spaces, then indentation; the REPLACE part is
    moved by the indentation the file has more (or less) than the SEARCH part."""
    lines = text.split("\n")
    trailing = lines[-1] == ""
    if trailing:
        lines.pop()
    want = old.split("\n")[:-1]
    while want and not want[0].strip():
        want.pop(0)
    while want and not want[-1].strip():
        want.pop()
    if not want:
        return None, f"its SEARCH part is only blank lines, which do not say where in {path}"
    for strip in (str.rstrip, str.strip):
        key = [strip(w) for w in want]
        hits = _hits(lines, key, strip)
        if len(hits) > 1:
            return None, (f"its SEARCH part is in {path} {len(hits)} times, so it is not clear "
                          "which to change")
        if hits:
            at = hits[0]
            shift = _indent(lines[at]) - _indent(want[0])
            prefix = lines[at][:max(shift, 0)]
            body = [_shifted(ln, shift, prefix) for ln in new.split("\n")[:-1]]
            out = lines[:at] + body + lines[at + len(want):]
            return "\n".join(out) + ("\n" if trailing else ""), ""
    return None, f"its SEARCH part is not in {path}"


def _hits(lines: list[str], key: list[str], strip: object) -> list[int]:
    first = key[0]
    n = len(key)
    found = []
    for i, line in enumerate(lines):
        if strip(line) == first and [strip(ln) for ln in lines[i:i + n]] == key:  # type: ignore[operator]
            found.append(i)
    return found


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _shifted(line: str, shift: int, prefix: str) -> str:
    """``line`` moved right by ``prefix`` (the file's own spaces or tabs) or left by
    ``-shift`` characters of its indentation."""
    if not line.strip() or shift == 0:
        return line
    if shift > 0:
        return prefix + line
    cut = min(-shift, _indent(line))
    return line[cut:]
