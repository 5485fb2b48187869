"""An answer's own start-up and linker script without a Makefile, built as written.

Its vector table in a section named its own way (``INTERRUPT_VECTOR``), its entry ``_Reset``
with ``Reset_Handler`` only a local label, ``ENTRY(_Reset)`` in its script, and the script
placing ``startup.o (INTERRUPT_VECTOR)`` by the object's name and only ``*(.text)`` without
KEEP: the object must be startup.o where the script says, and no function sections or
--gc-sections may scatter or drop what the script places. Real cross-builds, real QEMU.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mcu_fixtures import Recorder, request

from verifybot_tui.core.verify.verdict import judge

STARTUP_S = """\
    .syntax unified
    .cpu cortex-m3
    .thumb

    .section INTERRUPT_VECTOR, "a"
    .word _stack_top
    .word _Reset
    .word fault_spin
    .word fault_spin

    .text
    .type _Reset, %function
_Reset:
Reset_Handler:
    ldr r0, =_data_load
    ldr r1, =_data_start
    ldr r2, =_data_end
1:  cmp r1, r2
    bge 2f
    ldr r3, [r0], #4
    str r3, [r1], #4
    b 1b
2:  bl main
3:  b 3b

    .type fault_spin, %function
fault_spin:
    b fault_spin
"""

LINKER = """\
ENTRY(_Reset)
MEMORY
{
  ROM (rx) : ORIGIN = 0x00000000, LENGTH = 256K
  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K
}
_stack_top = ORIGIN(RAM) + LENGTH(RAM);
SECTIONS
{
  .text : {
    startup.o (INTERRUPT_VECTOR)
    *(.text)
    *(.rodata) *(.rodata.*)
  } > ROM
  .data : { _data_start = .; *(.data) . = ALIGN(4); _data_end = .; } > RAM AT > ROM
  _data_load = LOADADDR(.data);
  .bss : { *(.bss) *(COMMON) } > RAM
}
"""

MAIN = """\
#define UART0_DR (*(volatile unsigned *)0x4000C000)

static const char *greeting = "own table, own entry, own script\\n";
static int calls = 1;

static void say(const char *s)
{
    while (*s)
        UART0_DR = *s++;
}

int main(void)
{
    say(greeting);
    say(calls == 1 ? "PASSED\\n" : "FAILED\\n");
    return 0;
}
"""


@pytest.fixture
def lm3s(mcu):  # type: ignore[no-untyped-def]
    return mcu("lm3s6965evb")


async def test_own_startup_and_script_with_other_names_are_built_as_written(lm3s):
    files = {"startup.s": STARTUP_S, "lm3s.ld": LINKER, "main.c": MAIN}
    r = await lm3s.run(request("own_names_1", files), Recorder())
    assert r.stdout == "own table, own entry, own script\nPASSED\n", r.stderr
    assert judge(r, []).ok
    assert (Path(r.workdir) / "startup.o").is_file()  # where the script names it
    assert "-o startup.o" in r.command and "vb_board/startup.c" not in r.command
    assert "-ffunction-sections" not in r.command and "--gc-sections" not in r.command
    assert "[parts: start-up code and vector table from the answer (startup.s: section " \
           "INTERRUPT_VECTOR, entry _Reset); linker script from the answer (lm3s.ld)" in r.command


async def test_a_table_in_its_own_section_goes_first_in_verifybots_script(lm3s):
    """No script of its own: VerifyBot's places the answer's table, whatever its section."""
    startup = STARTUP_S.replace("_stack_top", "_estack").replace(
        "    ldr r0, =_data_load\n    ldr r1, =_data_start\n    ldr r2, =_data_end\n",
        "    ldr r0, =_sidata\n    ldr r1, =_sdata\n    ldr r2, =_edata\n")
    r = await lm3s.run(request("own_names_2", {"startup.s": startup, "main.c": MAIN}),
                       Recorder())
    assert r.stdout == "own table, own entry, own script\nPASSED\n", r.stderr
    assert "KEEP(*(INTERRUPT_VECTOR))" in (Path(r.workdir) / "vb_board/board.ld").read_text()
    assert "[parts: start-up code and vector table from the answer (startup.s: section " \
           "INTERRUPT_VECTOR, entry _Reset); linker script from VerifyBot" in r.command
