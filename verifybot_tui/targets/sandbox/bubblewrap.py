"""The bubblewrap command line a sandboxed run starts with, or why there is none here.

It puts together what a sandbox shows (``view``), the run's limits (``limits``) and
our init (``init_script``): the sandbox gets its own PID namespace, so the program
sees and signals only its own processes, cannot leave the namespace by any setsid,
cgroup move, environment wipe or uid change, and the kernel kills everything in it
when its first process ends.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from verifybot_tui.targets.sandbox import limits, view
from verifybot_tui.targets.sandbox.init_script import INIT_ARGV, SANDBOX_INIT

NO_SANDBOX = "VERIFYBOT_NO_SANDBOX"  # "1": never use bubblewrap (as sandbox = "off")
_BWRAP: list[str | None] = []


def _base(sized: limits.Limits | None = None) -> list[str]:
    """Every sandbox's options (``view``): powers dropped, the system read-only,
    no home, a minimal /dev, a private /tmp (of the limits' size)."""
    return [*view.HARDEN, *view.layout(), *(sized or limits.Limits()).tmp_args(),
            *view.env_args()]


def bwrap() -> str | None:
    """bubblewrap's path if it works here (tried once), else None."""
    if os.environ.get(NO_SANDBOX, "") not in ("", "0"):
        return None
    if not _BWRAP:
        path = shutil.which("bwrap") if sys.platform.startswith("linux") else None
        if path is not None:
            try:
                ok = subprocess.run([path, *_base(), "--remount-ro", "/", "--",
                                     *INIT_ARGV, "true"],
                                    capture_output=True,
                                    timeout=30, stdin=subprocess.DEVNULL).returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
            path = path if ok else None
        _BWRAP.append(path)
    return _BWRAP[0]


def sandbox_label(kind: str, mode: str) -> str:
    """What the status bar and the start say of a target's sandbox: "" where what an
    answer brings runs sandboxed (or the target is another machine), "no sandbox"
    where none can be made here, "sandbox off" where the config turned it off."""
    if kind not in ("local", "mcu"):  # an mcu target builds here, whatever runs it
        return ""
    if mode == "off":
        return "sandbox off"
    return "" if bwrap() is not None else "no sandbox"


def why_no_sandbox() -> str:
    """Why ``bwrap()`` found no sandbox here, in words for a message."""
    if os.environ.get(NO_SANDBOX, "") not in ("", "0"):
        return f"{NO_SANDBOX} is set"
    if not sys.platform.startswith("linux"):
        return "bubblewrap sandboxes exist on Linux only"
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt install bubblewrap)"
    return "bwrap cannot make namespaces here"


def no_sandbox_message(name: str) -> str:
    """What ``sandbox = "require"`` says where no sandbox can be made."""
    return (f"target {name}: sandbox = \"require\", but no sandbox can be made here "
            f"({why_no_sandbox()}); nothing was run. Install bubblewrap, let "
            "users make namespaces, or set sandbox = \"auto\" to run contained by process "
            "group only")


def sandbox_argv(workdir: Path, network: bool, read_only: Iterable[str | Path] = (),
                 writable: Iterable[str | Path] = (),
                 limited: limits.Limits | None = None) -> list[str] | None:
    """The bubblewrap prefix for a program run in ``workdir``; None where there is none.

    The system read-only, no home, a private /tmp (``view``); ``workdir``
    and ``writable`` (existing folders) writable, ``read_only`` (existing paths,
    e.g. a venv, an interpreter's prefix, the board cache) shown read-only; /proc
    is the namespace's own; ``network`` false leaves only a private loopback; the
    process and /tmp limits of ``limited`` (the defaults when None; the rlimits are
    the child's: ``targets.local.launch.preexec``). The program runs under
    ``SANDBOX_INIT``: the process started with this prefix wants a pipe as stdin (a
    socket where a build comes first: ``build_then_run``), whose other end
    ``escaped_in_sandbox`` reads once it ended."""
    path = bwrap()
    if path is None:
        return None
    limited = limited or limits.Limits()
    argv = [path, *_base(limited)]
    for ro in read_only:
        if os.path.exists(ro):
            argv += ["--ro-bind", str(ro), str(ro)]
    for rw in (*writable, workdir):
        if os.path.isdir(rw):
            argv += ["--bind", str(rw), str(rw)]
    if not network:
        argv.append("--unshare-net")
    init = ["/bin/sh", "-c", limited.init_line() + SANDBOX_INIT, "sandbox-init"]
    return [*argv, "--remount-ro", "/", "--chdir", str(workdir), "--", *init]


def sandboxed_tool(argv: list[str], folder: Path) -> list[str]:
    """A tool of VerifyBot's run on an answer's file (addr2line or objcopy on its ELF),
    in the sandbox a build runs in: ``folder`` (the file's) the only writable place, no
    network, the tool's installation shown; as it is where no sandbox can be made."""
    tool = shutil.which(argv[0]) or argv[0]
    box = sandbox_argv(folder, False, view.tool_roots([tool]))
    return [*box, *argv] if box else argv

