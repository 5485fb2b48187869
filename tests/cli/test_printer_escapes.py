"""A colour sequence cut between two chunks (a UART's bytes arrive a few at a time) is
printed whole, never as a stray ``1m``."""

from __future__ import annotations

import asyncio

import pytest

from verifybot_tui.cli.printer import Printer
from verifybot_tui.core.loop.events import Output


def test_a_colour_sequence_split_across_chunks_comes_out_whole(
        capsys: pytest.CaptureFixture[str]) -> None:
    printer = Printer(json_mode=False, stdin=None)  # type: ignore[arg-type]

    async def feed() -> None:
        for chunk in ("temp \x1b[3", "1mHOT\x1b", "[0m ok\n"):
            await printer.on_output(Output(stream="stdout", text=chunk))

    asyncio.run(feed())
    out = capsys.readouterr().out
    assert out == "temp \x1b[31mHOT\x1b[0m ok\n", repr(out)
    assert "1mHOT" not in out.replace("\x1b[31mHOT", "")
