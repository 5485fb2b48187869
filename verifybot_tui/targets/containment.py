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
- the cgroup and marker of each run are recorded (``targets.live_runs``), so
  the next start can kill what a SIGKILLed VerifyBot left behind.

Where bubblewrap works (any user, as long as the kernel lets unprivileged
users make namespaces, or as root), a run goes into a sandbox with its own PID
namespace (``sandbox_argv``; what it shows, the powers it drops and its
environment are ``targets.sandbox``'s): the program sees and signals only its own
processes, cannot leave the namespace by any setsid, cgroup move, environment
wipe or uid change, and the kernel kills everything in it when its first
process ends; before that, an init of ours in it (``SANDBOX_INIT``) names and
kills what the program left running, so the verdict still says a daemon was
left. The guards above stay on as a second line wherever the sandbox was not
seen to end as a whole (its cgroup empty, or no process with its marker left):
once it was, the namespace's end has killed all of it. Where there is no
sandbox, three more keep up with what the namespace would have stopped:

- VerifyBot makes itself a child subreaper, so a double-forked process that
  wiped its environment and left the cgroup is reparented to VerifyBot rather
  than to init, and is found as an adopted child (``adopted``);
- the marker check reads every user's processes when VerifyBot runs as root,
  so a child that changed its uid is still found;
- leftovers are frozen (SIGSTOP) until no new one appears, then KILLed
  (``freeze_and_kill``), so a daemon that keeps re-forking cannot outrun it.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import itertools
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from verifybot_tui.targets import limits, sandbox

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
NO_SANDBOX = "VERIFYBOT_NO_SANDBOX"  # "1": never use bubblewrap (as sandbox = "off")
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


def preexec(cgroup: Path | None, guard: limits.Guard | None = None) -> object:
    """The function the child runs before exec (None where nothing applies): the
    parent-death signal, the run's cgroups, and (``guard``) its limits' rlimits."""
    if not sys.platform.startswith("linux"):
        return None
    global _libc
    if _libc is None:  # loaded in the parent: nothing is loaded after the fork
        _libc = ctypes.CDLL(None, use_errno=True)
    procs = [str(cgroup / "cgroup.procs")] if cgroup else []
    rlimits = guard.limits.rlimits() if guard is not None else []
    parent = os.getpid()

    def run() -> None:
        _prctl_pdeathsig(parent)
        for path in procs:
            try:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            except OSError:
                pass  # the run goes on uncontained; the leftover check says so
        limits.set_rlimits(rlimits)
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
    """KILL everything in the cgroup; return the pids that were there. ``cgroup.kill``
    is opened without following a link (a planted one would take the "1" elsewhere)."""
    pids = cgroup_pids(cgroup)
    if not pids:
        return []
    try:
        fd = os.open(cgroup / "cgroup.kill", os.O_WRONLY | os.O_NOFOLLOW)
        try:
            os.write(fd, b"1")
        finally:
            os.close(fd)
    except OSError:
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
            if uid != 0 and entry.stat().st_uid != uid:
                continue  # root reads every user's: a child may have changed its uid
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle + b"\0" in env or env.endswith(needle):
            if not _zombie(int(entry.name)):
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (which runs nothing any more)."""
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return True
    return raw[raw.rfind(b")") + 2:][:1] in (b"Z", b"X")


def kill_marked(token: str, extra: Callable[[], set[int]] | None = None
                ) -> tuple[list[str], list[str]]:
    """KILL every process carrying the run's marker, and what ``extra`` finds (adopted
    orphans), with all their descendants: (named killed, named not killable)."""
    if not token and extra is None:
        return [], []
    return freeze_and_kill(lambda: set(marker_pids(token)) | (extra() if extra else set()))


def _children() -> dict[int, list[int]]:
    """ppid -> pids, from /proc (every process we can see)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    raw = f.read()
                ppid = int(raw[raw.rfind(b")") + 2:].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    return children


def descendants(pids: set[int], children: dict[int, list[int]]) -> set[int]:
    """``pids`` and every descendant of theirs, by the ``children`` map (ppid -> pids)."""
    found, todo = set(pids), list(pids)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _with_descendants(pids: set[int]) -> set[int]:
    return descendants(pids, _children()) - {os.getpid()}


def freeze_and_kill(find: Callable[[], set[int]], passes: int = 5
                    ) -> tuple[list[str], list[str]]:
    """Stop (SIGSTOP) what ``find`` returns, its process groups and all its
    descendants, again and again until no new process shows up, then KILL them all:
    a process that keeps forking cannot outrun a scan, since a stopped process forks
    no more. A child forked at the very moment of a stop is found by the next pass.
    Returns (named killed, named not killable)."""
    names: dict[int, str] = {}
    mine = {os.getpgid(0), os.getsid(0)}
    for _ in range(passes):
        if not _freeze(find, names, mine):
            break
        for pid in names:
            _stop(pid, mine, signal.SIGKILL)
    left = set(names)
    deadline = time.monotonic() + 2.0
    while left and time.monotonic() < deadline:
        left = {p for p in left if not _zombie(p)}  # a zombie runs nothing any more
        if left:
            time.sleep(0.01)
    return [n for p, n in names.items() if p not in left], [names[p] for p in left]


def _freeze(find: Callable[[], set[int]], names: dict[int, str], mine: set[int],
            rounds: int = 200) -> bool:
    """Stop what ``find`` returns until nothing new shows up; True if any was new."""
    grew = False
    misses = 0
    for _ in range(rounds):
        new = {p for p in _with_descendants(find() | set(names)) - set(names)
               if not _zombie(p)}
        if not new:
            # A daemon that hops (fork, exit, again) can be between pids during one
            # scan of /proc; before anything is found, a few more scans make that
            # unlikely to repeat (each costs milliseconds).
            misses += 1
            if grew or misses >= 4:
                break
            time.sleep(0.002)
            continue
        grew = True
        for pid in new:
            names[pid] = describe(pid)
            _stop(pid, mine)
    return grew


def _stop(pid: int, mine: set[int], sig: int = signal.SIGSTOP) -> None:
    """SIGSTOP a process and its whole process group (never VerifyBot's own): a
    daemon that forks and exits in a loop keeps its group, and a group is stopped
    in one call, hop or no hop."""
    with contextlib.suppress(OSError):
        group = os.getpgid(pid)
        if group not in mine and group > 1:
            os.killpg(group, sig)
    with contextlib.suppress(OSError):
        os.kill(pid, sig)


def reap(pids: Iterable[int]) -> None:
    """Collect the exit status of those of ``pids`` that are our (adopted) children:
    a subreaper must, or they stay zombies."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.waitpid(pid, os.WNOHANG)


# -- without a sandbox: VerifyBot as the reaper of what its runs orphan -----------------

_SUBREAPER: list[bool] = []
OWN_PIDS: set[int] = set()  # short commands VerifyBot itself runs in a session of their own


def _my_children() -> list[int]:
    """VerifyBot's direct children (adopted ones too), from /proc/self/task/*/children."""
    pids: list[int] = []
    try:
        for task in os.scandir("/proc/self/task"):
            with open(f"{task.path}/children", encoding="ascii") as f:
                pids += [int(p) for p in f.read().split()]
    except OSError:
        return _children().get(os.getpid(), [])
    return pids


def _foreign(pid: int, skip: set[int]) -> bool:
    """A child VerifyBot did not start: not a run's root, not one of its own short
    commands, and in another session than VerifyBot's (what a library such as
    Playwright starts stays in VerifyBot's session; a run's escapee left it)."""
    if pid in skip or pid in OWN_PIDS:
        return False
    try:
        return os.getsid(pid) != os.getsid(0)
    except OSError:
        return False


def reap_adopted(skip: set[int]) -> None:
    """Collect the zombies of orphans adopted as subreaper (or a daemon that keeps
    re-forking would fill the process table with them)."""
    if _SUBREAPER and _SUBREAPER[0]:
        reap(p for p in _my_children() if _zombie(p) and _foreign(p, skip))


def become_subreaper() -> bool:
    """Make VerifyBot the child subreaper (once): orphans of its runs come to it."""
    if not _SUBREAPER:
        ok = False
        if sys.platform.startswith("linux"):
            libc = ctypes.CDLL(None, use_errno=True)
            ok = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
        _SUBREAPER.append(ok)
    return _SUBREAPER[0]


def adopted(since: int, skip: set[int], other_tokens: Iterable[str]) -> set[int]:
    """Children of VerifyBot that it did not start: orphans of a run, reparented to
    it as subreaper. Each is stopped at once (a daemon that keeps re-forking is only
    caught by a stop that comes before its next hop), then looked at: one started
    before ``since`` (clock ticks) or carrying another live run's marker is let go."""
    if not _SUBREAPER or not _SUBREAPER[0]:
        return set()
    needles = [f"{MARKER}={t}".encode() for t in other_tokens if t]
    mine = {os.getpgid(0), os.getsid(0)}
    found = set()
    for pid in _my_children():
        if not _foreign(pid, skip):
            continue
        _stop(pid, mine)
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            env = b""
        if (start_time(pid) or 0) < since or any(n + b"\0" in env or env.endswith(n)
                                                  for n in needles):
            _stop(pid, mine, signal.SIGCONT)
        else:
            found.add(pid)
    return found


def ticks_now() -> int:
    """Now, in the clock ticks since boot that start_time uses."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * os.sysconf("SC_CLK_TCK"))


# -- the sandbox ---------------------------------------------------------------------

_BWRAP: list[str | None] = []


def _base(sized: limits.Limits | None = None) -> list[str]:
    """Every sandbox's options (targets.sandbox): powers dropped, the system read-only,
    no home, a minimal /dev, a private /tmp (of the limits' size)."""
    return [*sandbox.HARDEN, *sandbox.layout(), *(sized or limits.Limits()).tmp_args(),
            *sandbox.env_args()]

# The sandbox's first process under bubblewrap's own init (pid 1): it runs the
# program, and once the program has ended it names and KILLs what is still alive
# in the namespace, which the namespace's end would otherwise kill unseen. Its
# stdin is a pipe to VerifyBot (moved to fd 9, never the program's): one line
# "PID NAME" per process that left the program's session and tree (a setsid
# double fork), as ``escaped`` names them elsewhere; what stayed in the session
# is killed unnamed, like a tree stopped without a sandbox. Everything is frozen
# (SIGSTOP) before it is looked at, so a process that keeps forking cannot slip
# by. Shell builtins only, so the scan sees no process of its own; a run that
# leaves nothing costs one glob of the namespace's /proc. The program is exec'd
# by a subshell with /dev/null as stdin and the real stderr (the shell's own
# messages, such as "Segmentation fault", go to /dev/null); its exit status is
# the init's, 128 + N for a signal as bubblewrap reports it. ``"$@"`` finds the
# program by PATH as bubblewrap's execvp did (our commands are never shell
# builtin names). Outside a PID namespace of its own (its pid is not 1 or 2, as
# bubblewrap makes it) it only runs the program: ``kill -1`` there would signal
# every process the user may signal, on the whole machine.
#
# ``BUILD`` first (``build_then_run``): a compiled program's build and run share this
# one sandbox, which halves what the sandbox costs a C program. The subshell runs the
# build command (shell-quoted by ``shlex.join``, stdout and stderr the real ones, no
# fd 9), says "built STATUS" on fd 9 and, when the build passed, waits there for
# "go": VerifyBot reads what the compiler wrote to the end, notes the run folder and
# starts the program's own timeout before the program exists. fd 9 is a socket
# (VerifyBot's side of a socketpair), so the build's status and the "go" share it,
# and neither the compiler nor the program can reopen it through /proc; the program
# starts only after the status was read, so nothing it prints or writes is taken
# for one. A failed build ends the sandbox with the build's status.
SANDBOX_INIT = r"""exec 9>&0 0</dev/null 8>&2 2>/dev/null
(if [ "$1" = --vb-build ]; then
    (eval "exec $2" 2>&8 8>&- 9>&-)
    vb_b=$?
    echo "built $vb_b" >&9
    [ $vb_b = 0 ] || exit $vb_b
    read -r vb_go <&9 && [ "$vb_go" = go ] || exit 125
    shift 2
fi
exec "$@" 2>&8 8>&- 9>&-)
vb_st=$?
case $$ in 1|2) ;; *) exit $vb_st;; esac
vb_live() {
    vb_ps=
    for vb_f in /proc/[0-9]*/stat; do
        vb_p=${vb_f#/proc/}; vb_p=${vb_p%/stat}
        case $vb_p in 1|$$) continue;; esac
        read -r vb_l < "$vb_f" || continue
        set -- ${vb_l##*) }
        case $1 in Z|X|x) continue;; esac
        vb_ps="$vb_ps $vb_p:$2:$4"
    done
    [ -n "$vb_ps" ]
}
if vb_live; then
    kill -STOP -1
    vb_live
    read -r vb_l < /proc/$$/stat; set -- ${vb_l##*) }
    vb_tree=" "; vb_out=
    for vb_e in $vb_ps; do
        case $vb_e in *:"$4") vb_tree="$vb_tree${vb_e%%:*} ";; *) vb_out="$vb_out $vb_e";; esac
    done
    vb_more=1
    while [ -n "$vb_more" ]; do
        vb_more=; vb_rest=
        for vb_e in $vb_out; do
            vb_pp=${vb_e#*:}; vb_pp=${vb_pp%:*}
            case $vb_tree in
                *" $vb_pp "*) vb_tree="$vb_tree${vb_e%%:*} "; vb_more=1;;
                *) vb_rest="$vb_rest $vb_e";;
            esac
        done
        vb_out=$vb_rest
    done
    vb_i=0
    for vb_e in $vb_out; do
        vb_p=${vb_e%%:*}; vb_n=?; read -r vb_n < /proc/$vb_p/comm
        [ $vb_i -lt 100 ] && printf '%s %s\n' "$vb_p" "$vb_n" >&9
        vb_i=$((vb_i + 1))
    done
    kill -KILL -1
    vb_i=0
    while vb_live && [ $vb_i -lt 200 ]; do sleep 0.01; vb_i=$((vb_i + 1)); done
fi
exit $vb_st
"""
INIT_ARGV = ["/bin/sh", "-c", SANDBOX_INIT, "sandbox-init"]
BUILD = "--vb-build"
BUILT = "built "  # the init's line once the build ended: "built STATUS"
GO = b"go\n"  # VerifyBot's answer: start the program


def build_then_run(build: list[str], run: list[str]) -> list[str]:
    """What follows a sandbox prefix to build with ``build`` and then, once VerifyBot
    says "go" on the init's socket, run ``run`` in the same sandbox."""
    return [BUILD, shlex.join(build), *run]


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


def sandbox_argv(workdir: Path, network: bool, read_only: Iterable[str | Path] = (),
                 writable: Iterable[str | Path] = (),
                 limited: limits.Limits | None = None) -> list[str] | None:
    """The bubblewrap prefix for a program run in ``workdir``; None where there is none.

    The system read-only, no home, a private /tmp (targets.sandbox); ``workdir``
    and ``writable`` (existing folders) writable, ``read_only`` (existing paths,
    e.g. a venv, an interpreter's prefix, the board cache) shown read-only; /proc
    is the namespace's own; ``network`` false leaves only a private loopback; the
    process and /tmp limits of ``limited`` (the defaults when None; the rlimits are
    the child's: ``preexec``). The program runs under ``SANDBOX_INIT``: the process
    started with this prefix wants a pipe as stdin (a socket where a build comes
    first: ``build_then_run``), whose other end ``escaped_in_sandbox`` reads once it
    ended."""
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
    box = sandbox_argv(folder, False, sandbox.tool_roots([tool]))
    return [*box, *argv] if box else argv


async def sandbox_ended(cgroup: Path | None, token: str, wait: float = 0.5) -> bool:
    """``await_sandbox_end`` without holding the event loop: once the program ended,
    the sandbox winds down by itself in a few milliseconds; the stop that follows
    then finds nothing to signal (and waits for nothing). True once nothing of it
    is alive (False: still there after ``wait``)."""
    deadline = time.monotonic() + wait
    while True:
        pids = cgroup_pids(cgroup) if cgroup is not None else marker_pids(token)
        if not any(alive(p) for p in pids):
            return True
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(0.002)


def await_sandbox_end(cgroup: Path | None, token: str, wait: float = 1.0) -> bool:
    """Wait (bounded) for every process of a sandbox to be gone once its outer bwrap
    ended: bubblewrap's own pid 1 tells its exit status before it has exited itself,
    and the kernel's kill of the namespace's other processes takes a moment. Without
    this wait, they would be named as left running, or seen alive after the stop.
    True once nothing of it is alive: in its cgroup, or (none) carrying its marker."""
    deadline = time.monotonic() + wait
    while True:
        pids = cgroup_pids(cgroup) if cgroup is not None else marker_pids(token)
        if not any(alive(p) for p in pids):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.002)


def escaped_in_sandbox(report: int) -> list[str]:
    """What ``SANDBOX_INIT`` named and killed, read from its pipe once the sandbox
    ended: "PID (name) killed", the pid being the one in the sandbox. Bounded: the
    program could write to the init's pipe too (an extra name is all it gets)."""
    data = b""
    with contextlib.suppress(OSError):
        os.set_blocking(report, False)
        while len(data) < 16384:
            chunk = os.read(report, 16384)
            if not chunk:
                break
            data += chunk
    names = []
    for line in data.decode("utf-8", "replace").splitlines()[:100]:
        pid, _, name = line.partition(" ")
        if pid.isdigit() and name:
            names.append(f"{pid} ({name[:64]}) killed")
    return names


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
