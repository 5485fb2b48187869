"""Program output reaching the terminal keeps its colours and loses every other control."""

from __future__ import annotations

import pytest

from verifybot_tui.core.base.ansi import sanitize, sanitize_line

HOSTILE = [
    ("\x1b]0;pwned title\x07", "OSC title"),
    ("\x1b]52;c;cm0gLXJmIH4=\x1b\\", "OSC 52 clipboard write"),
    ("\x1b[?1049h", "alternate screen"),
    ("\x1b[2J\x1b[H", "clear and home"),
    ("\x1b[10;10H", "cursor move"),
    ("\x1bPq#0;2;0;0;0\x1b\\", "DCS sixel"),
    ("\x9b31m", "8-bit CSI"),
    ("\x1b[6n", "device status query"),
    ("\x07\x08\x00", "bell, backspace, NUL"),
    ("\x1b]8;;http://x\x1b\\", "hyperlink"),
]


@pytest.mark.parametrize(("seq", "what"), HOSTILE)
def test_controls_are_removed_in_a_stream(seq: str, what: str) -> None:
    out = sanitize(f"before {seq}after\n")
    assert out == "before after\n", what
    assert "\x1b" not in out and "\x9b" not in out


def test_colours_line_breaks_and_carriage_returns_are_kept_in_a_stream() -> None:
    text = "\x1b[31mred\x1b[0m\tcol\r\nnext\rover\n"
    assert sanitize(text) == text
    assert sanitize(text, keep_colours=False) == "red\tcol\r\nnext\rover\n"


def test_a_sequence_cut_at_the_end_is_removed() -> None:
    assert sanitize("ok\x1b]0;half a tit") == "ok"
    assert sanitize("ok\x1b[12") == "ok"


def test_a_line_is_shown_as_a_terminal_would() -> None:
    assert sanitize_line("10%\r50%\r100%") == "100%"
    assert sanitize_line("a\tb") == "a       b"
    assert sanitize_line("\x1b[1mbold\x1b[0m\x1b[2K") == "\x1b[1mbold\x1b[0m"
    assert sanitize_line("plain") == "plain"
