"""The registers that explain a silent or stuck firmware, read when it stopped.

"No output" and "waiting forever" often sit one register read away: a UART whose
transmitter was never enabled, a SysTick or timer never started, interrupts
never enabled. Each board file lists such checks as data (``[[explain]]``: a
register's address and size, a mask and the value that means trouble, when it
matters, and what to say); at a timeout or a silent exit the emulator's stub
reads them and the feedback says what was found. A check that ``needs`` a
handler is read only when the firmware defines that handler itself (a SysTick
never started matters only to a firmware with a SysTick_Handler).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from verifybot_tui.core.base.errors import ConfigError

# nothing printed (at a timeout or an exit); at any timeout; at the end of every run (a note:
# what the emulator does not do as the chip does, for a firmware that uses it)
WHEN = ("silent", "timeout", "end")
_KEYS = {"name": str, "address": int, "size": int, "mask": int, "equals": int, "when": str,
         "needs": list, "says": str, "differs": bool}


@dataclass(frozen=True)
class Check:
    name: str  # the register, as the reference manual names it
    address: int  # as the emulator's debugger sees it (AVR data space: 0x800000 + address);
    # -1: no register, ``says`` is told whenever the firmware ``needs`` it
    size: int  # bytes: 1, 2 or 4, little-endian
    mask: int
    equals: int  # (value & mask) == equals: what ``says`` tells
    when: str  # one of WHEN
    says: str
    needs: tuple[str, ...] = ()  # handlers of which the firmware must define one
    differs: bool = False  # (value & mask) != equals is what ``says`` tells


def parse(entries: Sequence[dict[str, Any]], where: str) -> list[Check]:
    """A board file's ``[[explain]]`` tables (ConfigError naming the entry and the key)."""
    checks = []
    for n, entry in enumerate(entries, 1):
        for key, value in entry.items():
            want = _KEYS.get(key)
            if want is None or not isinstance(value, want) or (isinstance(value, bool)
                                                                and want is not bool):
                raise ConfigError(f"{where}: explain entry {n}: key {key!r} "
                                  + ("is not known; expected one of " + ", ".join(_KEYS)
                                     if want is None else f"must be {want.__name__}"))
        missing = [k for k in ("name", "says") if k not in entry]
        if missing:
            raise ConfigError(f"{where}: explain entry {n} lacks {', '.join(missing)}")
        when = entry.get("when", "silent")
        size = entry.get("size", 4)
        if when not in WHEN or size not in (1, 2, 4):
            raise ConfigError(f"{where}: explain entry {n}: 'when' must be one of "
                              f"{', '.join(WHEN)} and 'size' 1, 2 or 4")
        checks.append(Check(entry["name"], entry.get("address", -1), size, entry.get("mask", 0),
                            entry.get("equals", 0), when, entry["says"],
                            tuple(str(s) for s in entry.get("needs", [])),
                            entry.get("differs", False)))
    return checks


def relevant(checks: Sequence[Check], defined: dict[str, str], *, silent: bool,
             timeout: bool) -> list[Check]:
    """The checks that matter for this stop and this firmware (``defined``: its symbols,
    name -> "global" or "weak"; a weak handler is the start-up code's default). The "end"
    checks matter at every stop; with both False, only they do."""
    def wanted(c: Check) -> bool:
        return (c.when == "silent" and silent) or (c.when == "timeout" and timeout) or (
            c.when == "end")

    def defines(c: Check) -> bool:
        return not c.needs or any(defined.get(n) == "global" for n in c.needs)

    return [c for c in checks if wanted(c) and defines(c)]


async def explain(checks: Sequence[Check],
                  read: Callable[[int, int], Awaitable[bytes | None]]) -> list[str]:
    """What the registers say: each check whose register holds the troubling value.
    ``read(address, size)`` reads memory through the stub; None (it could not) is skipped."""
    found = []
    for c in checks:
        if c.address < 0:
            found.append(c.says)
            continue
        raw = await read(c.address, c.size)
        if raw is None:
            continue
        value = int.from_bytes(raw[:c.size], "little")
        if (value & c.mask == c.equals) != c.differs:
            found.append(f"{c.says} ({c.name} = {value:#0{2 + 2 * c.size}x})")
    return found


def nvic_checks(irq_names: Sequence[str]) -> list[Check]:
    """For each device IRQ the board names: its handler is defined but the IRQ is not enabled
    in the NVIC (its ISER bit clear), so the handler never runs."""
    return [Check(f"NVIC_ISER{irq // 32}", 0xE000E100 + 4 * (irq // 32), 4, 1 << irq % 32, 0,
                  "timeout", f"{name}_IRQHandler is defined, but IRQ {irq} ({name}) is not "
                  f"enabled in the NVIC (NVIC_EnableIRQ({name}_IRQn) was never called)",
                  (f"{name}_IRQHandler",))
            for irq, name in enumerate(irq_names) if name]
