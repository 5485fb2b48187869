"""Live-run records: a note per running local program, so the next start can kill what
a SIGKILLed VerifyBot left behind (``runs/.live`` in the workspace).

A workspace may come from someone else (a shared disk, an unpacked archive), and its
records with it; whatever they say must not make VerifyBot kill or write anything.
So a record is believed only when this user's VerifyBot wrote it: a regular file (no
link) of ours, mode 0600, in a folder of ours, mode 0700 (``trusted``). Even then no
pid or process group is read from it and acted on (a number in a file names whatever
process has it now): what a record leads to is its run's cgroup, a folder directly
under the cgroup VerifyBot makes its cgroups in (``verifybot-*``, on the same cgroup
file system, no link), whose members the kernel names; and its run's marker token,
which every process of the run carries in its environment. The owner's pid is only
compared with its start time, to leave a record of a VerifyBot still running alone.
Records that are not ours are left where they are (not swept: the folder is not ours).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from verifybot_tui.core.store.workspace import private_dir, write_private
from verifybot_tui.targets.containment import cgroups
from verifybot_tui.targets.containment.markers import kill_marked
from verifybot_tui.targets.containment.proctable import start_time
from verifybot_tui.targets.sandbox.limits import v1_pids_base

LIVE_DIR = Path("runs") / ".live"
_TOKEN = re.compile(r"[0-9]+-[0-9]+-[0-9a-f]{16}")


def record_live(workspace: Path, pgid: int, cgroup: Path | None,
                token: str = "") -> Path | None:
    """A note that this process runs group ``pgid``; removed when the run ends."""
    folder = workspace / LIVE_DIR
    try:
        private_dir(folder)
        path = folder / f"{os.getpid()}-{pgid}.json"
        write_private(path, json.dumps({
            "owner": os.getpid(), "owner_start": start_time(os.getpid()),
            "pgid": pgid, "cgroup": str(cgroup) if cgroup else None, "token": token}))
        return path
    except OSError:
        return None


def clear_live(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def _ours(st: os.stat_result, mode: int, kind: int) -> bool:
    return (st.st_uid == os.getuid() and stat.S_IFMT(st.st_mode) == kind
            and stat.S_IMODE(st.st_mode) == mode)


def trusted(folder: Path) -> bool:
    """Whether the records folder is this user's VerifyBot's: ours, 0700, no link."""
    try:
        return _ours(os.lstat(folder), 0o700, stat.S_IFDIR)
    except OSError:
        return False


def _read(path: Path) -> dict[str, Any] | None:
    """A record, read without following a link, if it is ours and 0600."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not _ours(os.fstat(fd), 0o600, stat.S_IFREG):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            note = json.loads(f.read(65536))
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return note if isinstance(note, dict) else None


def own_cgroup(value: object) -> Path | None:
    """A recorded cgroup, if it is one VerifyBot makes: ``verifybot-*`` directly under
    a base of this process (its cgroup v2, or root's v1 ``pids`` folder), a real folder
    (no link) on the base's file system."""
    bases = [b for b in (cgroups.cgroup_base(), v1_pids_base()) if b is not None]
    if not bases or not isinstance(value, str) or not value:
        return None
    path = Path(value)
    base = path.parent
    if base not in bases or not path.name.startswith("verifybot-"):
        return None
    try:
        st, top = os.lstat(path), os.stat(base)
    except OSError:
        return None
    return path if stat.S_ISDIR(st.st_mode) and st.st_dev == top.st_dev else None


def _still_running(note: dict[str, Any]) -> bool:
    owner = note.get("owner")
    if not isinstance(owner, int) or owner <= 0:
        return False
    now = start_time(owner)
    return now is not None and now == note.get("owner_start")


def sweep_live(workspace: Path) -> list[str]:
    """Kill what runs of dead VerifyBot processes left behind (by their cgroup and their
    marker, never by a recorded pid); describe what was killed."""
    folder = workspace / LIVE_DIR
    if not trusted(folder):
        return []
    killed: list[str] = []
    for path in folder.glob("*.json"):
        note = _read(path)
        if note is None:
            continue  # not ours, or not a record: left alone
        if _still_running(note):
            continue  # its VerifyBot still runs
        cgroup = own_cgroup(note.get("cgroup"))
        if cgroup is not None:
            killed += [str(p) for p in cgroups.kill_cgroup(cgroup)]
            cgroups.remove_cgroup(cgroup)
        token = note.get("token")
        if isinstance(token, str) and _TOKEN.fullmatch(token):
            # What escaped the group (a setsid double fork) still carries the marker.
            killed += [n.split(" ", 1)[0] for n in kill_marked(token)[0]
                       if n.split(" ", 1)[0] not in killed]
        clear_live(path)
    return killed
