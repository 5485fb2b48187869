"""Making program output safe to show: colours may pass, nothing else may.

Program output is untrusted bytes. Colour (SGR) sequences are fine to render;
cursor moves, title changes, OSC 52 clipboard writes, the alternate screen and
every other control must never reach the user's terminal or confuse a widget.
"""

from __future__ import annotations

import re

_SGR = re.compile(r"\x1b\[[0-9;:]*m")
# CSI, OSC/DCS/PM/APC/SOS strings (ended by BEL or ST, or unterminated to the end),
# two-byte escapes, a lone ESC, C1 controls and C0 controls but tab, newline, CR.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\|$)"
    r"|\x1b[ -/]*[0-~]"
    r"|\x1b"
    r"|[\x80-\x9f]"
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"
)


def sanitize(text: str, *, keep_colours: bool = True) -> str:
    """Remove every control sequence; keep SGR colours when asked."""
    if "\x1b" not in text and not _has_controls(text):
        return text
    if not keep_colours:
        return _CONTROL.sub("", text)
    out, pos = [], 0
    for m in _CONTROL.finditer(text):
        out.append(text[pos:m.start()])
        if _SGR.fullmatch(m.group()):
            out.append(m.group())
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _has_controls(text: str) -> bool:
    return any(c < " " and c not in "\t\n\r" or "\x7f" <= c <= "\x9f" for c in text)
