"""A cgroup v2 per run, where the machine lets us make one: every process a program
starts stays in it whatever it does (setsid, a double fork), and ``cgroup.kill``
ends them all. Its control files are written without following a link (a planted
one would take the write elsewhere): ``write_control``, also for ``pids.max``
(``targets.sandbox.limits``).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
import time
from pathlib import Path

NO_CGROUP = "VERIFYBOT_NO_CGROUP"  # "1": never make a cgroup (the marker check still runs)
_counter = itertools.count(1)


def _cgroup2_base() -> Path | None:
    """The cgroup v2 folder this process lives in, if it is mounted and writable."""
    if not sys.platform.startswith("linux"):
        return None
    mount = None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "cgroup2":
                    mount = left.split()[4]
                    break
        own = ""
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                if line.startswith("0::"):
                    own = line[3:].strip()
    except OSError:
        return None
    if mount is None:
        return None
    base = Path(mount) / own.lstrip("/")
    if not base.is_dir() or not os.access(base, os.W_OK):
        base = Path(mount)
    if not (base / "cgroup.procs").exists() or not os.access(base, os.W_OK):
        return None
    return base


_BASE: list[Path | None] = []


def cgroup_base() -> Path | None:
    """The cgroup v2 folder runs get their cgroups in; None where there is none or
    ``VERIFYBOT_NO_CGROUP=1`` is set (to use, or test, the marker check alone)."""
    if os.environ.get(NO_CGROUP, "") not in ("", "0"):
        return None
    if not _BASE:
        _BASE.append(_cgroup2_base())
    return _BASE[0]


def new_cgroup() -> Path | None:
    """A fresh cgroup for one run, or None where the machine does not allow one."""
    base = cgroup_base()
    return None if base is None else make_cgroup(base)


def make_cgroup(base: Path) -> Path | None:
    """A fresh ``verifybot-*`` cgroup folder under ``base`` (a cgroup v2 folder, or one
    of a v1 hierarchy); None where it cannot be made."""
    path = base / f"verifybot-{os.getpid()}-{next(_counter)}"
    try:
        path.mkdir()
    except OSError:
        return None
    return path


def cgroup_pids(cgroup: Path) -> list[int]:
    try:
        text = (cgroup / "cgroup.procs").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def write_control(path: Path, data: bytes) -> bool:
    """Write a cgroup control file, opened without following a link; False where it
    cannot be opened or written."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        os.write(fd, data)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def kill_cgroup(cgroup: Path) -> list[int]:
    """KILL everything in the cgroup; return the pids that were there (each KILLed by
    itself where ``cgroup.kill`` cannot be written)."""
    pids = cgroup_pids(cgroup)
    if not pids:
        return []
    if not write_control(cgroup / "cgroup.kill", b"1"):
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return pids


def remove_cgroup(cgroup: Path, wait: float = 2.0) -> None:
    """rmdir the cgroup once it is empty: ``cgroup.kill`` only starts the killing,
    and a cgroup with a process (a zombie not yet released) cannot be removed."""
    deadline = time.monotonic() + wait
    while True:
        try:
            cgroup.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() >= deadline:
                return
        time.sleep(0.01)
