"""A block with elisions ("# ... rest unchanged", "// ... existing code ...") merged
into the file it abbreviates, when its anchors say where unambiguously.

An elision stands for the file's lines between the line before it and the line
after it; those lines (one, or up to three when one is not enough to be unique)
must be in the file once and in order. A block that starts without an elision
may start the file with changed lines; lines the block does not show before its
first anchor or after its last one stay. Anything else is a problem told to the LLM, never a guess.
"""

from __future__ import annotations

import re

_COMMENT_RE = re.compile(r"^\s*(?:#|//|/\*+|<!--|--|;|\{/\*)\s*(?P<t>.*?)\s*(?:\*+/\}?|-->)?\s*$")
_WORDS_RE = re.compile(
    r"\b(?:rest|remaining|other|existing|unchanged|same|previous|omitted|original|"
    r"as before|keep|kept|more)\b", re.I)
_DOTS_RE = re.compile(r"\.\.\.|…")
_NOT_BARE = frozenset({"", "python", "text", "plaintext", "txt", "markdown", "md", "console",
                       "output", "bash", "sh", "shell", "yaml", "json"})


def is_elision(line: str, language: str = "") -> bool:
    """Whether ``line`` stands for lines left out: a comment of dots and "rest
    unchanged" words, or (outside Python) a bare ``...``."""
    stripped = line.strip()
    if stripped in ("...", "…"):  # Python's Ellipsis; the dots of sample output
        return language not in _NOT_BARE
    m = _COMMENT_RE.match(line)
    if not m:
        return False
    said = m.group("t").strip("() ")
    if not said or not _DOTS_RE.search(said) and not _WORDS_RE.search(said):
        return False
    if _DOTS_RE.fullmatch(said.replace(" ", "")) or _DOTS_RE.sub("", said).strip() == "":
        return True
    words = _DOTS_RE.sub(" ", said)
    return bool(_WORDS_RE.search(words)) and (
        bool(_DOTS_RE.search(said)) or bool(re.search(
            r"\b(?:unchanged|as before|same as before|stays? the same|omitted)\b", said, re.I)))


_MARKS = ("...", "…", "unchanged", "as before", "omitted", "the same")


def has_elisions(code: str, language: str = "") -> bool:
    """Whether a line of ``code`` is an elision (str tests first: a 7 MB block has
    none of the words, and its lines are not read one by one)."""
    low = code.lower()
    if not any(mark in low for mark in _MARKS):
        return False
    return any(elision_lines(code, language))


_QUOTES = {"python": ('"""', "'''"), "javascript": ("`",), "typescript": ("`",),
           "jsx": ("`",), "tsx": ("`",)}


def elision_lines(code: str, language: str = "") -> list[bool]:
    """For each line of ``code``, whether it is an elision: not inside a multi-line
    string (a prompt template in a JS file holding ``// ...`` is the file's text)."""
    quotes = _QUOTES.get(language, ())
    inside = ""
    out = []
    for line in code.rstrip("\n").split("\n"):
        out.append(not inside and any(m in line.lower() for m in _MARKS)
                   and is_elision(line, language))
        for q in quotes:
            if (line.replace("\\" + q[0], "").count(q) % 2) and inside in ("", q):
                inside = "" if inside else q
    return out


def merge(text: str, code: str, language: str, path: str) -> tuple[str | None, str]:
    """``text`` with ``code`` merged in: (new text, "") or (None, why not)."""
    orig = text.split("\n")
    if orig and orig[-1] == "":
        orig.pop()
    parts: list[list[str]] = [[]]
    lines = code.rstrip("\n").split("\n")
    for line, elided in zip(lines, elision_lines(code, language), strict=True):
        if elided:
            parts.append([])
        else:
            parts[-1].append(line)
    segments = [_trim(p) for p in parts]
    out: list[str] = []
    pos = 0  # the first line of ``orig`` not yet taken or covered
    last = len(segments) - 1
    for k, seg in enumerate(segments):
        if not seg:
            continue  # an elision at the start or end, or two in a row
        begin = _find(orig, seg[:3], pos, from_start=True)
        if begin is None and k == 0:
            begin = 0  # the block starts the file, changed from its first line
        if begin is None or begin < 0:
            return None, _where(path, seg[0], begin == -2)
        end = _find(orig, seg[-3:], begin, from_start=False)
        if end is None and k == last and orig and _same(seg[-1], orig[-1]):
            end = len(orig) - 1
        if end is None or end < 0:
            return None, _where(path, seg[-1], end == -2)
        out += orig[pos:begin]  # what the elision before it stands for (or lines not shown)
        out += seg
        pos = end + 1
    out += orig[pos:]
    return "\n".join(out) + "\n", ""


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _same(a: str, b: str) -> bool:
    return a.strip() == b.strip()


def _find(orig: list[str], anchor: list[str], lo: int, from_start: bool) -> int | None:
    """Where the segment's first lines (``from_start``) or last lines are in ``orig``
    from ``lo`` on: the index of its first (or last) line; None when not there, -2
    when in several places even with three lines."""
    for n in range(1, len(anchor) + 1):
        lines = anchor[:n] if from_start else anchor[-n:]
        if not "".join(ln.strip() for ln in lines):
            continue
        hits = [i for i in range(lo, len(orig) - n + 1)
                if all(_same(orig[i + j], lines[j]) for j in range(n))]
        if len(hits) == 1:
            return hits[0] if from_start else hits[0] + n - 1
        if not hits:
            return None
    return -2


def _where(path: str, line: str, several: bool) -> str:
    shown = line.strip()[:60]
    if several:
        return (f"the lines around its `...` are in {path} in several places "
                f"(`{shown}`), so it is not clear where the block goes")
    return f"the line `{shown}` next to its `...` is not in {path}"
