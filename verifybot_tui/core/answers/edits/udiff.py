"""Unified diffs as LLMs write them, applied with the tolerance of SEARCH/REPLACE.

LLMs write ``--- a/x`` / ``+++ b/x`` headers or none, ``@@ -3,7 +3,8 @@`` hunk lines
with wrong counts, with no numbers at all (``@@ ... @@``), or no hunk line. A hunk is
applied by its lines, not its numbers: the context and removed lines must be in the
file once (exactly, else ignoring trailing spaces, else indentation), like a
SEARCH part. ``--- /dev/null`` creates a file, ``+++ /dev/null`` removes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifybot_tui.core.answers.edits.search_replace import replace_once

_OLD_RE = re.compile(r"^---\s+(\S+)")
_NEW_RE = re.compile(r"^\+\+\+\s+(\S+)")
_HUNK_RE = re.compile(r"^@@(?:\s*-(\d+)(?:,\d+)?\s+\+(\d+)(?:,\d+)?)?.*?(?:@@.*)?$")
_META_RE = re.compile(r"^(?:diff --git |index [0-9a-f]|new file mode|deleted file mode|"
                      r"similarity index|rename from|rename to|old mode|new mode)")
NULL = "/dev/null"


@dataclass(frozen=True)
class Hunk:
    old: str  # the context and removed lines, each ending "\n"
    new: str  # the context and added lines
    at: int  # the old line number the hunk gives, 0 if none


@dataclass(frozen=True)
class FilePatch:
    """The hunks for one file; ``path`` is "" when the diff names no file."""

    path: str
    old_path: str
    hunks: tuple[Hunk, ...]

    @property
    def creates(self) -> bool:
        return self.old_path == NULL

    @property
    def removes(self) -> bool:
        return self.path == NULL


def looks_like_diff(code: str, language: str) -> bool:
    """A ```diff block, or a block whose lines are a unified diff's."""
    if language not in ("diff", "patch", "udiff") and not (
            code.startswith(("--- ", "@@")) or "\n--- " in code or "\n@@" in code):
        return False  # most blocks: no line a diff needs (str tests, no split)
    lines = code.split("\n")
    if language in ("diff", "patch", "udiff"):
        return any(ln[:1] in "+-" for ln in lines) and not _all_list_items(lines)
    headers = any(_OLD_RE.match(a) and _NEW_RE.match(b) for a, b in zip(lines, lines[1:],
                                                                          strict=False))
    hunk = any(ln.startswith("@@") for ln in lines)
    return headers or (hunk and sum(1 for ln in lines if ln[:1] in "+-") >= 1)


def _all_list_items(lines: list[str]) -> bool:
    """``- item`` lines only: a markdown list in a diff fence, not a diff."""
    body = [ln for ln in lines if ln.strip()]
    return all(ln.startswith(("- ", "+ ")) for ln in body) and not any(
        ln.startswith("  ") for ln in body)


def _strip_prefix(path: str) -> str:
    if path == NULL:
        return path
    path = path.split("\t", 1)[0]
    if path[:2] in ("a/", "b/"):
        path = path[2:]
    return path[2:] if path.startswith("./") else path


def parse_patches(code: str) -> list[FilePatch]:
    """The diff's patches, one per file, in order."""
    patches: list[FilePatch] = []
    path = old_path = ""
    hunks: list[Hunk] = []
    body: list[str] = []
    at = 0
    lines = code.split("\n")
    if lines and lines[-1] == "":
        lines.pop()

    def flush_hunk() -> None:
        nonlocal body
        if any(ln[:1] in "+-" for ln in body):
            hunks.append(_hunk(body, at))
        body = []

    def flush_file() -> None:
        nonlocal hunks
        flush_hunk()
        if hunks:
            patches.append(FilePatch(path, old_path, tuple(hunks)))
        hunks = []

    i = 0
    while i < len(lines):
        line = lines[i]
        if (m := _OLD_RE.match(line)) and i + 1 < len(lines) and (n := _NEW_RE.match(lines[i + 1])):
            flush_file()
            old_path, path, at = _strip_prefix(m.group(1)), _strip_prefix(n.group(1)), 0
            i += 2
            continue
        if _META_RE.match(line):
            i += 1
            continue
        if (h := _HUNK_RE.match(line)) and line.startswith("@@"):
            flush_hunk()
            at = int(h.group(1)) if h.group(1) else 0
        elif not line.startswith("\\"):  # "\ No newline at end of file"
            body.append(line)
        i += 1
    flush_file()
    return patches


def _hunk(body: list[str], at: int) -> Hunk:
    old: list[str] = []
    new: list[str] = []
    for line in body:
        tag, text = line[:1], line[1:]
        if tag == "-":
            old.append(text)
        elif tag == "+":
            new.append(text)
        else:  # " " context, or a blank line whose space the copy lost
            old.append(text if tag == " " else line)
            new.append(text if tag == " " else line)
    while old and new and not old[0].strip() and not new[0].strip():
        old.pop(0)
        new.pop(0)
    while old and new and not old[-1].strip() and not new[-1].strip():
        old.pop()
        new.pop()
    return Hunk("".join(ln + "\n" for ln in old), "".join(ln + "\n" for ln in new), at)


def apply_patch(text: str | None, patch: FilePatch, path: str) -> tuple[str | None, str]:
    """(the new text, "") or (None, why not, one sentence naming ``path``)."""
    if patch.creates or (text is None and all(not h.old.strip() for h in patch.hunks)):
        if text is not None and text.strip():
            return None, f"the diff creates {path}, but {path} already exists"
        return "".join(h.new for h in patch.hunks), ""
    if text is None:
        return None, f"the diff changes {path}, which is not in the project"
    for n, hunk in enumerate(patch.hunks, 1):
        if not hunk.old.strip():
            return None, (f"hunk {n} of the diff adds lines to {path} with no context "
                          "lines to say where")
        new, why = replace_once(text, hunk.old, hunk.new, path)
        if new is None:
            return None, f"hunk {n} of the diff does not match: " + why.replace(
                "its SEARCH part is", "its context and removed lines are").replace(
                "its SEARCH part", "its context and removed lines")
        text = new
    return text, ""
