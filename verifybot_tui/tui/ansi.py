"""Program output is untrusted bytes headed for the user's real terminal.

Colours (SGR) are worth keeping, so they are rendered by Rich; every other
escape (cursor moves, screen clears, OSC titles and clipboard writes, the
alternate screen, device queries, C1 controls) is removed before any text
reaches a widget, because Textual would otherwise pass parts of it through
or garble the layout.
"""

from __future__ import annotations

import re

from rich.text import Text

# One pass over every escape form; SGR is told apart in the callback.
_ESCAPE = re.compile(
    r"""
    (?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*(?:[\x40-\x7e]|$)  # CSI ... final (or cut)
  | (?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c|$)                  # OSC ... BEL/ST (or cut)
  | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?(?:\x1b\\|\x9c|$)     # DCS SOS PM APC ... ST
  | \x1b[\x20-\x2f]*[\x30-\x7e]                               # other ESC sequences
  | \x1b                                                      # a lone ESC
    """,
    re.VERBOSE | re.DOTALL,
)
_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# C0 controls but TAB, C1 controls, DEL (ESC sequences are already gone).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]")
# Anything that needs work; most lines of a flood have none of it.
_SPECIAL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_C1_OR_ESC = re.compile(r"[\x1b\x80-\x9f]")


def _keep_sgr(match: re.Match[str]) -> str:
    text = match.group(0)
    return text if _SGR.fullmatch(text) else ""


def sanitize_line(line: str) -> str:
    """One line (no newline) with only SGR escapes left, as a terminal would show it.

    A carriage return starts the line over (progress bars), so only what comes
    after the last one that is followed by text is kept.
    """
    if not _SPECIAL.search(line):
        return line
    if "\r" in line:
        parts = [p for p in line.split("\r") if p]
        line = parts[-1] if parts else ""
    if _C1_OR_ESC.search(line):
        line = _ESCAPE.sub(_keep_sgr, line)
    line = _CONTROL.sub("", line)
    return line.expandtabs(8) if "\t" in line else line


def strip_sgr(line: str) -> str:
    """The visible characters of a sanitized line."""
    return _SGR.sub("", line)


def render_line(line: str, style: str = "") -> Text:
    """A sanitized line as Rich Text, colours applied, optionally under a base style."""
    text = Text.from_ansi(line, no_wrap=True, end="") if "\x1b" in line else Text(line, end="")
    if style:
        text.stylize_before(style)
    return text
