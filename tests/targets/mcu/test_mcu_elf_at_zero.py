"""The ELF check refuses only what cannot run, for the right reason, first reason first.

An STM32F405 image linked at 0x0 runs: the chip boots from its flash aliased there (and
QEMU maps it there too). The same image with an initial stack pointer of 0 is refused
for that, not for where it is linked. Real cross-builds, real QEMU.
"""

from __future__ import annotations

import pytest
from mcu_fixtures import SUM, Recorder, request

from verifybot_tui.core.verify.verdict import judge

# A CubeMX-style script of the answer's own, at the flash alias; the package's start-up.
AT_ZERO = """\
ENTRY(Reset_Handler)
MEMORY
{
  FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 1024K
  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 128K
}
_estack = ORIGIN(RAM) + LENGTH(RAM);
SECTIONS
{
  .isr_vector : { KEEP(*(.isr_vector)) } > FLASH
  .text : { *(.text*) *(.rodata*) . = ALIGN(4); } > FLASH
  .init_array : { __init_array_start = .; KEEP(*(.init_array*)) __init_array_end = .; } > FLASH
  .preinit_array : { __preinit_array_start = .; __preinit_array_end = .; } > FLASH
  .fini_array : { __fini_array_start = .; KEEP(*(.fini_array*)) __fini_array_end = .; } > FLASH
  _sidata = LOADADDR(.data);
  .data : { _sdata = .; *(.data*) . = ALIGN(4); _edata = .; } > RAM AT > FLASH
  .bss (NOLOAD) : { _sbss = .; *(.bss*) *(COMMON) . = ALIGN(4); _ebss = .; } > RAM
  . = ALIGN(8);
  end = .;
  _end = .;
}
"""


@pytest.fixture
def stm32(mcu):  # type: ignore[no-untyped-def]
    return mcu("netduinoplus2")


async def test_an_image_linked_at_the_flash_alias_runs(stm32):
    r = await stm32.run(request("zero_1", {"main.c": SUM, "stm32.ld": AT_ZERO}), Recorder())
    assert r.stdout == "sum=55\nPASSED\n", r.stderr
    assert judge(r, []).ok
    assert "neither flash" not in r.stderr


async def test_a_zero_stack_pointer_is_the_reason_given(stm32):
    broken = AT_ZERO.replace("_estack = ORIGIN(RAM) + LENGTH(RAM);", "_estack = 0;")
    r = await stm32.run(request("zero_2", {"main.c": SUM, "stm32.ld": broken}), Recorder())
    assert not judge(r, []).ok and r.stdout == ""
    assert r.diagnosis.startswith("the firmware cannot run on the STM32F405RG: vector table: "
                                  "the initial stack pointer 0x00000000 is not in RAM")
    assert "neither flash" not in r.diagnosis
