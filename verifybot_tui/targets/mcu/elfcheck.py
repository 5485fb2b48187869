"""The firmware's ELF checked before it runs: it fits the board, and its vector table is sane.

Only what cannot run is refused (a problem): no vector table at the start of
flash, an initial stack pointer outside RAM, an image larger than the flash or
the RAM, something loaded where the chip has no memory. Those would fail in the
emulator (or brick a real board) with a message far from the cause. What is
merely odd (a 0 or out-of-flash fault vector, a reset handler with its Thumb
bit clear, initial data loaded straight into RAM) is a warning: the firmware
runs, and the feedback carries the warning in case it is the cause.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from verifybot_tui.targets.mcu.boards import Board

PT_LOAD = 1


@dataclass
class Segment:
    vaddr: int
    paddr: int
    filesz: int
    memsz: int


@dataclass
class ElfInfo:
    flash_used: int = 0
    ram_used: int = 0
    vectors: list[int] = field(default_factory=list)  # Cortex-M: the first 16 words
    problems: list[str] = field(default_factory=list)  # it cannot run: refused
    warnings: list[str] = field(default_factory=list)  # odd, but it runs: told in the feedback

    def summary(self, board: Board) -> str:
        return (f"flash {self.flash_used:,} of {board.flash[1]:,} bytes, "
                f"RAM {self.ram_used:,} of {board.ram[1]:,} bytes (static)")


def _segments(data: bytes) -> tuple[list[Segment], str]:
    if data[:4] != b"\x7fELF":
        return [], "it is not an ELF file"
    if data[4] != 1 or data[5] != 1:
        return [], "it is not a 32-bit little-endian ELF (built for another CPU?)"
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    segs = []
    for i in range(phnum):
        p_type, offset, vaddr, paddr, filesz, memsz = struct.unpack_from(
            "<IIIIII", data, phoff + i * phentsize)
        if p_type == PT_LOAD and memsz:
            segs.append(Segment(vaddr, paddr, filesz, memsz))
    return segs, ""


def _read_at(data: bytes, address: int, length: int) -> bytes | None:
    """Bytes the firmware puts at a (load) address, read from the file."""
    phoff, = struct.unpack_from("<I", data, 28)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    for i in range(phnum):
        p_type, offset, _vaddr, paddr, filesz, _memsz = struct.unpack_from(
            "<IIIIII", data, phoff + i * phentsize)
        if p_type == PT_LOAD and paddr <= address and address + length <= paddr + filesz:
            start = offset + address - paddr
            return data[start:start + length]
    return None


# What fails first on the chip comes first: the vector table it reads at reset (the stack
# pointer, then the reset vector), then where the image loads, then whether it fits.
_FIRST, _LOAD, _SIZE = 0, 1, 2


def check_elf(path: Path, board: Board) -> ElfInfo:
    """Sizes, vectors and every problem found (none: fit to run), in the order the chip
    would meet them."""
    info = ElfInfo()
    data = path.read_bytes()
    segs, why = _segments(data)
    if why:
        info.problems.append(f"{path.name}: {why}")
        return info
    found: list[tuple[int, str]] = []
    for s in segs:
        if s.filesz and board.in_flash(s.paddr, s.filesz):
            info.flash_used += s.filesz
        elif s.filesz and board.in_ram(s.paddr, s.filesz):
            info.warnings.append(f"{s.filesz} bytes of initial contents load straight into RAM "
                                 f"at {s.paddr:#x}, not from flash: the emulator loads them, a "
                                 "real chip starts with that RAM uninitialised")
        elif s.filesz:
            found.append((_LOAD, f"a segment of {s.filesz} bytes loads at {s.paddr:#x}, where "
                                 f"the {board.mcu} has neither flash ({_memory(board)}) nor RAM"))
        if board.in_ram(s.vaddr):
            info.ram_used += s.memsz
            if not board.in_ram(s.vaddr, s.memsz):
                found.append((_SIZE, f"RAM overflows: {s.memsz} bytes at {s.vaddr:#x} pass the "
                                     f"end of RAM ({board.ram[0] + board.ram[1]:#x})"))
    if info.flash_used > board.flash[1]:
        found.append((_SIZE, f"the firmware needs {info.flash_used} bytes of flash; the "
                             f"{board.mcu} has {board.flash[1]}"))
    if info.ram_used > board.ram[1]:
        found.append((_SIZE, f"the firmware needs {info.ram_used} bytes of RAM; the "
                             f"{board.mcu} has {board.ram[1]}"))
    if board.arch == "cortex-m":
        found += [(_FIRST, p) for p in _check_vectors(data, board, info)]
    info.problems += [text for _, text in sorted(found, key=lambda f: f[0])]
    return info


def _memory(board: Board) -> str:
    alias = board.flash_alias
    return f"{board.flash[0]:#x} + {board.flash[1]:#x}" + (
        f", seen again at {alias[0]:#x}" if alias else "")


def _check_vectors(data: bytes, board: Board, info: ElfInfo) -> list[str]:
    """The vector table where the chip reads it at reset (the flash, or its alias at 0x0):
    its problems, stack pointer first."""
    starts = [board.flash[0], *board.flash_alias[:1]]
    raw = next((r for r in (_read_at(data, a, 64) for a in starts) if r is not None), None)
    if raw is None:
        return [f"no vector table at the start of flash ({board.flash[0]:#x}): the linker "
                "script must put it first (KEEP(*(.isr_vector)))"]
    problems = []
    info.vectors = list(struct.unpack("<16I", raw))
    sp, reset, hardfault = info.vectors[0], info.vectors[1], info.vectors[3]
    end_of_ram = board.ram[0] + board.ram[1]
    if not (board.ram[0] < sp <= end_of_ram):
        problems.append(f"vector table: the initial stack pointer {sp:#010x} is not in RAM "
                        f"({board.ram[0]:#x}-{end_of_ram:#x}): the first push at reset "
                        "would fault")
    for name, value in (("reset", reset), ("HardFault", hardfault)):
        if not value:
            info.warnings.append(f"vector table: the {name} entry is 0 (no handler: the CPU "
                                 "locks up if it is ever taken)")
        elif not board.in_flash(value & ~1):
            info.warnings.append(f"vector table: the {name} handler {value:#010x} is not in "
                                 "flash (is the table laid out as the Cortex-M expects: stack "
                                 "pointer, then reset, NMI, HardFault?)")
        elif not value & 1:
            info.warnings.append(f"vector table: the {name} handler {value:#010x} has bit 0 "
                                 "clear (Cortex-M runs Thumb code only: the CPU would fault)")
    return problems


@dataclass
class Symbols:
    """What an object file (or an ELF) defines: global and weak symbols, and its sections."""

    defined: dict[str, str] = field(default_factory=dict)  # name -> "global" or "weak"
    sections: dict[str, int] = field(default_factory=dict)  # name -> size
    address: dict[str, int] = field(default_factory=dict)  # name -> value (global and weak)
    local: set[str] = field(default_factory=set)  # local labels and static functions
    # sections holding a reset vector -> the reset handler's name ("" a local label)
    vector_tables: dict[str, str] = field(default_factory=dict)


SHF_ALLOC, SHF_EXECINSTR = 2, 4
SHT_SYMTAB, SHT_RELA, SHT_REL = 2, 4, 9
STT_FUNC, STT_SECTION = 2, 3


def read_symbols(path: Path) -> Symbols:
    """The symbol table read from the file itself (no nm to start: a build step fewer)."""
    found = Symbols()
    data = path.read_bytes()
    if data[:4] != b"\x7fELF" or data[4] != 1 or data[5] != 1:
        return found
    shoff, = struct.unpack_from("<I", data, 32)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 46)
    heads = [struct.unpack_from("<IIIIIIIIII", data, shoff + i * shentsize) for i in range(shnum)]
    if not heads or shstrndx >= len(heads):
        return found
    names_at = heads[shstrndx][4]

    def cstr(at: int) -> str:
        return data[at:data.index(b"\0", at)].decode("utf-8", "replace")

    names = [cstr(names_at + h[0]) for h in heads]
    for name, h in zip(names, heads, strict=True):
        found.sections[name] = h[5]
    table: list[tuple[int, int, str]] = []  # each symbol's (type, section index, name)
    for h in heads:
        if h[1] != SHT_SYMTAB:
            continue
        strtab = heads[h[6]][4]
        table = [(0, 0, "")]
        for at in range(h[4] + 16, h[4] + h[5], 16):
            name, value, _size, info, _other, shndx = struct.unpack_from("<IIIBBH", data, at)
            bind, kind = info >> 4, info & 0xF
            table.append((kind, shndx, cstr(strtab + name) if kind != STT_SECTION else ""))
            if shndx and bind in (1, 2) and name:
                found.defined[cstr(strtab + name)] = "global" if bind == 1 else "weak"
                found.address[cstr(strtab + name)] = value
            elif shndx and bind == 0 and name and kind != STT_SECTION:
                found.local.add(cstr(strtab + name))
    found.vector_tables = _vector_tables(data, heads, names, table)
    return found


def _vector_tables(data: bytes, heads: list[tuple[int, ...]], names: list[str],
                   table: list[tuple[int, int, str]]) -> dict[str, str]:
    """The data sections of an object that hold a Cortex-M vector table, whatever their name:
    word 1 (the reset vector) points at code, word 0 (the stack) does not, and words 2 and 3
    (NMI, HardFault) are code or nothing (a table of names and functions is not one)."""
    tables = {}
    for h in heads:
        if h[1] not in (SHT_REL, SHT_RELA) or not 0 < h[7] < len(heads):
            continue
        target = heads[h[7]]
        if target[2] & SHF_EXECINSTR or not target[2] & SHF_ALLOC or target[5] < 8:
            continue
        step = 8 if h[1] == SHT_REL else 12
        words: dict[int, tuple[bool, bool]] = {}  # offset -> (points at code, undefined)
        reset_name = ""
        for at in range(h[4], h[4] + h[5], step):
            offset, info = struct.unpack_from("<II", data, at)
            if offset < 16 and info >> 8 < len(table):
                kind, shndx, name = table[info >> 8]
                reset_name = name if offset == 4 else reset_name
                code = kind == STT_FUNC or (kind == STT_SECTION and 0 < shndx < len(heads)
                                            and bool(heads[shndx][2] & SHF_EXECINSTR))
                words[offset] = (code, shndx == 0)
        reset = words.get(4, (False, False))
        later = all(any(words.get(o, (True, False))) for o in (8, 12))
        if any(reset) and not words.get(0, (False, False))[0] and later:
            tables[names[h[7]]] = reset_name
    return tables
