"""An answer's own start-up code and linker script, read as the answer wrote them.

People name these parts many ways: the vector table in ``.isr_vector``, ``.vectors``
or ``INTERRUPT_VECTOR``; the entry ``Reset_Handler``, ``_Reset``, ``_start`` or
``ResetISR``, global or a local label; the linker script's ``ENTRY()`` names it and
its sections may place ``startup.o (INTERRUPT_VECTOR)`` by the object's name. What
is read here: whether the answer brings a start-up of its own (so the package's is
left out), the object path its linker script expects for a source, and whether
its script keeps what ``--gc-sections`` would otherwise drop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from verifybot_tui.targets.mcu.elfcheck import Symbols

ENTRY_NAMES = ("Reset_Handler", "_Reset", "_start", "ResetISR", "reset_handler",
               "Reset_IRQHandler")
_ENTRY = re.compile(r"\bENTRY\s*\(\s*([A-Za-z_.$][\w.$]*)\s*\)")
_COMMENT = re.compile(r"/\*.*?\*/", re.S)
SECTION_NAME = re.compile(r"[A-Za-z_.$][\w.$]*")


def script_text(workdir: Path, scripts: list[str]) -> str:
    """The answer's linker scripts, comments removed."""
    return "\n".join(_COMMENT.sub(" ", (workdir / s).read_text(errors="replace"))
                     for s in scripts)


def script_entry(text: str) -> str:
    """The symbol the linker script's ENTRY() names ("" none)."""
    m = _ENTRY.search(text)
    return m.group(1) if m else ""


def object_path(source: str, text: str) -> str:
    """Where the object of ``source`` goes: the path the answer's linker script names for it
    (``startup.o``, ``build/startup.o``), else ``vb_build/<source path>.o``. Either way it
    keeps its source's name (startup.s gives startup.o)."""
    stem = Path(source).stem
    for m in re.finditer(r"([\w./*-]*?)\b" + re.escape(stem) + r"\.o\b", text):
        folder = m.group(1).lstrip("*")
        if "*" in folder or folder.startswith("/") or ".." in folder.split("/"):
            continue
        return f"{folder}{stem}.o"
    return f"vb_build/{Path(source).with_suffix('.o')}"


def keeps_sections(text: str) -> bool:
    """Whether the script can take -ffunction-sections and --gc-sections: it gathers
    ``.text.*`` by a wildcard (no orphan sections) and KEEPs something (its vector table)."""
    return "KEEP" in text and bool(re.search(r"\.text\s*\*|\.text\.\*", text))


@dataclass
class StartUp:
    """The answer's own start-up, as found ("" parts: not found)."""

    entry: str = ""  # the reset handler's name
    table: str = ""  # the section holding the vector table
    source: str = ""  # the file that holds it

    @property
    def found(self) -> bool:
        return bool(self.entry or self.table)

    def said(self) -> str:
        where = [f"section {self.table}" if self.table else "",
                 f"entry {self.entry}" if self.entry else ""]
        return f"start-up code and vector table from the answer ({self.source}: " \
               f"{', '.join(w for w in where if w)})"


def find(objects: dict[str, Symbols], entry: str) -> StartUp:
    """The answer's start-up among its objects (source name -> symbols): a section holding
    a reset vector, or an entry point by a usual name or its script's ENTRY(), local or not."""
    names = (entry, *ENTRY_NAMES) if entry else ENTRY_NAMES
    found = StartUp()
    for source, symbols in objects.items():
        tables = [t for t in symbols.vector_tables if SECTION_NAME.fullmatch(t)]
        named = [n for n in names if n in symbols.defined or n in symbols.local]
        if tables and not found.table:
            found.table, found.source = tables[0], source
            found.entry = symbols.vector_tables[tables[0]]  # what the reset vector names
        if named and not found.entry:
            found.entry = named[0]
            found.source = found.source or source
    return found
