"""What QEMU does not model, told per board: to the LLM in the board's context, and in the
run's notes when the firmware touched it; RAM past the chip's own faults as on the chip."""

from __future__ import annotations

import pytest
from mcu_fixtures import Recorder, mcu_config, qemu_pids, request
from project import need

from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets import make_target
from verifybot_tui.targets.mcu.boards import load_board
from verifybot_tui.targets.mcu.context import board_context

PAST_RAM = """\
#include <stdio.h>
#include <stdint.h>

int main(void)
{
    printf("writing past 128 KB\\n");
    *(volatile uint32_t *)0x20020100 = 7;  /* QEMU maps it; the STM32F405 has no RAM there */
    printf("PASSED\\n");
    return 0;
}
"""

RCC_WAIT = """\
#include <stdio.h>
#include <stdint.h>

#define RCC_CR (*(volatile uint32_t *)0x40023800)

int main(void)
{
    printf("starting the HSE\\n");
    RCC_CR |= 1u << 16;             /* HSEON */
    while (!(RCC_CR & (1u << 17))) {  /* HSERDY: QEMU never sets it */
    }
    printf("PASSED\\n");
    return 0;
}
"""

TIMER0_WAIT = """\
#include <avr/io.h>
#include <stdio.h>

int main(void)
{
    TCCR0B = 1 << CS00;
    printf("start\\n");
    while (TCNT0 < 100) {
    }
    printf("PASSED\\n");
    return 0;
}
"""


@pytest.fixture
async def make(tmp_path):
    made = []

    def build(board: str):
        t = make_target(mcu_config(board), "board", tmp_path / "ws")
        made.append(t)
        return t

    yield build
    for t in made:
        await t.close()
    assert qemu_pids(tmp_path / "ws") == []


@pytest.mark.parametrize("board, told", [
    ("arduino-uno", "the 8-bit timers Timer0 and Timer2 (they never count"),
    ("netduinoplus2", "RCC (its ready bits such as HSERDY and PLLRDY never set"),
])
def test_the_context_tells_what_the_emulator_does_not_model(board, told):
    assert told in board_context(load_board(board), backend="qemu", where="")


async def test_a_write_past_the_chips_ram_faults_as_on_the_chip(make):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    r = await make("netduinoplus2").run(request("past_ram_1", {"main.c": PAST_RAM}), Recorder())
    assert r.stdout == "writing past 128 KB\n"
    assert "data access violation (MemManage)" in r.diagnosis
    assert "at address 0x20020100 (past the end of the STM32F405RG's RAM at 0x20020000)" \
        in r.diagnosis
    assert "in main() (main.c:7)" in r.diagnosis
    assert not judge(r, []).ok


async def test_a_wait_on_an_rcc_ready_bit_is_told(make):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    r = await make("netduinoplus2").run(request("rcc_1", {"main.c": RCC_WAIT}, timeout=1.5),
                                        Recorder())
    assert r.timed_out and "in main() (main.c:1" in r.diagnosis
    assert "note: the firmware touched peripherals QEMU does not model: RCC (" in r.stderr


async def test_a_wait_on_an_avr_8_bit_timer_is_told(make):
    need("avr-gcc", "qemu-system-avr")
    r = await make("arduino-uno").run(request("t0_1", {"main.c": TIMER0_WAIT}, timeout=1.5),
                                      Recorder())
    assert r.timed_out and r.stdout == "start\n"
    assert "QEMU does not model: avr-timer8 (the 8-bit Timer0 and Timer2) (" in r.stderr
