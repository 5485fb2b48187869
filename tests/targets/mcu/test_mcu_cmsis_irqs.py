"""Interrupt handlers by their CMSIS names, on the board package's start-up code.

Most real STM32 and Stellaris code defines ``TIM2_IRQHandler``, ``USART1_IRQHandler``,
``SysTick_Handler`` and relies on the start-up code's vector table to name them. Real
cross-builds, real QEMU: a timer interrupt, a UART interrupt (pended in the NVIC: QEMU's
USARTs raise only their receive interrupt) and SysTick, each counted by its handler.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcu_fixtures import Recorder, request

from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets.mcu.boards import load_board
from verifybot_tui.targets.mcu.elfcheck import read_symbols

# What both chips share: SysTick, the NVIC, and a main() that waits for every handler.
COMMON = """\
#include <stdio.h>
#include <stdint.h>

#define REG(a) (*(volatile uint32_t *)(a))
#define SYST_CSR REG(0xE000E010)
#define SYST_RVR REG(0xE000E014)
#define SYST_CVR REG(0xE000E018)
#define NVIC_ISER(n) REG(0xE000E100 + 4 * (n))
#define NVIC_ISPR(n) REG(0xE000E200 + 4 * (n))

static volatile unsigned timer_ticks, uart_irqs, systicks;

void SysTick_Handler(void)
{
    if (++systicks == 5)
        SYST_CSR = 0;
}

static void nvic_enable(unsigned irq) { NVIC_ISER(irq / 32) = 1u << (irq % 32); }
static void nvic_pend(unsigned irq) { NVIC_ISPR(irq / 32) = 1u << (irq % 32); }
"""

WAIT = """\
int main(void)
{
    SYST_RVR = 16000 - 1;
    SYST_CVR = 0;
    SYST_CSR = 7;  /* processor clock, interrupt, enable */
    timer_start();
    nvic_enable(UART_IRQ);
    nvic_pend(UART_IRQ);
    while (timer_ticks < 3 || uart_irqs < 1 || systicks < 5) {
    }
    printf("timer>=3 %d uart %d systick>=5 %d\\n", timer_ticks >= 3, uart_irqs == 1,
           systicks >= 5);
    printf("PASSED\\n");
    return 0;
}
"""

STM32 = COMMON + """\
#define TIM2_BASE 0x40000000u
#define TIM2_CR1 REG(TIM2_BASE + 0x00)
#define TIM2_DIER REG(TIM2_BASE + 0x0C)
#define TIM2_SR REG(TIM2_BASE + 0x10)
#define TIM2_ARR REG(TIM2_BASE + 0x2C)
#define UART_IRQ 37u /* USART1 */

void TIM2_IRQHandler(void)
{
    TIM2_SR = 0;
    if (++timer_ticks == 3)
        TIM2_CR1 = 0;
}

void USART1_IRQHandler(void)
{
    uart_irqs++;
}

static void timer_start(void)
{
    TIM2_ARR = 16000;
    TIM2_DIER = 1;  /* update interrupt */
    nvic_enable(28);
    TIM2_CR1 = 1;
}

""" + WAIT

LM3S = COMMON + """\
#define RCGC1 REG(0x400FE104)
#define GPTM0 0x40030000u
#define GPTMCFG REG(GPTM0 + 0x00)
#define GPTMTAMR REG(GPTM0 + 0x04)
#define GPTMCTL REG(GPTM0 + 0x0C)
#define GPTMIMR REG(GPTM0 + 0x18)
#define GPTMICR REG(GPTM0 + 0x24)
#define GPTMTAILR REG(GPTM0 + 0x28)
#define UART_IRQ 5u /* UART0 */

void Timer0A_IRQHandler(void)
{
    GPTMICR = 1;
    if (++timer_ticks == 3)
        GPTMCTL = 0;
}

void UART0_IRQHandler(void)
{
    uart_irqs++;
}

static void timer_start(void)
{
    RCGC1 |= 1u << 16;  /* timer 0's clock */
    GPTMCTL = 0;
    GPTMCFG = 0;
    GPTMTAMR = 2;  /* periodic */
    GPTMTAILR = 12000;
    GPTMIMR = 1;  /* time-out interrupt */
    nvic_enable(19);
    GPTMCTL = 1;
}

""" + WAIT

# TIM2 runs, but its handler has a typo: the vector table's TIM2_IRQHandler is Default_Handler.
MISNAMED = STM32.replace("void TIM2_IRQHandler(void)", "void TIM2_Handler(void)")


@pytest.mark.parametrize("board, code, irqs", [("netduinoplus2", STM32, 82),
                                               ("lm3s6965evb", LM3S, 44)],
                         ids=["stm32f405", "lm3s6965"])
async def test_handlers_by_their_cmsis_names_are_called(mcu, board, code, irqs):
    r = await mcu(board).run(request(f"cmsis_{board}", {"main.c": code}, timeout=15),
                              Recorder())
    assert r.stdout == "timer>=3 1 uart 1 systick>=5 1\nPASSED\n", r.stderr
    assert judge(r, []).ok
    # the table in the firmware is as long as the board's irq_count says
    table = read_symbols(Path(r.workdir) / "firmware.elf").sections[".isr_vector"]
    assert table == 4 * (16 + irqs)


async def test_a_misnamed_handler_is_told_the_name_to_define(mcu):
    r = await mcu("netduinoplus2").run(request("cmsis_typo", {"main.c": MISNAMED}, timeout=15),
                                        Recorder())
    assert not judge(r, []).ok
    assert "no handler for: IRQ 28 (exception 44" in r.diagnosis
    assert "IRQ 28 is TIM2: define `TIM2_IRQHandler`" in r.diagnosis


def test_the_vector_table_is_as_long_as_the_boards_irq_count(tmp_path):
    """The STM32F405's 82 device IRQs, the LM3S6965's 44, the AN385's 32, by name."""
    from verifybot_tui.targets.mcu import build

    for name, count in (("netduinoplus2", 82), ("lm3s6965evb", 44), ("mps2-an385", 32)):
        board = load_board(name)
        assert board.irq_count == count and len(board.irq_names) == count
        header = build.irq_header(board)
        assert header.count("VB_IRQ(") + header.count("VB_RESERVED") == count
    stm32 = build.irq_header(load_board("netduinoplus2")).splitlines()
    assert stm32[1 + 28] == "VB_IRQ(TIM2_IRQHandler)  /* IRQ 28 */"
    assert stm32[1 + 37] == "VB_IRQ(USART1_IRQHandler)  /* IRQ 37 */"
    assert stm32[1 + 61] == "VB_RESERVED  /* IRQ 61 */"


def test_the_board_context_tells_the_handler_names():
    from verifybot_tui.targets.mcu.context import board_context

    text = board_context(load_board("netduinoplus2"), backend="qemu", where="")
    assert "CMSIS handler name (WWDG_IRQHandler, PVD_IRQHandler, TAMP_STAMP_IRQHandler...; " \
           "SysTick_Handler, PendSV_Handler)" in text


async def test_tim2_with_a_prescaler_is_named_as_not_at_the_chips_rate(mcu):
    """The note comes with any run of a firmware that uses TIM2 with a prescaler (how fast
    QEMU's prescaled TIM2 counts depends on the host: the firmware does not wait for it)."""
    code = STM32.replace("    TIM2_ARR = 16000;", "    REG(TIM2_BASE + 0x28) = 83;  /* PSC */\n"
                         "    TIM2_ARR = 999;").replace(
        "while (timer_ticks < 3 || uart_irqs < 1 || systicks < 5)", "while (uart_irqs < 1)")
    r = await mcu("netduinoplus2").run(request("cmsis_psc", {"main.c": code}, timeout=30),
                                       Recorder())
    assert r.stdout.endswith("PASSED\n") and judge(r, []).ok, r.stderr
    assert "note: TIM2 runs with a prescaler, which QEMU 7.2 does not count at the chip's " \
           "rate" in r.stderr
    assert "(TIM2_PSC = 0x00000053)" in r.stderr
    plain = await mcu("netduinoplus2").run(request("cmsis_nopsc", {"main.c": STM32},
                                                   timeout=15), Recorder())
    assert "prescaler" not in plain.stderr
