"""What went wrong in a firmware, told in the words of its own source.

Addresses become ``function (file:line)`` through the toolchain's addr2line; a
Cortex-M fault's status registers become its kind; QEMU's log of accesses to
devices it does not model becomes a short list with a hint that such code needs
a real board. The log is read as it streams and only counted, so a firmware
that polls an unmodelled register for seconds costs counters, not memory.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from verifybot_tui.targets.mcu.boards import Board
from verifybot_tui.targets.sandbox.bubblewrap import sandboxed_tool

_CFSR_BITS = [
    (0, "instruction access violation (MemManage: executing from a forbidden region)"),
    (1, "data access violation (MemManage)"),
    (7, None),  # MMFAR valid: told with the address
    (8, "instruction bus error (BusFault: fetching code from a bad address)"),
    (9, "precise data bus error (BusFault: a read or write to an address with nothing there)"),
    (10, "imprecise data bus error (BusFault: a buffered write to a bad address)"),
    (11, "bus error while unstacking"),
    (12, "bus error while stacking (the stack overflowed?)"),
    (15, None),  # BFAR valid
    (16, "undefined instruction (UsageFault)"),
    (17, "invalid state: an attempt to run ARM code (UsageFault; a function pointer with "
         "bit 0 clear?)"),
    (18, "invalid PC on exception return (UsageFault)"),
    (19, "no coprocessor (UsageFault: the FPU is used but not enabled)"),
    (24, "unaligned access (UsageFault)"),
    (25, "divide by zero (UsageFault)"),
]


def fault_kind(cfsr: int, hfsr: int, bfar: int, mmfar: int) -> str:
    """The fault in words, from CFSR and HFSR (and the fault address when valid)."""
    parts = [text for bit, text in _CFSR_BITS if text and cfsr >> bit & 1]
    if cfsr >> 15 & 1:
        parts.append(f"at address {bfar:#010x}")
    if cfsr >> 7 & 1:
        parts.append(f"at address {mmfar:#010x}")
    if hfsr >> 1 & 1:
        parts.append("vector table read error")
    if not parts:
        return "HardFault"
    kind = ", ".join(parts)
    return f"HardFault (escalated): {kind}" if hfsr >> 30 & 1 else kind


def _place(func: str, where: str) -> str:
    where = re.sub(r" \(discriminator \d+\)$", "", where)
    path, _, line = where.rpartition(":")
    name = Path(path).name if path and path != "??" else "?"
    return f"{func}() ({name}:{line})" if func != "??" else f"{name}:{line}"


def addr2line(tool: str, elf: Path, address: int) -> str:
    """``function() (file:line)``, with the functions it was inlined into ("" if unknown).
    The ELF is the answer's: addr2line reads it in the build's sandbox (a crafted file
    meets a tool that sees no home and cannot write outside the run folder)."""
    if not shutil.which(tool):
        return ""
    try:
        argv = [tool, "-f", "-C", "-i", "-e", str(elf), f"{address:#x}"]
        out = subprocess.run(sandboxed_tool(argv, elf.parent),
                             stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=10).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return ""
    pairs = [(out[i], out[i + 1]) for i in range(0, len(out) - 1, 2)]
    places = [_place(f, w) for f, w in pairs if not (f == "??" and w.startswith("??"))]
    return ", inlined in ".join(places)


def where(tool: str, elf: Path, address: int) -> str:
    """``0x... in function() (file:line)``."""
    text = addr2line(tool, elf, address)
    return f"{address:#010x}" + (f" in {text}" if text else "")


def stack_frames(workdir: Path) -> list[tuple[int, str, str]]:
    """The answer's functions by the stack each frame takes (gcc's -fstack-usage files in
    the run folder), biggest first: (bytes, "function()", "file:line")."""
    frames = []
    for su in workdir.rglob("*.su"):
        for line in su.read_text(errors="replace").splitlines():
            place, _, rest = line.partition("\t")
            size = rest.split("\t", 1)[0]
            where, _, func = place.rpartition(":")
            path, line_no = where.split(":")[:2] if where.count(":") >= 2 else (where, "?")
            if size.isdigit():
                frames.append((int(size), f"{func}()", f"{Path(path).name}:{line_no}"))
    return sorted(frames, reverse=True)


def stack_overflow(board: Board, sp: int, workdir: Path, kind: str = "",
                   what: str = "The stack pointer went to") -> str:
    """A crash whose stacked frame cannot be read, or a write just below RAM: the stack
    outgrew the RAM. Told with the function whose frame is the biggest (-fstack-usage)."""
    side = ("below the start" if sp < board.ram[0] else "past the end") if sp else "at 0"
    text = (f"the firmware crashed: a stack overflow. {what} {sp:#010x}, "
            f"{side} of the {board.mcu}'s RAM ({board.ram[0]:#x}-"
            f"{board.ram[0] + board.ram[1]:#x})")
    if kind:
        text += f", so the CPU could not save its registers for the fault ({kind})"
    frames = stack_frames(workdir)
    if frames:
        size, func, at = frames[0]
        text += (f". The biggest stack frame is {func} ({at}): {size:,} bytes of locals "
                 f"(the RAM holds {board.ram[1]:,}); put a large buffer in a static or global "
                 "instead, or make it smaller")
    return text


_REG = re.compile(r"(cfsr|hfsr|bfar)=(0x[0-9a-fA-F]+)")


_SYSTEM_EXCEPTIONS = {2: "NMI", 11: "SVCall", 12: "DebugMonitor", 14: "PendSV", 15: "SysTick"}
_SYSTEM_HANDLERS = {2: "NMI_Handler", 11: "SVC_Handler", 12: "DebugMon_Handler",
                    14: "PendSV_Handler", 15: "SysTick_Handler"}
_UNEXPECTED = re.compile(r"unexpected interrupt \(exception (\d+)\)")


def exception_name(number: int) -> str:
    return _SYSTEM_EXCEPTIONS.get(number, f"IRQ {number - 16}" if number >= 16 else
                                  f"exception {number}")


def handler_hint(number: int, irq_names: Sequence[str] = ()) -> str:
    """What to define for an exception with no handler, by its CMSIS name ("" unknown):
    "IRQ 28 is TIM2: define `TIM2_IRQHandler`"."""
    if number in _SYSTEM_HANDLERS:
        return f"{exception_name(number)}: define `{_SYSTEM_HANDLERS[number]}`"
    irq = number - 16
    name = irq_names[irq] if 0 <= irq < len(irq_names) else ""
    return f"IRQ {irq} is {name}: define `{name}_IRQHandler`" if name else ""


def package_fault(m: re.Match[str], tool: str, elf: Path, irq_names: Sequence[str] = ()) -> str:
    """The board package's fault line (uart.FAULT_LINE) in the words of the source."""
    pc, lr = int(m.group(2), 16), int(m.group(3), 16)
    regs = {k: int(v, 16) for k, v in _REG.findall(m.group(4))}
    at = f"PC {where(tool, elf, pc)}; return address: LR {where(tool, elf, lr & ~1)}"
    unexpected = _UNEXPECTED.match(m.group(1))
    if unexpected:
        n = int(unexpected.group(1))
        hint = handler_hint(n, irq_names)
        return (f"the firmware took an interrupt it has no handler for: {exception_name(n)} "
                f"(exception {n}; the board package's Default_Handler caught it). "
                + (f"{hint} (that name is the one the vector table calls). " if hint else "")
                + f"Interrupted at {at}")
    kind = m.group(1)
    if "cfsr" in regs:
        kind = fault_kind(regs["cfsr"], regs.get("hfsr", 0), regs.get("bfar", 0), 0)
    return f"the firmware crashed: {kind}. Faulting instruction: {at}.{m.group(4)}"


_FRIENDLY = {"avr-timer8": "avr-timer8 (the 8-bit Timer0 and Timer2)"}
QUIET_MOST = 32  # accesses to a device the board package touches that go untold
_UNIMP = re.compile(r"^(\S+): unimplemented device ", re.M)
_UNIMP_LINE = re.compile(r"^\S+: unimplemented device [^\n]*\n", re.M)
_INVALID = re.compile(r"^Invalid (read|write) at addr (0x[0-9A-Fa-f]+)")


@dataclass
class QemuLog:
    """QEMU's stderr (its -d log and its own errors), counted as it streams, bounded."""

    devices: dict[str, int] = field(default_factory=dict)  # unmodelled device -> accesses
    invalid: dict[str, int] = field(default_factory=dict)  # "read 0x..." -> count
    other: list[str] = field(default_factory=list)  # QEMU's own messages (first ones)
    lines: int = 0
    _partial: str = ""
    MAX_KEYS = 40
    MAX_OTHER = 40

    def feed(self, text: str) -> None:
        text = self._partial + text
        cut = text.rfind("\n") + 1
        self._partial = text[cut:][-4096:]
        body = text[:cut]
        # The flood (a firmware polling an unmodelled register) is counted in C, by the
        # regex engine and Counter; only the rare other lines are looked at one by one.
        found = Counter(_UNIMP.findall(body))
        self.lines += sum(found.values())
        for device, n in found.items():
            self._count(self.devices, device, n)
        if sum(found.values()) < body.count("\n"):
            for line in _UNIMP_LINE.sub("", body).split("\n"):
                if line:
                    self._line(line)

    def close(self) -> None:
        if self._partial:
            self.feed("\n")

    def _line(self, line: str) -> None:
        self.lines += 1
        m = _INVALID.match(line)
        if m:
            self._count(self.invalid, f"{m.group(1)} at {m.group(2)}")
            return
        if line.strip() and len(self.other) < self.MAX_OTHER:
            self.other.append(line[:300])

    def _count(self, table: dict[str, int], key: str, n: int = 1) -> None:
        if key in table or len(table) < self.MAX_KEYS:
            table[key] = table.get(key, 0) + n

    def unmodelled(self, quiet: list[str]) -> str:
        """The note on unmodelled devices the firmware touched ("" if none but ``quiet``)."""
        # the board package's own set-up touches a device a few times; a firmware that
        # waits on it (an RCC ready bit) touches it far more, and that is told
        touched = {k: v for k, v in self.devices.items() if k not in quiet or v > QUIET_MOST}
        if not touched:
            return ""
        listed = ", ".join(f"{_FRIENDLY.get(k, k)} ({v} accesses)" for k, v in sorted(
            touched.items(), key=lambda kv: -kv[1])[:10])
        return (f"the firmware touched peripherals QEMU does not model: {listed}. They read "
                "as 0 and ignore writes, so code that waits on them hangs and their results "
                "are not real: this part needs a real board (backend = \"probe\")")

    def lowest_below(self, start: int, reach: int = 1 << 24) -> int | None:
        """The lowest bad access within ``reach`` bytes below ``start`` (the RAM's start:
        a stack that grew past it), None when there was none."""
        found = [int(k.rsplit(" ", 1)[1], 16) for k in self.invalid]
        below = [a for a in found if start - reach <= a < start]
        return min(below) if below else None

    def bad_accesses(self) -> str:
        if not self.invalid:
            return ""
        listed = ", ".join(f"{k} ({v}x)" for k, v in list(self.invalid.items())[:8])
        return f"accesses to addresses with no memory or device: {listed}"


_LOCKUP = re.compile(r"Lockup|can't escalate", re.I)
_R15 = re.compile(r"R15=([0-9a-fA-F]{8})")
_R14 = re.compile(r"R14=([0-9a-fA-F]{8})")


def lockup(log: QemuLog) -> tuple[str, int | None, int | None]:
    """A CPU lockup QEMU aborted on: its message, and PC and LR from its register dump."""
    text = "\n".join(log.other)
    if not _LOCKUP.search(text):
        return "", None, None
    line = next(ln for ln in log.other if _LOCKUP.search(ln))
    pc = _R15.search(text)
    lr = _R14.search(text)
    return (line.strip(), int(pc.group(1), 16) if pc else None,
            int(lr.group(1), 16) if lr else None)


_SEMIHOSTING = re.compile(r"Unsupported SemiHosting SWI (0x[0-9a-fA-F]+)")


def semihosting_abort(log: QemuLog) -> tuple[str, int | None, int | None]:
    """A semihosting call QEMU aborted on: the operation, and PC and LR from its dump."""
    text = "\n".join(log.other)
    m = _SEMIHOSTING.search(text)
    if not m:
        return "", None, None
    pc = _R15.search(text)
    lr = _R14.search(text)
    return (m.group(1), int(pc.group(1), 16) if pc else None,
            int(lr.group(1), 16) if lr else None)
