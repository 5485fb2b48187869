"""Broken fences read the way a person reads them, before markdown-it sees the answer.

Answers break their fences in three ways people see through at once:
- a README (or any markdown) with fenced examples inside a ```markdown fence: the
  first inner ``` closes the outer fence in CommonMark, and the README is cut short;
- a block left unclosed, so the next "**b.py**" and its ```python fence land inside it;
- the name alone inside a fence (```python / src/main.py / ```) with the code after it,
  outside, up to the next bare ```.
Each repair rewrites fence lines only, line for line where it can, so the lines the
answer's blocks are reported at stay the answer's; each is told in a note.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verifybot_tui.core.answers.hints import raw_names

# Above this size an answer is machine output, not a person's: it is read as written.
REPAIR_UP_TO = 1 << 20
_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})[ \t]*([^`\n]*?)[ \t]*$")
_MARKDOWN_INFO = frozenset({"markdown", "md", "mdx", "readme"})


@dataclass
class _Line:
    indent: str
    fence: str
    info: str


def _fence_at(line: str) -> _Line | None:
    if line[:4].lstrip(" ")[:1] not in ("`", "~"):
        return None  # most lines: no regex (a 66 KB block is 4,000 lines)
    m = _FENCE_RE.match(line)
    if not m:
        return None
    return _Line(m.group(1), m.group(2), m.group(3).strip())


def _closes(line: _Line | None, opening: _Line) -> bool:
    return (line is not None and not line.info and line.fence[0] == opening.fence[0]
            and len(line.fence) >= len(opening.fence))


def _names_a_file(line: str) -> str | None:
    names = raw_names(line.strip())
    return names[0] if len(names) == 1 and len(line.split()) <= 8 else None


def repair_fences(markdown: str) -> tuple[str, list[str]]:
    """The answer with its broken fences mended, and a note for each mend."""
    if len(markdown) > REPAIR_UP_TO or ("```" not in markdown and "~~~" not in markdown):
        return markdown, []
    lines = markdown.split("\n")
    notes: list[str] = []
    i = 0
    while i < len(lines):
        opening = _fence_at(lines[i])
        if opening is None:
            i += 1
            continue
        if _name_only_fence(lines, i, opening, notes):
            continue  # lines i.. now hold the name, then a proper fence: read them again
        i = max(_read_body(lines, i, opening, notes), i + 1)  # always onwards
    return "\n".join(lines), notes


def _name_only_fence(lines: list[str], i: int, opening: _Line, notes: list[str]) -> bool:
    """```python / src/main.py / ``` then the code outside: the fence is the name's."""
    if i + 3 >= len(lines):
        return False
    name = _names_a_file(lines[i + 1])
    after = lines[i + 3]
    if (name is None or not _closes(_fence_at(lines[i + 2]), opening) or not after.strip()
            or _fence_at(after) is not None):
        return False
    lines[i], lines[i + 1], lines[i + 2] = name, "", (
        f"{opening.indent}{opening.fence}{opening.info}")
    notes.append(f"the fence at line {i + 1} held only the name {name}, with the code "
                 "after it outside: read as the code of that file")
    _end_before_closing_words(lines, i + 3, opening)
    return True


_CLOSING_WORDS_RE = re.compile(r"[A-Za-z][A-Za-z ,.'!-]*[.!]?")


def _end_before_closing_words(lines: list[str], start: int, opening: _Line) -> None:
    """The code after a name-only fence runs to the next bare fence; with none, the
    answer's closing sentence ("this concludes a fully working implementation") after
    the last blank line is prose, not the file's last line."""
    j = start
    while j < len(lines):
        if _fence_at(lines[j]) is not None:
            return
        j += 1
    end = len(lines)
    while end > start and not lines[end - 1].strip():
        end -= 1
    last = [k for k in range(start, end) if not lines[k].strip()]
    if not last:
        return
    tail = " ".join(ln.strip() for ln in lines[last[-1] + 1:end]).strip()
    if len(tail.split()) >= 4 and _CLOSING_WORDS_RE.fullmatch(tail):
        lines[last[-1]] = f"{opening.indent}{opening.fence}"


_SEARCH_RE = re.compile(r"^\s*<{5,9}\s*SEARCH\b")
_REPLACE_RE = re.compile(r"^\s*>{5,9}\s*REPLACE\b")


def _edit_fence(lines: list[str], i: int, opening: _Line, notes: list[str]) -> int | None:
    """A SEARCH/REPLACE edit runs to its ``>>>>>>> REPLACE`` whatever fences its parts
    hold (a README's ```bash examples); its fence closes after that. The line after it,
    or None when the fence at ``i`` holds no edit."""
    head = [k for k in (i + 1, i + 2) if k < len(lines)]
    if not any(_SEARCH_RE.match(lines[k]) for k in head):
        return None
    k = i + 1
    while k < len(lines) and not _REPLACE_RE.match(lines[k]):
        k += 1
    if k >= len(lines):
        return None  # no REPLACE marker: not an edit to read whole
    while k + 1 < len(lines) and any(_SEARCH_RE.match(lines[m]) for m in (k + 1, k + 2)
                                     if m < len(lines)):  # the next edit in the same fence
        k += 1
        while k < len(lines) and not _REPLACE_RE.match(lines[k]):
            k += 1
    inner = [m for m in range(i + 1, min(k, len(lines))) if _fence_at(lines[m]) is not None]
    j = k + 1
    while j < len(lines) and not _closes(_fence_at(lines[j]), opening):
        if lines[j].strip():
            return None  # no closing fence right after the edit: read it as written
        j += 1
    if k >= len(lines) or j >= len(lines) or not inner:
        return None if not inner else j + 1
    longest = max(len(_fence_at(lines[m]).fence) for m in inner)  # type: ignore[union-attr]
    fence = opening.fence[0] * max(longest + 1, len(opening.fence))
    lines[i] = f"{opening.indent}{fence}{opening.info}"
    lines[j] = f"{_fence_at(lines[j]).indent}{fence}"  # type: ignore[union-attr]
    notes.append(f"the edit in the block at line {i + 1} holds fences of its own: read whole, "
                 f"to its closing fence at line {j + 1}")
    return j + 1


def _read_body(lines: list[str], i: int, opening: _Line, notes: list[str]) -> int:
    """Walk a fence's body from line ``i``; mend it; return the line after it."""
    if (after := _edit_fence(lines, i, opening, notes)) is not None:
        return after
    markdown_fence = opening.info.lower() in _MARKDOWN_INFO or (
        not opening.info and _after_markdown_name(lines, i))
    depth = nested = 0
    longest = len(opening.fence)
    j = i + 1
    while j < len(lines):
        line = _fence_at(lines[j])
        if line is not None and line.fence[0] == opening.fence[0]:
            if line.info and len(line.fence) < len(opening.fence) + 1:
                if markdown_fence:
                    depth += 1
                    nested += 1
                    longest = max(longest, len(line.fence))
                elif (cut := _unclosed_before(lines, i, j)) is not None:
                    closing = f"{opening.indent}{opening.fence}"
                    if not lines[cut - 1].strip():
                        lines[cut - 1] = closing  # the blank line before the name
                        shifted = ""
                    else:
                        lines.insert(cut, closing)
                        shifted = " (the lines after it are one further down)"
                    notes.append(f"the code block at line {i + 1} was not closed before the "
                                 f"next file's block at line {j + 1}: read as closed before "
                                 f"that file's name{shifted}")
                    return cut
            elif _closes(line, opening):
                if depth:
                    depth -= 1
                else:
                    break
        j += 1
    if j >= len(lines) or not nested:
        return j + 1
    fence = opening.fence[0] * (longest + 1)
    lines[i] = f"{opening.indent}{fence}{opening.info}"
    lines[j] = f"{_fence_at(lines[j]).indent}{fence}"  # type: ignore[union-attr]
    notes.append(f"the markdown block at line {i + 1} holds fenced blocks of its own: "
                 f"read whole, to its closing fence at line {j + 1}")
    return j + 1


def _after_markdown_name(lines: list[str], i: int) -> bool:
    """Whether the untagged fence at ``i`` follows a name such as **README.md**."""
    k = i - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    name = _names_a_file(lines[k].lstrip("#").strip()) if k >= 0 else None
    return bool(name) and name.lower().endswith((".md", ".markdown"))  # type: ignore[union-attr]


def _unclosed_before(lines: list[str], start: int, j: int) -> int | None:
    """Where an unclosed block ends, when the fence at ``j`` opens the next file: the
    line of the name ("**b.py**", "### b.py") between a blank line and that fence."""
    k = j - 1
    while k > start and not lines[k].strip():
        k -= 1
    if k <= start + 1 or _names_a_file(lines[k].lstrip("#").strip()) is None:
        return None  # a name right under the opening fence: no body to close before it
    first = k
    while first - 1 > start and lines[first - 1].strip() and first > k - 2:
        first -= 1
    return first if first > start + 1 else None  # a body line must stay in the block
