"""Firmware for the mcu target's tests: sources, answers as an LLM would give them, and
the emulators a test started (found by its workspace path, never by a program's name).
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from verifybot_tui.core.base.ports import ProgramFile, RunRequest
from verifybot_tui.core.settings.config import parse_config

SUM = """\
#include <stdio.h>

int main(void)
{
    int sum = 0;
    for (int i = 1; i <= 10; i++)
        sum += i;
    printf("sum=%d\\n", sum);
    printf("PASSED\\n");
    return 0;
}
"""

COMPILE_ERROR = """\
#include <stdio.h>

int main(void)
{
    int sum = 0
    printf("sum=%d\\n", sum);
    return 0;
}
"""

CRASH = """\
#include <stdio.h>
#include <stdint.h>

static int read_sensor(volatile uint32_t *reg)
{
    return (int)*reg;
}

int main(void)
{
    printf("reading\\n");
    printf("%d\\n", read_sensor((volatile uint32_t *)0x30000000));
    printf("PASSED\\n");
    return 0;
}
"""

# Pends PendSV, for which the firmware has no handler: the board package's Default_Handler.
UNHANDLED_IRQ = """\
#include <stdio.h>
#include <stdint.h>

int main(void)
{
    printf("pending PendSV\\n");
    *(volatile uint32_t *)0xE000ED04 = 1u << 28;
    __asm volatile("dsb\\n isb");
    printf("PASSED\\n");
    return 0;
}
"""

SILENT = """\
int main(void)
{
    for (;;) {
    }
}
"""

ENDLESS = """\
#include <stdio.h>

volatile unsigned counter;

int main(void)
{
    printf("counting\\n");
    for (;;)
        counter++;
}
"""

# C++: a global object whose constructor must run before main (the start-up code's
# __libc_init_array), built with the board's g++ and no exceptions or RTTI.
CPP_COUNTER = """\
#include <cstdio>

class Counter {
public:
    explicit Counter(int start) : n(start) {}
    void add(int k) { n += k; }
    int value() const { return n; }

private:
    int n;
};

static Counter counter(5);

int main()
{
    counter.add(37);
    std::printf("value=%d\\n", counter.value());
    std::printf("PASSED\\n");
    return 0;
}
"""

# Waits for the STM32's CAN controller to enter initialisation mode: QEMU does not
# model CAN, so the acknowledge bit never comes.
CAN_WAIT = """\
#include <stdio.h>
#include <stdint.h>

#define CAN1_MCR (*(volatile uint32_t *)0x40006400)
#define CAN1_MSR (*(volatile uint32_t *)0x40006404)

int main(void)
{
    printf("CAN init\\n");
    CAN1_MCR |= 1u;
    while (!(CAN1_MSR & 1u)) {
    }
    printf("PASSED\\n");
    return 0;
}
"""

# A self-contained answer: its own Makefile, linker script, start-up code and UART
# code for the LM3S6965 (PL011 UART0), with a fault handler that only spins.
OWN_MAKEFILE = """\
CC = arm-none-eabi-gcc
CFLAGS = -mcpu=cortex-m3 -mthumb -O1 -g -Wall -ffreestanding

all: app.elf

app.elf: startup.c main.c link.ld
\t$(CC) $(CFLAGS) -nostdlib -T link.ld -o $@ startup.c main.c
"""

OWN_LINKER = """\
MEMORY
{
  FLASH (rx) : ORIGIN = 0x00000000, LENGTH = 256K
  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K
}
SECTIONS
{
  .vectors : { KEEP(*(.vectors)) } > FLASH
  .text : { *(.text*) *(.rodata*) } > FLASH
  .bss (NOLOAD) : { *(.bss*) *(COMMON) } > RAM
}
"""

OWN_STARTUP = """\
extern int main(void);

void reset(void)
{
    main();
    for (;;) {
    }
}

void spin(void)
{
    for (;;) {
    }
}

__attribute__((section(".vectors"), used)) void (*const vectors[])(void) = {
    (void (*)(void))0x20010000, reset, spin, spin, spin, spin, spin,
};
"""

OWN_MAIN = """\
#define UART0_DR (*(volatile unsigned *)0x4000C000)

static void say(const char *s)
{
    while (*s)
        UART0_DR = *s++;
}

static int checksum(const char *s)
{
    int sum = 0;
    while (*s)
        sum += *s++;
    return sum;
}

int main(void)
{
    say("own startup\\n");
    say(checksum("ab") == 195 ? "PASSED\\n" : "FAILED\\n");
    return 0;
}
"""

OWN_MAIN_CRASH = OWN_MAIN.replace(
    "static int checksum(const char *s)\n{\n",
    "static int checksum(const char *s)\n{\n    __builtin_trap();\n")


def own_project(main: str = OWN_MAIN) -> dict[str, str]:
    return {"Makefile": OWN_MAKEFILE, "link.ld": OWN_LINKER, "startup.c": OWN_STARTUP,
            "main.c": main}


def request(run_id: str, files: dict[str, str], timeout: float = 20.0) -> RunRequest:
    """A run of these files; the timeout only matters to a firmware that never ends."""
    lang = {".c": "c", ".cpp": "cpp", ".ld": "text", "": "makefile"}
    pfs = [ProgramFile(n, n, c, lang.get(Path(n).suffix, "text")) for n, c in files.items()]
    return RunRequest(run_id=run_id, files=pfs, entry="main.c", language="c", timeout=timeout)


def mcu_config(board: str = "netduinoplus2", **extra: object):  # type: ignore[no-untyped-def]
    return parse_config({"targets": {"board": {"kind": "mcu", "board": board, **extra}}})


# A semihosting call QEMU does not support (operation 0x99): QEMU aborts, and the
# feedback must tell it as the call and its line, not a register dump.
UNSUPPORTED_SEMIHOSTING = """\
#include <stdio.h>

static void odd_call(void)
{
    register unsigned r0 __asm("r0") = 0x99;
    register unsigned r1 __asm("r1") = 0;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
}

int main(void)
{
    printf("calling\\n");
    odd_call();
    printf("PASSED\\n");
    return 0;
}
"""


def c_answer(code: str, name: str = "main.c", prose: str = "Here is the firmware:") -> str:
    return f"{prose}\n\n**{name}**\n```c\n{textwrap.dedent(code).strip()}\n```\n"


def project_answer(files: dict[str, str]) -> str:
    langs = {"Makefile": "makefile", ".ld": "ld", ".s": "asm"}
    parts = ["A self-contained project:"]
    for name, text in files.items():
        lang = langs.get(name) or langs.get(Path(name).suffix, "c")
        parts.append(f"**{name}**\n```{lang}\n{text.rstrip()}\n```")
    return "\n\n".join(parts) + "\n"


def qemu_pids(workspace: Path) -> list[int]:
    """Emulators running firmware from this workspace (their ELF path names it)."""
    found = []
    needle = str(workspace).encode()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{entry.name}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if b"qemu-system-" in cmd and needle in cmd and not zombie:
            found.append(int(entry.name))
    return found


class Recorder:
    """What a run streamed, by stream."""

    def __init__(self) -> None:
        self.chunks: list[tuple[str, str]] = []

    def __call__(self, stream: str, text: str) -> None:
        self.chunks.append((stream, text))

    def text(self, stream: str) -> str:
        return "".join(t for s, t in self.chunks if s == stream)
