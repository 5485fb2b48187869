"""Rendering sanitized program output as Rich Text (the sanitizing is core's)."""

from __future__ import annotations

from rich.text import Text

from verifybot_tui.core.base.ansi import sanitize_line, strip_sgr

__all__ = ["render_line", "sanitize_line", "strip_sgr"]


def render_line(line: str, style: str = "") -> Text:
    """A sanitized line as Rich Text, colours applied, optionally under a base style."""
    text = Text.from_ansi(line, no_wrap=True, end="") if "\x1b" in line else Text(line, end="")
    if style:
        text.stylize_before(style)
    return text
