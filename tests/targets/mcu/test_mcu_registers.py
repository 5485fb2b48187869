"""At a timeout or a silent end, the registers that explain it are read and told.

A UART whose transmitter was never enabled (an AVR firmware with its own UART set-up that
enables only the receiver), and a SysTick that was never started while the firmware waits
for its ticks (STM32F405 and LM3S6965). Real cross-builds, real QEMU, the boards' own
``[[explain]]`` tables.
"""

from __future__ import annotations

import pytest
from mcu_fixtures import Recorder, request
from project import need

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets.mcu.boards import load_board

TX_OFF = """\
#include <avr/io.h>

static void uart_init(void)
{
    UBRR0H = 0;
    UBRR0L = 16;
    UCSR0A = 1 << U2X0;
    UCSR0B = 1 << RXEN0;
    UCSR0C = (1 << UCSZ01) | (1 << UCSZ00);
}

static void uart_put(char c)
{
    while (!(UCSR0A & (1 << UDRE0))) {
    }
    UDR0 = (unsigned char)c;
}

int main(void)
{
    uart_init();
    for (const char *s = "hello\\nPASSED\\n"; *s; s++)
        uart_put(*s);
    return 0;
}
"""

SYSTICK_NEVER_STARTED = """\
#include <stdio.h>
#include <stdint.h>

static volatile uint32_t ticks;

void SysTick_Handler(void)
{
    ticks++;
}

static void delay_ms(uint32_t ms)
{
    uint32_t start = ticks;
    while (ticks - start < ms) {
    }
}

int main(void)
{
    printf("waiting 10 ms\\n");
    delay_ms(10);
    printf("PASSED\\n");
    return 0;
}
"""


async def test_a_uart_with_its_transmitter_off_is_told_so(mcu):
    need("avr-gcc", "qemu-system-avr")
    r = await mcu("arduino-uno").run(request("tx_off", {"main.c": TX_OFF}, timeout=10),
                                      Recorder())
    assert r.stdout == "" and not judge(r, []).ok
    assert r.diagnosis.startswith("no output on the UART")
    assert "UCSR0B has TXEN0 clear: the transmitter was never enabled (UCSR0B = 0x10)" \
        in r.diagnosis


@pytest.mark.parametrize("board", ["netduinoplus2", "lm3s6965evb"])
async def test_a_systick_never_started_is_told_so(mcu, board):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    r = await mcu(board).run(request(f"systick_{board}", {"main.c": SYSTICK_NEVER_STARTED},
                                      timeout=2), Recorder())
    assert r.timed_out and r.stdout == "waiting 10 ms\n" and not judge(r, []).ok
    assert "in delay_ms() (main.c:14)" in r.diagnosis
    assert "What the registers say: SysTick's CTRL has ENABLE clear: SysTick was never " \
           "started, so SysTick_Handler never runs" in r.diagnosis


async def test_a_firmware_without_the_handler_is_not_told_about_systick(mcu):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    code = SYSTICK_NEVER_STARTED.replace("void SysTick_Handler(void)", "static void tick(void)")
    code = code.replace("    delay_ms(10);", "    tick();\n    delay_ms(10);")
    r = await mcu("netduinoplus2").run(request("systick_none", {"main.c": code}, timeout=2),
                                        Recorder())
    assert r.timed_out and "SysTick" not in r.diagnosis


def test_a_board_files_explain_entry_is_checked(tmp_path):
    own = tmp_path / "myboard.toml"
    own.write_text('extends = "netduinoplus2"\n[[explain]]\nname = "X"\naddress = 1\n'
                   'mask = 1\nsays = "x"\nwhen = "sometimes"\n')
    with pytest.raises(ConfigError, match="explain entry 1: 'when' must be one of silent, "
                                          "timeout"):
        load_board(str(own))


# The MPS2's CMSDK UART drops every byte until its CTRL has TX enable set: an answer with its
# own start-up (no board package UART set-up) that writes DATA without enabling it is silent.
CMSDK_TX_OFF = """\
#define UART0_DATA (*(volatile unsigned *)0x40004000)
#define UART0_STATE (*(volatile unsigned *)0x40004004)

static void say(const char *s)
{
    while (*s) {
        while (UART0_STATE & 1u) {
        }
        UART0_DATA = *s++;
    }
}

int main(void)
{
    say("hello from the MPS2\\n");
    say("PASSED\\n");
    for (;;) {
    }
}
"""


async def test_a_cmsdk_uart_never_enabled_is_told_so(mcu):
    from test_mcu_projects import LINK_LD, STARTUP_S

    files = {"startup.s": STARTUP_S, "link.ld": LINK_LD, "main.c": CMSDK_TX_OFF}
    r = await mcu("mps2-an385").run(request("cmsdk_off", files, timeout=3), Recorder())
    assert r.timed_out and r.stdout == "" and not judge(r, []).ok
    assert r.diagnosis.startswith("no output on the UART within 3 s")
    assert "What the registers say: UART0's CTRL has TX enable clear: the UART drops every " \
           "byte written to it (UART0_CTRL = 0x00000000)" in r.diagnosis
