"""The answer as markdown-it reads it: prose and fences in order, with their lines.

Fences are parsed by markdown-it (CommonMark), never by regexes: regexes get nested
fences, tildes, list indentation and unclosed fences wrong. Big answers have their
fence bodies and inert prose cut out first, so the parse costs what the hints need.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.token import Token

from verifybot_tui.core.answers.hints import Prose, may_name


@dataclass
class Fence:
    """A fenced block's token, its first line, and whether its fence was closed."""

    token: Token
    line: int
    closed: bool


def walk_items(markdown: str, md: MarkdownIt, offset: int = 0) -> list[Prose | Fence]:
    """Prose (paragraphs, headings) and fences in document order, lines absolute."""
    bodies: dict[int, tuple[int, str]] = {}
    prose_cuts: dict[int, int] = {}
    if offset == 0 and len(markdown) > COLLAPSE_ABOVE:
        markdown, bodies = collapse_fences(markdown)
        markdown, prose_cuts = collapse_prose(markdown)
    to_cut = line_mapper({at: (taken, "") for at, taken in prose_cuts.items()})
    in_cut = line_mapper(bodies)

    def line_of(n: int) -> int:
        return in_cut(to_cut(n))
    lines = markdown.split("\n")
    items: list[Prose | Fence] = []
    tokens = md.parse(markdown)
    lists: list[int] = []  # the lists the walk is in: a list's files are read in its order
    for i, tok in enumerate(tokens):
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            lists.append(i + offset * 1_000_003)
        elif tok.type in ("bullet_list_close", "ordered_list_close") and lists:
            lists.pop()
        elif tok.type == "inline" and i > 0 and tokens[i - 1].type in (
                "paragraph_open", "heading_open"):
            start = line_of((tok.map or tokens[i - 1].map or [0])[0]) + offset + 1
            items.append(Prose(tok, start, tokens[i - 1].type == "heading_open", md,
                                lists[0] if lists else None))
        elif tok.type == "fence":
            assert tok.map is not None
            end_line = lines[tok.map[1] - 1] if tok.map[1] - 1 < len(lines) else ""
            closing = end_line.lstrip(" \t>").strip()
            closed = (tok.map[1] - tok.map[0] >= 2 and closing.startswith(tok.markup)
                      and not closing.strip(tok.markup[0]))
            if to_cut(tok.map[0]) in bodies:
                tok.content = bodies[to_cut(tok.map[0])][1]
            items.append(Fence(tok, line_of(tok.map[0]) + offset + 1, closed))
        elif tok.type == "code_block" and tok.map is not None:
            # A fence indented too far (inside a list, say) arrives as indented code.
            if re.match(r"^(```|~~~)", tok.content.lstrip(" ")):
                items.extend(walk_items(tok.content, md, offset + line_of(tok.map[0])))
    return items


# Above this many characters, the bodies of fences that start a line are cut out
# before markdown-it parses the answer: its block parser keeps several Python
# ints per line, which for a 50 MB answer of code is most of a gigabyte.
COLLAPSE_ABOVE = 1 << 20
_OPEN_FENCE_RE = re.compile(r"^(`{3,}|~{3,})([^\n]*)$", re.M)


def collapse_fences(markdown: str) -> tuple[str, dict[int, tuple[int, str]]]:
    """The answer with the body of each fence at column 0 taken out, and the bodies:
    {line of the opening fence in the cut text: (lines taken out, body)}.

    A fence at column 0 is a fence wherever it stands (it ends a paragraph or a
    list, and is never a lazy continuation), so the cut text parses to the same
    blocks; the one case that differs, a fence line inside a raw HTML block,
    only shows in huge answers. Bodies are restored into the fence tokens.
    """
    out: list[str] = []
    bodies: dict[int, tuple[int, str]] = {}
    pos = 0  # how much of the answer is copied to ``out``
    line = 0  # lines in ``out``
    at = 0
    while (m := _OPEN_FENCE_RE.search(markdown, at)) is not None:
        fence, info = m.group(1), m.group(2)
        body_start = m.end() + 1
        if (fence[0] == "`" and "`" in info) or body_start > len(markdown):
            at = m.end() + 1
            continue
        close = _closing_fence(markdown, fence, body_start)
        body_end = close[0] if close else len(markdown)
        body = markdown[body_start:body_end]
        opening = line + markdown.count("\n", pos, m.start())
        out.append(markdown[pos:body_start])
        line = opening + 1
        taken = body.count("\n") + (1 if body and not body.endswith("\n") else 0)
        if body:
            bodies[opening] = (taken, body.replace("\0", "\ufffd"))
        pos = body_end
        if close is None:
            break
        at = close[1]
    out.append(markdown[pos:])
    return "".join(out), bodies


def _inert_paragraph(lines: list[str]) -> bool:
    """Lines that can only be a plain paragraph naming no file: each starts with a
    letter (no list, quote, heading, fence, HTML or setext line can) and none may
    name a file (may_name)."""
    return all(line[:1].isascii() and line[:1].isalpha() and not may_name(line)
               for line in lines)


def collapse_prose(text: str) -> tuple[str, dict[int, int]]:
    """The answer with each run of inert paragraphs but its last cut to one line "x",
    and the cuts: {line of that "x" in the cut text: lines taken out after it}.

    Such paragraphs give no hint and no command; only the one nearest a block is
    ever read for its text (sample output?) or its place (the nearest prose), and
    that one is the run's last, kept whole. A paragraph after a blank line that
    starts with a letter at column 0 ends any list or quote before it, so the cut
    text parses to the same blocks, fewer of them inert: 50 MB of prose costs the
    block parser a few lines, not 50 MB (issue 22).
    """
    lines = text.split("\n")
    groups: list[tuple[int, int, bool]] = []  # (first, last + 1, inert) of non-blank runs
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        groups.append((i, j, _inert_paragraph(lines[i:j])))
        i = j
    out: list[str] = []
    cuts: dict[int, int] = {}
    copied = 0  # lines of ``lines`` already in ``out``
    g = 0
    while g < len(groups):
        h = g
        while h < len(groups) and groups[h][2]:
            h += 1
        if h - g >= 2:  # groups g .. h-2 become one "x"; h-1, the run's last, stays
            first, end = groups[g][0], groups[h - 2][1]
            out += lines[copied:first]
            cuts[len(out)] = end - first - 1
            out.append("x")
            copied = end
        g = max(h, g + 1)
    out += lines[copied:]
    return "\n".join(out), cuts


def _closing_fence(markdown: str, fence: str, start: int) -> tuple[int, int] | None:
    """(start, end) of the line closing ``fence`` from ``start`` on: up to 3 spaces, at
    least as many of the fence's character, nothing else (found by str.find: fast)."""
    at = start
    while (i := markdown.find(fence, at)) != -1:
        line_start = markdown.rfind("\n", 0, i) + 1
        line_end = markdown.find("\n", i)
        line_end = len(markdown) if line_end == -1 else line_end
        lead = markdown[line_start:i]
        if len(lead) <= 3 and not lead.strip(" ") and line_start >= start:
            if not markdown[i:line_end].rstrip(" \t").strip(fence[0]):
                return line_start, line_end
        at = line_end + 1
    return None


def line_mapper(bodies: dict[int, tuple[int, str]]) -> Callable[[int], int]:
    """Line in the cut text -> line in the answer (lines after a cut body move down)."""
    if not bodies:
        return lambda n: n
    starts = sorted(bodies)
    shift = list(itertools.accumulate(bodies[o][0] for o in starts))

    def line_of(n: int) -> int:
        k = bisect.bisect_left(starts, n)  # bodies whose opening line is before n
        return n + (shift[k - 1] if k else 0)
    return line_of
