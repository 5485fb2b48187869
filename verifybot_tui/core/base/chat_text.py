"""Text as a chat box will take it: plain, and short enough to read.

The loop's prompts and the LLM judge's prompt both send program output and
probe text to a chat UI that turns fences, headings and bold into formatting
and chokes on floods, so the shaping lives here, below both of them.
"""

from __future__ import annotations

import re

HEAD_LINES = 40
TAIL_LINES = 60
MAX_CHARS = 6000


def flatten(markdown: str) -> str:
    """The probe's markdown as plain lines: headings become 'Title:', bold goes."""
    text = re.sub(r"^#+\s*(.*?)\s*$",
                  lambda m: m.group(1) if ":" in m.group(1) else m.group(1) + ":",
                  markdown.strip(), flags=re.M)
    return plain(text)


def plain(text: str) -> str:
    """Neutralise what the chat box would turn into formatting."""
    text = text.replace("```", "'''").replace("~~~", "---").replace("**", "*")
    return re.sub(r"^(\s{0,3})(#+)(\s)", r"\1\\\2\3", text, flags=re.M)


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
