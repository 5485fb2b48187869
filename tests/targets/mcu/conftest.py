"""The mcu targets a test of this folder makes: closed after it, and no emulator left."""

from __future__ import annotations

import pytest
from mcu_fixtures import mcu_config, qemu_pids
from project import need

from verifybot_tui.targets import make_target

TOOLS = {"cortex-m": ("arm-none-eabi-gcc", "qemu-system-arm"), "avr": ("avr-gcc",
                                                                        "qemu-system-avr")}
AVR_BOARDS = ("arduino-uno",)


@pytest.fixture
async def mcu(tmp_path):
    """``mcu(board)``: an mcu target on that board (its toolchain and QEMU needed), in this
    test's workspace."""
    made = []

    def build(board: str):  # type: ignore[no-untyped-def]
        need(*TOOLS["avr" if board in AVR_BOARDS else "cortex-m"])
        t = make_target(mcu_config(board), "board", tmp_path / "ws")
        made.append(t)
        return t

    yield build
    for t in made:
        await t.close()
    assert qemu_pids(tmp_path / "ws") == []
