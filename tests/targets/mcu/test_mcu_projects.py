"""Firmware projects as people write them: their own start-up, linker script, syscalls,
Makefile folders, C++ globals, device headers from a board file, semihosting, AVR interrupts.

Direct runs of the mcu target (the files as a RunRequest), real cross-builds, real QEMU.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from mcu_fixtures import (
    UNSUPPORTED_SEMIHOSTING,
    Recorder,
    mcu_config,
    own_project,
    qemu_pids,
    request,
)
from project import need

from verifybot_tui.core.settings import trust
from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets import make_target
from verifybot_tui.targets.mcu import checks
from verifybot_tui.targets.mcu.boards import board_files_to_trust, load_board

UART0 = "#define UART0_DR (*(volatile unsigned *)0x4000C000)\n"

STARTUP_S = """\
    .syntax unified
    .cpu cortex-m3
    .thumb

    .section .isr_vector, "a"
    .word _stack_end
    .word Reset_Handler
    .word Spin_Handler
    .word 0                 /* HardFault: none (a warning, not a refusal) */

    .section .text.Reset_Handler
    .global Reset_Handler
    .type Reset_Handler, %function
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

    .type Spin_Handler, %function
Spin_Handler:
    b Spin_Handler
"""

LINK_LD = """\
MEMORY
{
  ROM (rx) : ORIGIN = 0x00000000, LENGTH = 256K
  SRAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K
}
_stack_end = ORIGIN(SRAM) + LENGTH(SRAM);
SECTIONS
{
  .isr_vector : { KEEP(*(.isr_vector)) } > ROM
  .text : { *(.text*) *(.rodata*) } > ROM
  .data : { _data_start = .; *(.data*) . = ALIGN(4); _data_end = .; } > SRAM AT > ROM
  _data_load = LOADADDR(.data);
  .bss : { *(.bss*) *(COMMON) } > SRAM
}
"""

OWN_MAIN = UART0 + """\
static const char *greeting = "own start-up, own script\\n";

static void say(const char *s)
{
    while (*s)
        UART0_DR = *s++;
}

int main(void)
{
    say(greeting);  /* .data copied by the answer's own Reset_Handler */
    say("PASSED\\n");
    for (;;) {
    }
}
"""

MAKEFILE = """\
CC = arm-none-eabi-gcc
CFLAGS = -mcpu=cortex-m3 -mthumb -O1 -g -Wall -Iinclude
OBJS = build/main.o build/sum.o

build/app: $(OBJS) vb_board/board.ld
\t$(CC) $(CFLAGS) -nostartfiles --specs=nano.specs -T vb_board/board.ld -o $@ $(OBJS) \\
\t\tvb_board/startup.c vb_board/fault.c vb_board/syscalls.c vb_board/uart_stellaris.c

build/%.o: src/%.c include/sum.h
\t@mkdir -p build
\t$(CC) $(CFLAGS) -c -o $@ $<
"""

SUM_H = "int sum_to(int n);\n"
SUM_C = '#include "sum.h"\n\nint sum_to(int n)\n{\n    return n ? n + sum_to(n - 1) : 0;\n}\n'
MAKE_MAIN = """\
#include <stdio.h>
#include "sum.h"

int main(void)
{
    printf("sum=%d\\n", sum_to(10));
    printf("PASSED\\n");
    return 0;
}
"""

CPP_GLOBALS = """\
#include <cstdio>

struct Tracer {
    explicit Tracer(const char *n) : name(n) { std::printf("ctor %s\\n", name); }
    ~Tracer() { std::printf("dtor %s\\n", name); }
    const char *name;
};

Tracer first("first");
static Tracer second("second");

int main()
{
    std::printf("main sees %s and %s\\n", first.name, second.name);
    return 0;
}
"""

OWN_SYSCALLS = """\
#include <stdio.h>
#define UART0_DR (*(volatile unsigned *)0x4000C000)

int _write(int fd, const char *buf, int len)
{
    (void)fd;
    for (int i = 0; i < len; i++)
        UART0_DR = buf[i] == '\\n' ? '|' : buf[i];
    UART0_DR = '\\n';
    return len;
}

int main(void)
{
    printf("own _write\\n");
    printf("PASSED\\n");
    return 0;
}
"""

DEVICE_H = """\
/* A CMSIS-style device header of our own: the peripheral as a struct at its address. */
#include <stdint.h>
typedef struct {
    volatile uint32_t SR, DR, BRR, CR1;
} USART_TypeDef;
#define USART1 ((USART_TypeDef *)0x40011000)
#define USART_SR_TXE (1u << 7)
"""

CMSIS_MAIN = """\
#include <stdio.h>
#include "vb_device.h"

static int clock_set;

void SystemInit(void)  /* called by the start-up code before main, as CMSIS does */
{
    clock_set = 1;
}

static void put(char c)
{
    while (!(USART1->SR & USART_SR_TXE)) {
    }
    USART1->DR = (uint8_t)c;
}

int main(void)
{
    const char *s = "through the device header\\n";
    while (*s)
        put(*s++);
    printf("SystemInit ran: %d\\n", clock_set);
    printf(clock_set ? "PASSED\\n" : "FAILED\\n");
    return 0;
}
"""

SEMIHOSTING_EXIT = """\
#include <stdio.h>
#include <stdint.h>

static void semihosting_exit(int status)
{
    uint32_t block[2] = {0x20026u, (uint32_t)status};  /* ADP_Stopped_ApplicationExit */
    register uint32_t r0 __asm("r0") = 0x20;           /* SYS_EXIT_EXTENDED */
    register uint32_t *r1 __asm("r1") = block;
    __asm volatile("bkpt 0xab" : : "r"(r0), "r"(r1) : "memory");
}

int main(void)
{
    printf("leaving by semihosting\\n");
    semihosting_exit(STATUS);
    for (;;) {
    }
}
"""

AVR_TIMER_IRQ = """\
#include <avr/interrupt.h>
#include <avr/io.h>
#include <stdio.h>

static volatile unsigned ticks;

ISR(TIMER1_COMPA_vect)
{
    if (++ticks == 3) {
        TIMSK1 = 0;  /* the third tick stops the timer: a loaded host can lag QEMU's clock */
    }
}

int main(void)
{
    OCR1A = 1000;
    TCCR1B = (1 << WGM12) | (1 << CS10);  /* CTC, clk/1 */
    TIMSK1 = 1 << OCIE1A;
    sei();
    while (ticks < 3) {
    }
    printf("ticks=%u\\n", ticks);
    printf("PASSED\\n");
    return 0;
}
"""


@pytest.fixture
async def make(tmp_path):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    made = []

    def build(board: str = "lm3s6965evb"):
        t = make_target(mcu_config(board), "board", tmp_path / "ws")
        made.append(t)
        return t

    yield build
    for t in made:
        await t.close()
    assert qemu_pids(tmp_path / "ws") == []


async def test_its_own_startup_s_and_ld_without_a_makefile_replace_the_package(make):
    r = await make().run(request("own_s_1", {"startup.s": STARTUP_S, "link.ld": LINK_LD,
                                             "main.c": OWN_MAIN}), Recorder())
    assert r.stdout == "own start-up, own script\nPASSED\n", r.stderr
    assert judge(r, []).ok
    assert "-T link.ld" in r.command and "vb_board/startup.c" not in r.command
    assert "[parts: start-up code and vector table from the answer (startup.s: section " \
           ".isr_vector, entry Reset_Handler); linker script from the answer (link.ld); " \
           "syscalls (newlib retargeting) from VerifyBot" in r.command
    # a 0 HardFault entry is odd, not fatal: a warning the feedback carries
    assert "note: vector table: the HardFault entry is 0" in r.stderr


async def test_a_makefile_with_src_and_build_folders_builds_as_by_hand(make):
    files = {"Makefile": MAKEFILE, "include/sum.h": SUM_H, "src/sum.c": SUM_C,
             "src/main.c": MAKE_MAIN}
    r = await make().run(request("make_dirs_1", files), Recorder())
    assert r.stdout == "sum=55\nPASSED\n", r.stderr
    assert r.command.startswith("make") and r.exit_code == 0
    assert "[parts: everything from the answer's Makefile, with the board package files it " \
           "names from VerifyBot (vb_board/)]" in r.command
    assert (Path(r.workdir) / "build" / "main.o").is_file()  # built in its own folders
    assert (Path(r.workdir) / "build" / "app").is_file()  # no .elf: found by its bytes


async def test_cpp_global_objects_are_constructed_and_destroyed(make):
    r = await make().run(request("cpp_globals_1", {"main.cpp": CPP_GLOBALS}), Recorder())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == ("ctor first\nctor second\nmain sees first and second\n"
                        "dtor second\ndtor first\n")
    assert judge(r, []).ok


async def test_its_own_syscalls_replace_the_packages_and_the_rest_fill_in(make):
    r = await make().run(request("own_sys_1", {"main.c": OWN_SYSCALLS}), Recorder())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "own _write|\nPASSED|\n"
    assert "syscalls _write from the answer, the others from VerifyBot" in r.command


async def test_a_cmsis_style_device_header_comes_with_a_board_file(make, tmp_path):
    need("arm-none-eabi-gcc")
    (tmp_path / "device").mkdir()
    (tmp_path / "device" / "vb_device.h").write_text(DEVICE_H)
    board = tmp_path / "my_f405.toml"
    board.write_text('extends = "netduinoplus2"\nhal = "our device header (vb_device.h)"\n'
                     f'hal_flags = ["-I{tmp_path / "device"}"]\n')
    for f in board_files_to_trust(str(board)):  # the folder it shows: the user approved it
        trust.approve(f)
    r = await make(str(board)).run(request("cmsis_1", {"main.c": CMSIS_MAIN}), Recorder())
    assert r.stdout == "through the device header\nSystemInit ran: 1\nPASSED\n", r.stderr
    assert judge(r, []).ok


@pytest.mark.parametrize("status", [0, 4])
async def test_a_semihosting_exit_ends_the_run_with_its_status(make, status):
    code = SEMIHOSTING_EXIT.replace("STATUS", str(status))
    r = await make("netduinoplus2").run(request(f"semi_exit_{status}", {"main.c": code}),
                                        Recorder())
    assert r.exit_code == status and r.stdout == "leaving by semihosting\n"
    assert judge(r, []).ok == (status == 0)


async def test_an_unsupported_semihosting_call_is_told_as_the_call_and_its_line(make):
    r = await make("netduinoplus2").run(request("semi_bad_1", {
        "main.c": UNSUPPORTED_SEMIHOSTING}), Recorder())
    assert r.stdout == "calling\n"
    assert r.diagnosis.startswith("the firmware made a semihosting call the emulator does not "
                                  "support (operation 0x99 in r0")
    assert "in odd_call() (main.c:7)" in r.diagnosis
    assert "R00=" not in r.stderr  # no raw register dump


async def test_an_avr_firmware_with_a_timer_interrupt_runs(make):
    need("avr-gcc", "qemu-system-avr")
    r = await make("arduino-uno").run(request("avr_irq_1", {"main.c": AVR_TIMER_IRQ}),
                                      Recorder())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "ticks=3\nPASSED\n"


HUGE = """\
    .section .blob, "a"
    .space 70 * 1024 * 1024
"""


async def test_a_huge_build_output_is_deleted_and_told(make):
    r = await make().run(request("huge_1", {"blob.s": HUGE, "main.c": OWN_SYSCALLS}),
                         Recorder())
    assert r.compile_failed and "the build left more on disk than one attempt may" in r.stderr
    assert "vb_build/blob.o (70 MB)" in r.stderr
    left = [p for p in Path(r.workdir).rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in left) < 1 << 20
    assert judge(r, []).status == "compile_error"


def test_doctor_names_the_cpp_library_when_it_is_missing(tmp_path):
    """A cross compiler that finds newlib-nano but not its C++ library (a real script)."""
    need("arm-none-eabi-gcc", "arm-none-eabi-addr2line", "arm-none-eabi-objcopy")
    tools = tmp_path / "tools"
    tools.mkdir()
    for name in ("addr2line", "objcopy"):
        (tools / f"arm-none-eabi-{name}").symlink_to(shutil.which(f"arm-none-eabi-{name}"))
    cc = tools / "arm-none-eabi-gcc"
    cc.write_text('#!/bin/sh\nfor a; do case "$a" in\n'
                  '  -print-file-name=libc_nano.a) echo /usr/lib/libc_nano.a;;\n'
                  '  -print-file-name=*) echo "${a#-print-file-name=}";;\n'
                  'esac; done\n')
    cc.chmod(0o755)
    board = tmp_path / "b.toml"
    board.write_text(f'extends = "lm3s6965evb"\ncompiler = "{cc}"\n')
    for f in board_files_to_trust(str(board)):  # a compiler of its own: the user approved it
        trust.approve(f)
    found = checks.toolchain(load_board(str(board)))
    assert ("WARN", "C++ firmware will not link (cannot find -lstdc++_nano): sudo apt install "
            "libstdc++-arm-none-eabi-newlib") in found
    assert not [f for f in checks.toolchain(load_board("lm3s6965evb")) if "C++" in f[1]]


async def test_its_own_startup_c_vector_section_and_ld_without_a_makefile(make):
    files = {k: v for k, v in own_project().items() if k != "Makefile"}
    r = await make().run(request("own_c_1", files), Recorder())
    assert r.stdout == "own startup\nPASSED\n", r.stderr
    assert "[parts: start-up code and vector table from the answer" in r.command
    assert "-T link.ld" in r.command


CPP_OWN_RUNTIME = """\
#include <cstdio>
#include <cstdlib>

static int news;

void *operator new(std::size_t n)  /* its own C++ runtime pieces, as bare-metal code has */
{
    news++;
    return std::malloc(n);
}

void operator delete(void *p) noexcept
{
    std::free(p);
}

void operator delete(void *p, std::size_t) noexcept
{
    std::free(p);
}

extern "C" void abort(void)
{
    std::printf("FAILED: abort\\n");
    for (;;) {
    }
}

struct Box {
    explicit Box(int v) : value(v) {}
    int value;
};

int main()
{
    Box *b = new Box(41);
    b->value++;
    std::printf("box=%d news=%d\\n", b->value, news);
    delete b;
    std::printf("PASSED\\n");
    return 0;
}
"""


async def test_cpp_with_its_own_new_delete_and_abort_links(make):
    r = await make().run(request("cpp_rt_1", {"main.cpp": CPP_OWN_RUNTIME}), Recorder())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "box=42 news=1\nPASSED\n"
