"""What a sandboxed run sees: the file system, the devices, the powers and the environment
bubblewrap gives everything an answer brings (a program, its build, QEMU).

The sandbox's root is an empty read-only tmpfs. Into it go, read-only, only the
system's own folders (``SYSTEM``: /usr, /etc, /opt and the /bin, /lib links);
nothing else of the host is there: no home folder (so not ``~/.ssh``, not
VerifyBot's config, state, data or browser profiles), no /root, no /home, no
/run (agent sockets), no /var, no /mnt or /work or /srv, where other workspaces
live. A run then gets its own folder writable, a private /tmp, and read-only
what it needs from elsewhere: the interpreter or compiler it was given (its
installation prefix, e.g. a pyenv version under the home), the workspace venv,
the board package's cached objects. Files of /etc that other users cannot read
(``/etc/shadow``, sshd's host keys) are covered with an empty file when
VerifyBot runs as root: a program run as root still has root's uid, and a uid
owns its files without any capability. Each mount costs a run time, so there
are few: no /sys, no /var.

Its powers: every capability dropped (as root too), no new privileges (bwrap
sets ``no_new_privs``, so a setuid program gains nothing), its own session with
no controlling terminal (``/dev/tty`` cannot be opened, and ``TIOCSTI`` has no
terminal to type into), a minimal /dev (null, zero, random, a private pts), its
own PID and IPC namespaces.

Its environment: no agent sockets or display (``AGENT_VARS``), HOME set to its
private /tmp; the caller has already dropped the secret variables
(``core.settings.secrets.program_env``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
          "/nix/store", "/gnu/store")
HARDEN = ["--die-with-parent", "--unshare-pid", "--unshare-ipc", "--new-session",
          "--cap-drop", "ALL"]
# Variables that lead to an agent, a session bus or a display: a program would use
# them to sign with the user's keys, talk to the desktop or type into a window.
AGENT_VARS = ("SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "GNOME_KEYRING_CONTROL",
              "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY",
              "KRB5CCNAME", "XDG_RUNTIME_DIR")
# Where a program would look for the user's own files: not in the sandbox.
HOME_VARS = ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME",
             "XDG_CONFIG_DIRS", "XDG_DATA_DIRS")
# The board package's objects, compiled by VerifyBot from its own sources (never in
# an answer's sandbox), relative to the workspace: read-only in every build.
BOARD_CACHE = Path("runs") / ".vb_board_cache"
SANDBOX_HOME = "/tmp"  # a program's HOME: its private /tmp
MAX_MASKS = 400  # private files of /etc covered; a machine with more keeps the rest root-only
_LAYOUT: list[list[str]] = []


def scrub_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` without agent sockets and display (also for a run without a sandbox)."""
    return {k: v for k, v in env.items() if k not in AGENT_VARS}


def env_args() -> list[str]:
    """bubblewrap's own environment changes, applied inside whatever the caller passed."""
    args: list[str] = []
    for name in (*AGENT_VARS, *HOME_VARS):
        args += ["--unsetenv", name]
    return [*args, "--setenv", "HOME", SANDBOX_HOME]


def _system() -> list[str]:
    args: list[str] = []
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    return args


_SYSTEM_REAL: list[list[str]] = []


def _system_real() -> list[str]:
    """The system folders, resolved (once per process: a run asks for every tool)."""
    if not _SYSTEM_REAL:
        _SYSTEM_REAL.append([os.path.realpath(p) for p in SYSTEM if os.path.exists(p)])
    return _SYSTEM_REAL[0]


def visible(path: str | Path) -> bool:
    """Whether ``path`` (resolved) lies in the system folders every sandbox shows."""
    real = os.path.realpath(path)
    return any(real == s or real.startswith(s.rstrip("/") + "/") for s in _system_real())


def _resolver() -> list[str]:
    """/etc/resolv.conf's target where it lies outside /etc (systemd-resolved's /run)."""
    target = os.path.realpath("/etc/resolv.conf")
    if os.path.isfile(target) and not visible(target):
        return ["--ro-bind", target, target]
    return []


def lstat_each(folder: str, names: Iterable[str]) -> Iterator[tuple[str, os.stat_result]]:
    """(path, lstat) of each of ``names`` in ``folder`` that can still be looked at (what
    ``os.walk`` listed may be gone by now): for the walk over /etc here and the one
    over a run folder (``targets.local.run_folder``)."""
    for name in names:
        path = os.path.join(folder, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        yield path, st


def _private_etc() -> list[str]:
    """Cover what of /etc other users may not read: a program running as root keeps
    root's uid, which owns those files (``/etc/shadow``, ssh host keys) capability or not."""
    args: list[str] = []
    for folder, dirs, files in os.walk("/etc"):
        for path, st in lstat_each(folder, list(dirs)):
            if stat.S_ISDIR(st.st_mode) and st.st_mode & 0o005 != 0o005:
                dirs.remove(os.path.basename(path))
                args += ["--tmpfs", path, "--remount-ro", path]
        for path, st in lstat_each(folder, files):
            if stat.S_ISREG(st.st_mode) and not st.st_mode & stat.S_IROTH:
                args += ["--ro-bind", "/dev/null", path]
        if len(args) > 3 * MAX_MASKS:
            break
    return args


def layout() -> list[str]:
    """The mounts every sandbox starts from (worked out once per process)."""
    if not _LAYOUT:
        masks = _private_etc() if os.geteuid() == 0 else []  # others cannot read them
        _LAYOUT.append([*_system(), *_resolver(), *masks, "--dev", "/dev", "--proc", "/proc"])
    return _LAYOUT[0]  # then the private /tmp, sized: targets.sandbox.limits


def _home_like(path: Path) -> bool:
    """A folder too broad to show whole: the root, a home, or one holding a home."""
    home = Path.home()
    return len(path.parts) <= 2 or path == home or home.is_relative_to(path)


def tool_roots(tools: Iterable[str]) -> list[str]:
    """The folders to show read-only so these executables (interpreter, compiler,
    emulator, given by path) run: the installation prefix of each that lies outside
    the system folders (``~/.pyenv/versions/3.11.7`` for its ``bin/python3``), or its
    own folder where the prefix would be a home. A venv's interpreter brings the venv
    and the installation it was made from."""
    roots: list[str] = []
    for tool in tools:
        if not tool or os.sep not in tool:
            continue
        for exe in {os.path.abspath(tool), os.path.realpath(tool)}:
            if not os.path.exists(exe) or visible(exe):
                continue
            folder = Path(exe).parent
            root = folder.parent if folder.name == "bin" else folder
            if _home_like(root):
                root = folder
            if str(root) not in roots:
                roots.append(str(root))
    return roots

