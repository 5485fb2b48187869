"""What the LLM is told about a board: the MCU, its memory, the UART contract, the rules.

This is the mcu target's probe: the first prompt carries it as the machine's
context, so the model writes bare-metal code for this chip, prints its result
on the UART and ends with the line VerifyBot waits for.
"""

from __future__ import annotations

from verifybot_tui.targets.mcu.boards import Board
from verifybot_tui.targets.mcu.sources import arduino
from verifybot_tui.targets.mcu.uart import CONTRACT


def _size(n: int) -> str:
    return f"{n // 1024 // 1024} MB" if n >= 1 << 20 and not n % (1 << 20) else f"{n // 1024} KB"


def _supplied(board: Board) -> list[str]:
    if board.arch == "avr":
        return [
            "avr-libc's start-up code and vector table (main() is called after reset);",
            f"stdout and stderr on the UART ({board.uart}), set up before main(): printf, puts "
            "and putchar work from the first line of main() (avr-libc's printf prints '?' "
            "for %f: print integers);",
        ]
    return [
        "the start-up code and vector table (Reset_Handler copies .data, zeroes .bss, enables "
        "the FPU where there is one, sets up the UART, calls main(), then exit() with its "
        "return value);",
        f"the linker script for this memory map (flash {board.flash[0]:#010x}, RAM "
        f"{board.ram[0]:#010x}, stack at the top of RAM, the heap after .bss);",
        f"newlib-nano retargeting: printf, puts, putchar and malloc work from the first line "
        f"of main(); output goes to {board.uart};",
        "a HardFault handler that reports the faulting PC and LR;",
        *_handlers(board),
    ]


def _handlers(board: Board) -> list[str]:
    named = [n for n in board.irq_names if n][:3]
    if not named:
        return []
    return [f"a vector table naming every device IRQ by its CMSIS handler name "
            f"({', '.join(f'{n}_IRQHandler' for n in named)}...; SysTick_Handler, "
            "PendSV_Handler): define a handler by that name and it is the one called;"]


def _sketches(board: Board, backend: str) -> str | None:
    """What the LLM is told about Arduino sketches (None: the board takes none here)."""
    s = arduino.settings(board) if arduino.installed() else None
    if s is None:
        return None
    emulated = (" In the emulator millis() stays 0 and delay() never returns (Timer0 is not "
                "modelled): time with Timer1 or count loop passes." if backend == "qemu" else "")
    return (f"- Arduino sketches work too: a sketch (sketch.ino, or a .cpp with setup() and "
            f"loop() and no main()) is built against the Arduino AVR core for {s.fqbn} "
            f"({int(s.f_cpu.rstrip('L')) // 1_000_000} MHz), with the core's libraries "
            f"({', '.join(arduino.libraries())}); Serial prints on the UART at any baud "
            f"rate.{emulated}")


def board_context(board: Board, *, backend: str, where: str) -> str:
    """The target's context as markdown (saved as context/<target>.md)."""
    sketches = _sketches(board, backend)
    hal = (f"The vendor library {board.hal} is installed and may be used." if board.hal else
           "No vendor HAL or device headers (STM32 HAL, CMSIS device files) are installed: "
           "use direct register access with the addresses and bits from the chip's reference "
           "manual, as volatile pointers" + (", or write an Arduino sketch." if sketches else
                                             "."))
    unmodelled = f" ({board.qemu_unmodelled})" if board.qemu_unmodelled else ""
    run = (f"the QEMU emulator. It models the CPU, the memory and the UART; peripherals it "
           f"does not model{unmodelled} read as 0 and ignore writes, so do not wait forever "
           "on their status bits"
           if backend == "qemu" else f"a real board, flashed and read over its serial port "
           f"({where})")
    lines: list[str | None] = [
        f"# Microcontroller board: {board.name}",
        "",
        f"- Board: {board.description}",
        f"- MCU: {board.mcu}; compiler {board.compiler} with {' '.join(board.cpu_flags)}",
        f"- Memory: flash {_size(board.flash[1])} at {board.flash[0]:#010x}, "
        f"RAM {_size(board.ram[1])} at {board.ram[0]:#010x}",
        f"- Clock: {board.clock}" if board.clock else None,
        f"- UART: {board.uart}",
        f"- The firmware runs in {run}.",
        "",
        "## The contract",
        "",
        f"- Write bare-metal C (or C++) firmware for this MCU. It must {CONTRACT}. The run ends "
        "at that line; a firmware that never prints it is stopped at the timeout and counts "
        "as a failure. Name the main file main.c (or main.cpp).",
        "- VerifyBot supplies, so the answer need not bring them:",
        *(f"  - {s}" for s in _supplied(board)),
        "- An answer may bring its own start-up code (Reset_Handler and the vector table), "
        "linker script (.ld) or syscalls (_write, _sbrk...): each replaces the part it "
        "duplicates. An answer may also bring its own Makefile: it is then built with `make` in "
        "the run folder and the executable ELF it makes is the firmware. The board package is "
        "in vb_board/ of that folder if the Makefile wants it.",
        f"- {hal}",
        sketches,
        "- Compiler errors and warnings (file:line), faults (with the faulting function and "
        "line) and the UART output come back as feedback.",
    ]
    return "\n".join(line for line in lines if line is not None)
