"""What /proc says of processes: their states, parents, groups, sessions and start
times, read the one way every guard of ``targets.containment`` reads them.

The command name in ``/proc/PID/stat`` sits in parentheses and may itself hold
") ", so every field is counted from the last ")".
"""

from __future__ import annotations

import os
import time
from pathlib import Path

HAVE_PROC = os.path.isdir("/proc/self")


def _stat_fields(raw: bytes) -> list[bytes]:
    """The fields of a ``/proc/PID/stat`` line after the command name (state first)."""
    return raw[raw.rfind(b")") + 2:].split()


def proc_table() -> dict[int, tuple[str, int, int, int]]:
    """pid -> (state, ppid, pgrp, session) for every process we can see."""
    table: dict[int, tuple[str, int, int, int]] = {}
    if not HAVE_PROC:
        return table
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                raw = f.read()
        except OSError:
            continue
        fields = _stat_fields(raw)
        if len(fields) < 4:
            continue
        table[int(entry.name)] = (fields[0].decode(), int(fields[1]), int(fields[2]),
                                  int(fields[3]))
    return table


def children() -> dict[int, list[int]]:
    """ppid -> pids, from /proc (every process we can see)."""
    found: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    raw = f.read()
                ppid = int(_stat_fields(raw)[1])
            except (OSError, IndexError, ValueError):
                continue
            found.setdefault(ppid, []).append(int(entry.name))
    return found


def descendants(pids: set[int], children: dict[int, list[int]]) -> set[int]:
    """``pids`` and every descendant of theirs, by the ``children`` map (ppid -> pids)."""
    found, todo = set(pids), list(pids)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def zombie(pid: int) -> bool:
    """Whether the process is a zombie or gone (either way it runs nothing any more)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return True
    return raw[raw.rfind(b")") + 2:][:1] in (b"Z", b"X")


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (which runs nothing any more)."""
    return not zombie(pid)


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = _stat_fields(raw)
    return int(fields[19]) if len(fields) > 19 else None


def ticks_now() -> int:
    """Now, in the clock ticks since boot that start_time uses."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


def describe(pid: int) -> str:
    """'1234 (sleep)' for a verdict line."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        name = "?"
    return f"{pid} ({name})"
