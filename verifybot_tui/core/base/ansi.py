"""Making program output safe to show: colours may pass, nothing else may.

Program output is untrusted bytes. Colour (SGR) sequences are fine to render;
cursor moves, screen clears, title changes, OSC 52 clipboard writes, the
alternate screen, device queries and C1 controls must never reach the user's
terminal (the CLI) or a widget (the TUI), where they would garble the layout
or act on the user's machine. One implementation serves both front ends.
"""

from __future__ import annotations

import re

# One pass over every escape form; SGR is told apart in the callback. A sequence
# cut off by the end of the text is removed up to that end.
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
# Controls left after the escapes are gone: C0 but TAB/LF/CR, C1, DEL (a stream
# keeps line breaks and carriage returns; a single line keeps only TAB).
_CONTROL_STREAM = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f]")
_CONTROL_LINE = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]")
# Anything that needs work; most output has none of it.
_SPECIAL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_C1_OR_ESC = re.compile(r"[\x1b\x80-\x9f]")


def _keep_sgr(match: re.Match[str]) -> str:
    text = match.group(0)
    return text if _SGR.fullmatch(text) else ""


def sanitize(text: str, *, keep_colours: bool = True) -> str:
    """A chunk of a stream with every control sequence removed but colours (if kept)."""
    if not _SPECIAL.search(text):
        return text
    if _C1_OR_ESC.search(text):
        text = _ESCAPE.sub(_keep_sgr if keep_colours else "", text)
    return _CONTROL_STREAM.sub("", text)


def sanitize_line(line: str) -> str:
    """One line (no newline) with only SGR escapes left, as a terminal would show it.

    A carriage return starts the line over (progress bars), so only what comes
    after the last one that is followed by text is kept.
    """
    if not _SPECIAL.search(line) and "\t" not in line:
        return line
    if "\r" in line:
        parts = [p for p in line.split("\r") if p]
        line = parts[-1] if parts else ""
    if _C1_OR_ESC.search(line):
        line = _ESCAPE.sub(_keep_sgr, line)
    line = _CONTROL_LINE.sub("", line)
    return line.expandtabs(8) if "\t" in line else line


def strip_sgr(line: str) -> str:
    """The visible characters of a sanitized line."""
    return _SGR.sub("", line)


# Invisible characters that change how text reads: bidi overrides and isolates,
# zero-width characters, the BOM. In a name they can disguise what it is.
_SHOWN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u202a-\u202e"
                    r"\u2060-\u2069\ufeff]")


def _escaped(match: re.Match[str]) -> str:
    ch = match.group(0)
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def visible(text: str, *, newlines: bool = True) -> str:
    """Text from outside (a program, a file name, an LLM) made safe for any terminal
    or file a person reads with ``cat``: every control or invisible format character
    is shown escaped (``\\x1b``, ``\\u202e``) instead of acting. Newlines and tabs
    are kept unless ``newlines`` is false (one-line texts: verdicts, names)."""
    if newlines:
        return _SHOWN.sub(_escaped, text)
    return _SHOWN.sub(_escaped, text.replace("\n", "\\n").replace("\t", " "))


def one_line(text: str) -> str:
    """A one-line text from outside for a status line, toast or listing."""
    return visible(text, newlines=False)


# How VerifyBot's own lines start (the CLI's "[verifybot] ..." and "verifybot: ...",
# the output pane's "── attempt N ──" rules). A program line that starts the same way
# imitates them (a forged "[verifybot] VERIFIED"): both front ends show it marked as
# the program's. Compared on the visible text: colours, invisible characters and
# look-alike letters (full-width, NFKC-folded) do not hide it.
_OWN_LINE = re.compile(r"(?:\[\s*verifybot\s*\]|verifybot\s*:|──)", re.IGNORECASE)
PROGRAM_MARK = "[program] "


def _folded(text: str) -> str:
    import unicodedata

    text = _SHOWN.sub("", _SGR.sub("", text))
    return unicodedata.normalize("NFKC", text).lstrip(" \t") if not text.isascii() else \
        text.lstrip(" \t")


def imitates_verifybot(line: str) -> bool:
    """Whether a program's (sanitized) line starts like one of VerifyBot's own."""
    return bool(_OWN_LINE.match(_folded(line)))


def may_imitate_verifybot(head: str) -> bool:
    """Whether the start of a line, still incomplete, could become an imitation."""
    folded = _folded(re.sub(r"\x1b(?:\[[0-9;:]*)?$", "", head)).lower()  # a cut colour too
    return any(own.startswith(folded) for own in ("[verifybot]", "verifybot:", "──"))
