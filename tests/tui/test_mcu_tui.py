"""The app with an mcu target: the switch key reaches it, the UART streams into the output pane."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcu_fixtures import SUM, qemu_pids
from project import need

from verifybot_tui.core.loop.events import RunStarted
from verifybot_tui.tui.messages import LoopEvent
from verifybot_tui.tui.widgets.output import OutputPane

pytestmark = pytest.mark.usefixtures("tui_env")


@pytest.fixture(autouse=True)
def _toolchain() -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")
WITH_BOARD = {"targets": {"stm32": {"kind": "mcu", "board": "netduinoplus2"}},
              "run": {"timeout": 5.0}}


async def test_the_switch_key_reaches_the_board_and_its_uart_shows_live(tui, tmp_path: Path):
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", SUM, lang="c")
    app = tui.make_app(ws, transcript, data=WITH_BOARD)
    started: list[RunStarted] = []

    def hook(message: object) -> None:
        if isinstance(message, LoopEvent) and isinstance(message.event, RunStarted):
            started.append(message.event)

    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "sum 1 to 10 on the board")
        await tui.wait_approval(pilot)
        await pilot.press("ctrl+t")
        await tui.wait_for(pilot, lambda: app.session.target_name == "stm32", what="the switch")
        await pilot.press("a")
        await tui.wait_idle(pilot)
        lines = tui.main(app).query_one(OutputPane).lines
        assert "sum=55" in lines and "PASSED" in lines
    assert [s.target for s in started] == ["stm32"]
    context = (ws / "context" / "stm32.md").read_text()
    assert "STM32F405RG" in context and "PASSED or FAILED" in context
    assert qemu_pids(ws) == []
