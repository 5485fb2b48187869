"""Keeping a local program's processes contained, beyond its process group.

The process group and the walk over parent links (``targets.local``) find
everything a program starts unless a process both leaves the session
(``setsid``) and loses its parent (a double fork). Three more guards:

- a parent-death signal (``prctl(PR_SET_PDEATHSIG)``) on the direct child, so
  the program dies with VerifyBot even when VerifyBot is SIGKILLed;
- a cgroup per run, where the machine lets us make one (a writable cgroup v2
  folder, as under a root container or a delegated user slice): every process
  the program starts stays in it whatever it does, and ``cgroup.kill`` ends
  them all; what is still there after the tree was stopped had escaped, and is
  named in the verdict;
- a marker variable ``VERIFYBOT_RUN=<token>`` in each run's environment, which
  every process the program starts inherits (a setsid double fork too): after
  the run, /proc/*/environ of our user is searched for the token, so what
  escaped is found, named and killed even where no cgroup can be made (a
  process that wipes its environment or execs with ``env -i`` is not found);
- the process group, leader start time and cgroup of each run are recorded, so
  the next start can kill what a SIGKILLed VerifyBot left behind, after
  checking the group is still the one recorded (an unrelated process that
  reuses the number is never hit).
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path

PR_SET_PDEATHSIG = 1
MARKER = "VERIFYBOT_RUN"  # the variable that tags every process of one run
NO_CGROUP = "VERIFYBOT_NO_CGROUP"  # "1": never make a cgroup (the marker check still runs)
_counter = itertools.count(1)
_libc: ctypes.CDLL | None = None


def _prctl_pdeathsig(parent: int) -> None:
    """In the child before exec: die by SIGKILL when the parent (VerifyBot) dies."""
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(137)


def preexec(cgroup: Path | None) -> object:
    """The function the child runs before exec (None where nothing applies)."""
    if not sys.platform.startswith("linux"):
        return None
    global _libc
    if _libc is None:  # loaded in the parent: nothing is loaded after the fork
        _libc = ctypes.CDLL(None, use_errno=True)
    procs = str(cgroup / "cgroup.procs") if cgroup else None
    parent = os.getpid()

    def run() -> None:
        _prctl_pdeathsig(parent)
        if procs:
            try:
                fd = os.open(procs, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            except OSError:
                pass  # the run goes on uncontained; the leftover check says so
    return run


# -- cgroups ---------------------------------------------------------------------------


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
    if base is None:
        return None
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


def kill_cgroup(cgroup: Path) -> list[int]:
    """KILL everything in the cgroup; return the pids that were there."""
    pids = cgroup_pids(cgroup)
    if not pids:
        return []
    try:
        (cgroup / "cgroup.kill").write_text("1")
    except OSError:
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    return pids


def remove_cgroup(cgroup: Path) -> None:
    with contextlib.suppress(OSError):
        cgroup.rmdir()


# -- the run marker ------------------------------------------------------------------


def new_token() -> str:
    """A token unique to one run, for its ``VERIFYBOT_RUN`` variable."""
    return f"{os.getpid()}-{next(_counter)}-{secrets.token_hex(8)}"


def marker_pids(token: str) -> list[int]:
    """Live processes of our user whose environment carries ``VERIFYBOT_RUN=token``."""
    if not token or not os.path.isdir("/proc/self"):
        return []
    needle = f"{MARKER}={token}".encode()
    me, uid = os.getpid(), os.getuid()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            if entry.stat().st_uid != uid:
                continue
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle + b"\0" in env or env.endswith(needle):
            if not _zombie(int(entry.name)):
                found.append(int(entry.name))
    return found


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return True
    return raw[raw.rfind(b")") + 2:][:1] in (b"Z", b"X")


def kill_marked(token: str, rounds: int = 50) -> tuple[list[str], list[str]]:
    """KILL every process carrying the run's marker: (named killed, named not killable)."""
    pids = marker_pids(token)
    names = {pid: describe(pid) for pid in pids}
    for _ in range(rounds):
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
        pids = marker_pids(token)
        names.update((pid, describe(pid)) for pid in pids if pid not in names)
    return [n for p, n in names.items() if p not in pids], [names[p] for p in pids]


# -- processes --------------------------------------------------------------------------


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    fields = raw[raw.rfind(b")") + 2:].split()
    return int(fields[19]) if len(fields) > 19 else None


def describe(pid: int) -> str:
    """'1234 (sleep)' for a verdict line."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        name = "?"
    return f"{pid} ({name})"


def kill_leftovers(pgid: int, leader_start: int | None, cgroup: str | None) -> list[int]:
    """Kill a dead session's program left running; return the pids killed.

    The group is ours when its leader is alive with the recorded start time, or
    when the leader is gone and members remain (the kernel does not hand out a
    number still used as a group id, so those members are the recorded group's).
    """
    killed: list[int] = []
    if cgroup:
        path = Path(cgroup)
        if path.is_dir() and path.name.startswith("verifybot-"):
            killed += kill_cgroup(path)
            remove_cgroup(path)
    if pgid <= 1:
        return killed
    now = start_time(pgid)
    if now is not None and now != leader_start:
        return killed  # the number belongs to an unrelated process now
    members = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    members.append(int(entry.name))
            except OSError:
                continue
    if members:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
        killed += members
    return killed


# -- live runs, recorded so the next start can clean up after a SIGKILL ------------------

LIVE_DIR = Path("runs") / ".live"


def record_live(workspace: Path, pgid: int, cgroup: Path | None,
                token: str = "") -> Path | None:
    """A note that this process runs group ``pgid``; removed when the run ends."""
    folder = workspace / LIVE_DIR
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / f"{os.getpid()}-{pgid}.json"
        path.write_text(json.dumps({
            "owner": os.getpid(), "owner_start": start_time(os.getpid()),
            "pgid": pgid, "leader_start": start_time(pgid),
            "cgroup": str(cgroup) if cgroup else None, "token": token}))
        return path
    except OSError:
        return None


def clear_live(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def sweep_live(workspace: Path) -> list[str]:
    """Kill what runs of dead VerifyBot processes left behind; describe what was killed."""
    folder = workspace / LIVE_DIR
    if not folder.is_dir():
        return []
    killed: list[str] = []
    for path in folder.glob("*.json"):
        try:
            note = json.loads(path.read_text())
            owner = int(note["owner"])
        except (OSError, ValueError, KeyError, TypeError):
            clear_live(path)
            continue
        if start_time(owner) is not None and start_time(owner) == note.get("owner_start"):
            continue  # its VerifyBot still runs
        pids = kill_leftovers(int(note.get("pgid") or 0), note.get("leader_start"),
                              note.get("cgroup"))
        killed += [str(p) for p in pids]
        # What escaped the group (a setsid double fork) still carries the run's marker.
        killed += [n.split(" ", 1)[0] for n in kill_marked(str(note.get("token") or ""))[0]
                   if n.split(" ", 1)[0] not in killed]
        clear_live(path)
    return killed
