"""What one sandboxed run may use, and which limit it hit.

Every sandboxed run (its build and its program) has limits, from ``[targets.NAME]``
(``max_processes``, ``max_memory_mb``, ``tmp_mb``, ``max_file_mb``, ``max_disk_mb``;
0: none). Each is held by something that costs a run nothing measurable:

- memory and file size: rlimits set in the child before it starts bubblewrap
  (RLIMIT_DATA counts what a process writes to, not address space it only reserves,
  so runtimes that reserve big ranges still start; RLIMIT_FSIZE);
- processes: ``ulimit`` in the sandbox's init, where RLIMIT_NPROC counts the processes
  of the sandbox's own user namespace; root is exempt from RLIMIT_NPROC, so a run as
  root also gets ``pids.max`` in a cgroup where one can be made (the run's cgroup v2,
  or a cgroup v1 ``pids`` hierarchy);
- /tmp: a tmpfs of that size (bubblewrap's ``--size``);
- the run folder: its size, looked at while the program runs (``watch_disk``); the
  program is stopped once it passes the limit.

A limit hit shows as an error the program sees (EAGAIN on fork, ENOMEM, EFBIG or
SIGXFSZ, ENOSPC): ``hit`` reads those signs, and the cgroup's own count where there is
one, and the verdict names the limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from verifybot_tui.targets.containment.cgroups import make_cgroup, write_control

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    processes: int = 256
    memory_mb: int = 1024
    tmp_mb: int = 256
    file_mb: int = 512
    disk_mb: int = 1024

    @classmethod
    def of(cls, target: object) -> Limits:
        """The limits a target's config sets (the defaults for what it does not)."""
        d = cls()
        return cls(processes=getattr(target, "max_processes", d.processes),
                   memory_mb=getattr(target, "max_memory_mb", d.memory_mb),
                   tmp_mb=getattr(target, "tmp_mb", d.tmp_mb),
                   file_mb=getattr(target, "max_file_mb", d.file_mb),
                   disk_mb=getattr(target, "max_disk_mb", d.disk_mb))

    def rlimits(self) -> list[tuple[int, int]]:
        """(resource, bytes) to set in the child before it starts bubblewrap."""
        return [(res, mb * MB) for res, mb in ((resource.RLIMIT_DATA, self.memory_mb),
                                                (resource.RLIMIT_FSIZE, self.file_mb))
                if mb > 0]

    def init_line(self) -> str:
        """The shell line the sandbox's init starts with: the process limit (``-u`` in
        bash, ``-p`` in dash and busybox; builtins, so it costs nothing)."""
        n = self.processes
        return f"ulimit -u {n} 2>/dev/null || ulimit -p {n} 2>/dev/null\n" if n > 0 else ""

    def tmp_args(self) -> list[str]:
        """The private /tmp, sized where bubblewrap can size a tmpfs (0.7 and later)."""
        if self.tmp_mb > 0 and _tmpfs_size():
            return ["--size", str(self.tmp_mb * MB), "--tmpfs", "/tmp"]
        return ["--tmpfs", "/tmp"]

    def words(self, which: str) -> str:
        """A limit as a verdict names it: "the memory limit (1024 MB, max_memory_mb)"."""
        return {"processes": f"the process limit ({self.processes}, max_processes)",
                "memory": f"the memory limit ({self.memory_mb} MB, max_memory_mb)",
                "tmp": f"the size limit of /tmp ({self.tmp_mb} MB, tmp_mb)",
                "file": f"the file size limit ({self.file_mb} MB, max_file_mb)",
                "disk": f"the run folder's size limit ({self.disk_mb} MB, max_disk_mb)"}[which]


_SIZE: list[bool] = []


def _tmpfs_size() -> bool:
    """Whether this bubblewrap knows ``--size`` (asked once)."""
    if not _SIZE:
        try:
            out = subprocess.run(["bwrap", "--help"], capture_output=True, text=True,
                                 timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            out = ""
        _SIZE.append("--size" in out)
    return _SIZE[0]


def set_rlimits(rlimits: list[tuple[int, int]]) -> None:
    """In the child before exec: soft and hard, so nothing in the sandbox raises them."""
    for res, value in rlimits:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(res, (value, value))


# -- a process limit root cannot ignore: pids.max ----------------------------------------


def _v1_pids_base() -> Path | None:
    """This process's folder in a cgroup v1 ``pids`` hierarchy, if it is writable."""
    mount = own = None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fs = right.split()
                if len(fs) >= 3 and fs[0] == "cgroup" and "pids" in fs[2].split(","):
                    mount = left.split()[4]
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if "pids" in controllers.split(","):
                    own = path
    except (OSError, ValueError):
        return None
    if mount is None or own is None:
        return None
    base = Path(mount) / own.lstrip("/")
    return base if os.access(base, os.W_OK) else None


_PIDS_BASE: list[Path | None] = []


def v1_pids_base() -> Path | None:
    """The cgroup v1 ``pids`` folder runs get their cgroups in (None: none, or not ours)."""
    if not _PIDS_BASE:
        _PIDS_BASE.append(_v1_pids_base() if os.geteuid() == 0 else None)
    return _PIDS_BASE[0]


def run_cgroup(cgroup: Path | None, limits: Limits) -> Path | None:
    """The cgroup a run goes in, with its ``pids.max`` where root needs one (RLIMIT_NPROC
    holds for the others): the run's own cgroup v2 where its pids controller is on; else
    (a host with cgroup v1 controllers) a new cgroup in the v1 ``pids`` hierarchy takes
    its place, the v2 one removed: each cgroup a process is moved into costs a run
    milliseconds, so a run is moved into one only. Else ``cgroup`` as it was."""
    if os.geteuid() != 0 or limits.processes <= 0:
        return cgroup
    most = str(limits.processes).encode()
    if cgroup is not None and write_control(cgroup / "pids.max", most):
        return cgroup
    base = v1_pids_base()
    if base is None:
        return cgroup
    path = make_cgroup(base)
    if path is None:
        return cgroup
    if not write_control(path / "pids.max", most):
        with contextlib.suppress(OSError):
            path.rmdir()
        return cgroup
    if cgroup is not None:
        with contextlib.suppress(OSError):
            cgroup.rmdir()  # nothing in it yet
    return path


def pids_max_hit(cgroups: list[Path]) -> bool:
    """Whether a fork was refused at ``pids.max`` in any of these cgroups."""
    for cgroup in cgroups:
        with contextlib.suppress(OSError, ValueError):
            for line in (cgroup / "pids.events").read_text().splitlines():
                key, _, count = line.partition(" ")
                if key == "max" and int(count) > 0:
                    return True
    return False


# -- the run folder, watched while the program runs --------------------------------------


def folder_bytes(folder: Path, stop_at: int) -> int:
    """The bytes a folder's files take on disk (stops counting past ``stop_at``)."""
    total = 0
    todo = [str(folder)]
    while todo and total <= stop_at:
        with contextlib.suppress(OSError), os.scandir(todo.pop()) as entries:
            for e in entries:
                with contextlib.suppress(OSError):
                    st = e.stat(follow_symlinks=False)
                    total += st.st_blocks * 512
                    if e.is_dir(follow_symlinks=False):
                        todo.append(e.path)
    return total


async def watch_disk(folder: Path, limits: Limits, on_full: Callable[[], None],
                     every: float = 0.25) -> None:
    """Look at the run folder's size every ``every`` seconds while the program runs
    (cancelled when it ends); past the limit, ``on_full`` is called once and the
    watch ends. A short run is never looked at."""
    if limits.disk_mb <= 0:
        return
    cap = limits.disk_mb * MB
    while True:
        await asyncio.sleep(every)
        if await asyncio.to_thread(folder_bytes, folder, cap) > cap:
            on_full()
            return


# -- which limit a run hit -----------------------------------------------------------------

_SIGNS = (
    ("processes", ("Resource temporarily unavailable", "fork: retry", "BlockingIOError",
                   "can't start new thread", "can't fork", "EAGAIN")),
    ("memory", ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory",
                "Out of memory", "ENOMEM", "memory allocation of")),
    ("file", ("File too large", "EFBIG")),
    ("tmp", ("No space left on device", "ENOSPC")),
)


def hit(exit_code: int | None, stderr: str, *, disk_full: bool, pids_max: bool,
        failed: bool) -> str:
    """Which limit a finished run hit ("" none seen): certain from our own watch, the
    cgroup's count and SIGXFSZ; from the program's own error words where it failed."""
    if disk_full:
        return "disk"
    if pids_max:
        return "processes"
    if exit_code in (128 + signal.SIGXFSZ, -signal.SIGXFSZ):
        return "file"
    if not failed:
        return ""
    tail = stderr[-4000:]
    for which, words in _SIGNS:
        if any(w in tail for w in words):
            return which
    return ""


class Guard:
    """The limits of one sandboxed run, from its start to its verdict: the cgroup its
    process limit needs (root: ``cgroup``, which the run goes in instead of the one it
    was given), the rlimits its child sets, the watch on its folder."""

    def __init__(self, limits: Limits, cgroup: Path | None) -> None:
        self.limits = limits
        self.cgroup = run_cgroup(cgroup, limits)
        self.disk_full = False
        self._watch: asyncio.Future[None] | None = None

    def watch(self, folder: Path, stop: Callable[[], object]) -> None:
        """Watch the run folder from now on; past the limit, ``stop`` the program."""
        def full() -> None:
            self.disk_full = True
            stop()
        self._watch = asyncio.ensure_future(watch_disk(folder, self.limits, full))

    def stop_watch(self) -> None:
        if self._watch is not None:
            self._watch.cancel()

    def finish(self, exit_code: int | None, stderr: str, failed: bool) -> str:
        """The watch ended; the limit hit, in words for the verdict ("" none). The run's
        cgroup is removed with the run's (``containment.cgroups.remove_cgroup``)."""
        self.stop_watch()
        which = hit(exit_code, stderr, disk_full=self.disk_full,
                    pids_max=pids_max_hit([self.cgroup] if self.cgroup else []),
                    failed=failed)
        return f"the run hit {self.limits.words(which)}" if which else ""
