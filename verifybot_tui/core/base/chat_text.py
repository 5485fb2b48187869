"""Text as a chat box will take it: quoted exactly, and short enough to read.

The loop's prompts and the LLM judge's prompt both quote program output, compiler
messages and code to a chat UI. What they quote reaches the LLM byte for byte
(``sum(v**2 ...)`` stays ``**``, a traceback's ``~~~~^~~~`` stays): the LLM must
see the code and the errors that really ran. Where the chat box would turn it into
formatting, it is put in a fence (longer than any backtick run inside it), which
every chat box shows and sends as it is. The shaping lives here, below both.
"""

from __future__ import annotations

import re

HEAD_LINES = 40
TAIL_LINES = 60
MAX_CHARS = 6000


def flatten(markdown: str) -> str:
    """The probe's markdown (our own text, not the program's) as plain lines: headings
    become 'Title:', bold goes."""
    text = re.sub(r"^#+\s*(.*?)\s*$",
                  lambda m: m.group(1) if ":" in m.group(1) else m.group(1) + ":",
                  markdown.strip(), flags=re.M)
    return text.replace("**", "")


def quoted(text: str, info: str = "text") -> str:
    """``text`` in a fenced block, unchanged: the fence is longer than any run of
    backticks in it, so no line of the text can close it, and nothing inside is
    formatting. The text between the fence lines is ``text`` byte for byte."""
    longest = max((len(m.group()) for m in re.finditer(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def unquoted(block: str) -> str:
    """What :func:`quoted` quoted (for tests and readers of a prompt)."""
    first, _, rest = block.partition("\n")
    fence = first[:len(first) - len(first.lstrip("`"))]
    return rest[:-(len(fence) + 1)] if rest.endswith("\n" + fence) else rest


def head_tail(text: str, head: int = HEAD_LINES, tail: int = TAIL_LINES,
              max_chars: int = MAX_CHARS) -> str:
    """Keep the start and the end of a long output, with a note of what was cut."""
    lines = text.splitlines()
    if len(lines) > head + tail:
        cut = len(lines) - head - tail
        lines = [*lines[:head], f"[... {cut} lines cut ...]", *lines[-tail:]]
    out = "\n".join(lines)
    if len(out) > max_chars:
        half = max_chars // 2
        out = (f"{out[:half]}\n[... {_real_cut(out[half:len(out) - half])} characters cut "
               f"...]\n{out[-half:]}")
    return out


_CUT_NOTE = re.compile(r"\n?\[\.\.\. (\d+) characters cut \.\.\.\]\n?")


def _real_cut(removed: str) -> int:
    """Characters of the program's output in ``removed``, counting those an earlier
    cut (the target's capture) already left out, so the note tells the real size."""
    earlier = sum(int(m.group(1)) for m in _CUT_NOTE.finditer(removed))
    return len(_CUT_NOTE.sub("", removed)) + earlier
