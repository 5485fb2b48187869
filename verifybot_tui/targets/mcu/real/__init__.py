"""Real boards: firmware flashed with a tool and read on a serial port, not emulated.

A board plugged in here or into the Pi (``backend = "probe"``: probe.py, with the
small helper it runs where the board is, board_helper.py) and a farm's place
(``backend = "labgrid"``: ../farm) flash the same way (flash.py) and end with
the same verdict from the UART (verdict.py). ``BoardSide`` is what they need of
the mcu target, so none of them imports it back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from verifybot_tui.core.base.ports import Target
    from verifybot_tui.core.settings.config import TargetConfig
    from verifybot_tui.targets.local.target import LocalTarget
    from verifybot_tui.targets.mcu.boards import Board


class BoardSide(Protocol):
    """What a run on a real board needs of the mcu target: the board, its settings, this
    machine's runner (the flash tool, the helper) and the machine the board hangs on."""

    @property
    def board(self) -> Board: ...

    @property
    def config(self) -> TargetConfig: ...

    @property
    def local(self) -> LocalTarget: ...

    @property
    def via(self) -> Target | None: ...
