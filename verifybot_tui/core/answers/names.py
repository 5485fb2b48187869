"""An answer's file names made safe: nothing it names may leave the run folder.

Names from an answer are untrusted input, so every one goes through
:func:`confine_name` before it can name a file under ``programs/``.
"""

from __future__ import annotations

import re

_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)
_PORTABILITY_BAD = set('<>:"|?*')
_MAX_COMPONENT_BYTES = 255
_MAX_NAME_CHARS = 1024


def _shown(name: str, limit: int = 80) -> str:
    """A name safe to print: control characters escaped, long names shortened."""
    out = "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
        for c in name)
    return out if len(out) <= limit else out[: limit - 3] + "..."


def confine_name(name: str) -> tuple[str | None, str]:
    """Make an answer's file name safe to create under ``programs/``.

    Returns ``(relative posix name, "")`` or ``(None, reason)``. Nothing is
    repaired silently except harmless spelling (``./``, doubled slashes,
    backslashes): a name that tries to leave the folder is refused outright.
    """
    raw = name.strip().strip("`'\"")
    if not raw.strip():
        return None, "it is empty"
    if any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in raw):
        return None, "it holds control characters"
    if len(raw) > _MAX_NAME_CHARS:
        return None, f"it is longer than {_MAX_NAME_CHARS} characters"
    path = raw.replace("\\", "/")
    if re.match(r"^[A-Za-z]:", path):
        return None, "it names a drive: it leaves programs/"
    if path.startswith("/"):
        return None, "it is an absolute path: it leaves programs/"
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        return None, "it names no file"
    if parts[0].startswith("~"):
        return None, "it starts with ~ (a home folder): it leaves programs/"
    for part in parts:
        if part == "..":
            return None, "it leaves programs/"
        if set(part) == {"."}:
            return None, f"'{part}' is not a file name"
        if len(part.encode("utf-8")) > _MAX_COMPONENT_BYTES:
            return None, f"a part is longer than {_MAX_COMPONENT_BYTES} bytes"
        if _PORTABILITY_BAD & set(part):
            return None, "it holds characters not allowed in file names (<>:\"|?*)"
        stem = part.split(".")[0].rstrip(" ").lower()
        if stem in _WINDOWS_RESERVED:
            return None, f"{stem.upper()} is a reserved device name on Windows"
    return "/".join(parts), ""
