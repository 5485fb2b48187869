"""The shell text one SSH run sends: files in, program started, its end checked, all on one channel.

A run over SSH pays the link's round trip for every step done in sequence, so
everything a run needs goes in the one command of one channel:

- the program's files arrive on the channel's stdin as a tar archive of known
  length (``head -c N | tar x``), no SFTP session and no folder walk;
- a *watcher* is started before the program, in a session of its own (the
  program's group kill must not reach it), no descendant of the program (its
  parent has exited before the program starts: ``START_APART``) and without the
  run's marker (the leftover scan must not find it). It blocks reading the channel's stdin: sshd
  closes that pipe the moment the program it started exits, so the watcher
  wakes at the program's own end, however many children still hold its stdout;
- the program is then ``exec``'d by the channel's shell, so it stays the
  process sshd started: SSH signals (TERM, KILL) reach it directly and its exit
  status is the channel's;
- the watcher then stops the program's group, names and kills what escaped it
  (the run's ``VERIFYBOT_RUN`` marker in one scan of /proc, and the run's
  systemd scope where there is one), lists the files, and prints that report
  between two lines carrying the *report token*, which the program cannot print:
  it is not the run's marker (``VERIFYBOT_RUN``, which the program sees), and it
  is in no command line, environment or file. It comes as the first line of the
  channel's stdin, read by the launching shell's builtin ``read`` before the
  program starts; the watcher (a shell given it on a here-document) keeps it in
  memory, and prints it with the builtin ``printf``. The program's stdin is
  /dev/null and the channel's stdin is closed for it, so a program that prints
  report lines with its own marker is only output, and what it left is still
  named. VerifyBot takes a report only once the program's exit status has come
  (the watcher reports after it), and a second report is a warning.

The report's lines are the ones the separate after-run check printed before:
``vb-escaped PID NAME``, ``vb-unkillable PID NAME``, then the snapshots.
"""

from __future__ import annotations

import io
import shlex
import tarfile

# Files VerifyBot itself keeps in a run folder; never reported as the program's output files.
OWN = ".vb_"
SNAPSHOT = ("find . -type f ! -name '.vb_*' ! -path '*/__pycache__/*' "
            "-printf '%P\\t%s\\t%T@\\n' 2>/dev/null")
MARK = "--vb-after--"
SCOPE_PROBE = "systemd-run --user --scope --quiet true"
_NO_FILES = "vb-nofiles"


def report_start(token: str) -> bytes:
    return f"\x1evb-report {token}\n".encode()


def report_end(token: str) -> bytes:
    return f"\x1evb-end {token}\n".encode()


def scope_unit(token: str) -> str:
    """The transient systemd scope of one run (token: ``containment.markers.new_token()``)."""
    return f"verifybot-{token}.scope"


def scope_prefix(token: str) -> str:
    """What runs the program in its own user scope (where the Pi has user sessions).

    ``systemd-run --scope`` moves itself into the scope and execs the command, so
    the pid, process group and environment stay the program's own.
    """
    return (f"systemd-run --user --scope --quiet --collect "
            f"--unit={shlex.quote(scope_unit(token))} -- ")


def group_kill_sh(grace: float) -> str:
    """Kill the group recorded in .vb_pgid while it has live members (TERM, grace, KILL).

    ``kill -0`` (a builtin) answers the common case, an empty group, with no
    process at all. Zombies waiting to be reaped still count for it, so the grace
    loop asks /proc instead: one ``grep`` over every ``stat`` for a member of the
    group in a state other than Z or X (so a group of only zombies costs no grace).
    """
    steps = max(1, int(grace / 0.1))
    return ('pg=; read -r pg 2>/dev/null < .vb_pgid; '
            'vb_live() { grep -qsE "^[0-9]+ \\(.*\\) [^ZX] [0-9]+ $pg " /proc/[0-9]*/stat; }; '
            'if [ -n "$pg" ] && kill -0 -"$pg" 2>/dev/null && vb_live; then '
            'kill -TERM -"$pg" 2>/dev/null; i=0; '
            f'while [ $i -lt {steps} ] && vb_live; do sleep 0.1; i=$((i+1)); done; '
            'kill -KILL -"$pg" 2>/dev/null; echo vb-killed-leftovers; fi')


# What escaped the run was started after it: its pid lies between the namespace's last
# pid when the program started ($vbl0, read by the launch) and its last pid now, as pids
# are handed out in turn. When that range is known and short only those processes'
# environments are read, and only our own (readable) ones, the checking shell itself
# left out; else every process's. Exact either way: a wrap of the pids, or no $vbl0 (a
# check from another channel), reads all. The list goes into $vb_c, with no subshell.
_CANDIDATES = ('vb_me=${BASHPID:-$$}; '
               'vb_cands() { vb_c=; vb_now=; '
               'read -r vb_now 2>/dev/null < /proc/sys/kernel/ns_last_pid; '
               'if [ -n "$vbl0" ] && [ -n "$vb_now" ] && [ "$vb_now" -ge "$vbl0" ] && '
               '[ $((vb_now - vbl0)) -le 512 ]; then p=$vbl0; while [ "$p" -lt "$vb_now" ]; do '
               'p=$((p+1)); [ "$p" != "$vb_me" ] && [ -r "/proc/$p/environ" ] && '
               'vb_c="$vb_c /proc/$p/environ"; done; '
               'else vb_c=$(echo /proc/[0-9]*/environ); fi; }; ')
LAST_PID = 'vbl0=; read -r vbl0 2>/dev/null < /proc/sys/kernel/ns_last_pid; '


def leftover_sh(scope: bool) -> str:
    """Name and KILL what of the run still lives once its group was stopped.

    Found by the run's marker (``.vb_run``) in /proc/*/environ of our user (one
    ``grep -z`` over the NUL-separated variables of the processes started since
    the run began, see ``_CANDIDATES``, and none when there are none), and with ``scope``
    by the run's systemd scope. Prints ``vb-escaped PID NAME`` per process found
    and ``vb-unkillable PID NAME`` for one still alive after the KILLs; scans
    again only when the first scan found something. What is found goes into
    ``$vb_f`` rather than through a subshell: a run that leaves nothing behind
    costs no process at all here (the common case, paid on every run).
    """
    find = (_CANDIDATES +
            'vb_marked() { vb_f=; [ -n "$tok" ] || return 0; vb_cands; [ -n "$vb_c" ] || '
            'return 0; for f in $(grep -lzsxF "VERIFYBOT_RUN=$tok" $vb_c); do f=${f#/proc/}; '
            'vb_f="$vb_f ${f%/environ}"; done; }; ')
    if scope:
        find += ('vb_cg=$(systemctl --user show -p ControlGroup --value "verifybot-$tok.scope" '
                 '2>/dev/null); '
                 'vb_found() { vb_marked; [ -n "$vb_cg" ] && while read -r p; do '
                 'vb_f="$vb_f $p"; done 2>/dev/null < "/sys/fs/cgroup$vb_cg/cgroup.procs"; }; ')
    else:
        find += 'vb_found() { vb_marked; }; '
    kill_scope = ('systemctl --user kill -s KILL "verifybot-$tok.scope" 2>/dev/null; '
                  if scope else '')
    name = 'n=?; read -r n 2>/dev/null < "/proc/$p/comm"; '
    return ('tok=; read -r tok 2>/dev/null < .vb_run; ' + find +
            'left=; vb_found; for p in $vb_f; do [ "$p" = "$vb_me" ] && continue; '
            'left="$left $p"; ' + name + 'echo "vb-escaped $p $n"; done; i=0; '
            'while [ -n "$left" ] && [ $i -lt 20 ]; do '
            'for p in $left; do kill -KILL "$p" 2>/dev/null; done; ' + kill_scope +
            'sleep 0.05; i=$((i+1)); left=; vb_found; '
            'for p in $vb_f; do [ "$p" = "$vb_me" ] || left="$left $p"; done; done; '
            'for p in $left; do ' + name + 'echo "vb-unkillable $p $n"; done')


def check_sh(grace: float, scope: bool, snapshot: bool, before_file: bool) -> str:
    """The after-run check: group, escaped processes, and with ``snapshot`` the files.

    With ``before_file`` the folder's state before the run is in ``.vb_before``
    (a compiled program: the build wrote it); otherwise the client knows it.
    """
    cmd = f"{group_kill_sh(grace)}; {leftover_sh(scope)}"
    if snapshot:
        before = "cat .vb_before 2>/dev/null; " if before_file else ""
        cmd += f"; {before}echo {MARK}; {SNAPSHOT}"
    return cmd


# The launching shell's first step: the report token, the first line of the channel's
# stdin (before a big archive), into $vbr; never in a command line or an environment.
READ_REPORT_TOKEN = "IFS= read -r vbr || exit 127; "
_PRINT_START = "printf '\\036vb-report %s\\n' \"$vbr\""
_PRINT_END = "printf '\\036vb-end %s\\n' \"$vbr\""


def watcher_sh(check: str, folder: str) -> str:
    """Wait for the program's end (EOF on the channel's stdin), check, report.

    It waits outside the run's folder (it is not the program's), and writes the
    report's first line before anything else: with the connection gone that
    write kills it (SIGPIPE), and the program is left for the next connection's
    sweep, as a lost link always left it.
    """
    return ("[ -n \"$vbr\" ] || IFS= read -r vbr <&4; exec 4<&-; "
            f"cd /; while read -r _; do :; done; {_PRINT_START}; "
            f"cd {shlex.quote(folder)} || exit 0; {check}; {_PRINT_END}")


# Start the watcher ($vbw) apart from the program: ``setsid -f`` forks it into a session
# of its own and returns at once, so the watcher's parent is gone before the program is
# exec'd: the watcher is no child of the program (which could otherwise read the report
# token out of its child's memory: a parent may ptrace its children wherever the Yama
# LSM allows any ptrace at all), and the program's group kill does not reach it. The
# report token goes to it on a here-document (fd 4), never in its arguments or
# environment; the launching shell, which read it, is replaced by the program. Where
# ``setsid -f`` is missing (util-linux before 2.31) no watcher starts, and the check
# runs over a channel of its own once the program ended (``_after`` in targets/ssh/process.py).
START_APART = (LAST_PID + 'vbl0=$vbl0 setsid -f sh -c "$vbw" <&3 3<&- 2>/dev/null '
               '4<<VBR\n$vbr\nVBR\n')


INLINE_MAX = 24 * 1024  # a tar up to this size rides in the command (escaped: <= 120 KB)


def files_sh(archive: bytes) -> str:
    """Unpack the tar: a small one carried in the command (no round trip of its own,
    no process but tar), a big one from the channel's stdin (``head -c`` reads exactly its length).
    On failure the report says so and the run stops (exit 127)."""
    failed = f"{_PRINT_START}; echo {_NO_FILES}; {_PRINT_END}"
    if len(archive) <= INLINE_MAX:
        source = f"printf %b {_printf_b(archive)}"
    else:
        source = f"head -c {len(archive)}"
    return f"{source} | tar -xf - || {{ {failed}; exit 127; }}; "


def _printf_b(data: bytes) -> str:
    """``data`` as one shell word that ``printf %b`` turns back into it (UTF-8 text and
    NULs: a tar of text files). A NUL is ``\\0000`` (always three octal digits, so a
    digit after it stays a digit)."""
    text = data.decode("utf-8").replace("\\", "\\\\").replace("\0", "\\0000")
    return shlex.quote(text)


def files_stdin(archive: bytes) -> bytes:
    """What goes on the channel's stdin for ``files_sh``: only a big archive."""
    return archive if len(archive) > INLINE_MAX else b""


def channel_stdin(report_token: str, archive: bytes) -> bytes:
    """The channel's stdin: the report token's line, then a big archive (no EOF after
    it: the channel's stdin closing marks the program's end)."""
    return f"{report_token}\n".encode() + files_stdin(archive)


def files_failed(report: str) -> bool:
    return report.startswith(_NO_FILES)


def tar_of(files: list[tuple[str, bytes]], mtime: int) -> bytes:
    """A tar archive of (path, content), every file with mode 0644 and the given mtime."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path, data in files:
            info = tarfile.TarInfo(path)
            info.size, info.mode, info.mtime = len(data), 0o644, mtime
            tar.addfile(info, io.BytesIO(data))
    # The two zero blocks end it; the padding tarfile adds to a full record is not needed.
    end = len(buf.getvalue().rstrip(b"\0"))
    end = -(-end // 512) * 512 + 1024
    return buf.getvalue()[:end]


def parse_leftovers(text: str) -> tuple[list[str], str]:
    """('PID (name) killed' / 'PID (name) NOT killable' lines, the rest of the text)."""
    found: dict[str, str] = {}
    unkillable: set[str] = set()
    rest = []
    for line in text.splitlines(keepends=True):
        kind, _, what = line.strip().partition(" ")
        if kind in ("vb-escaped", "vb-unkillable"):
            pid, _, name = what.partition(" ")
            found.setdefault(pid, name or "?")
            if kind == "vb-unkillable":
                unkillable.add(pid)
        else:
            rest.append(line)
    named = [f"{pid} ({name}) {'NOT killable' if pid in unkillable else 'killed'}"
             for pid, name in found.items()]
    return named, "".join(rest)


def parse_snapshot(text: str) -> dict[str, tuple[int, float]]:
    """find's ``path<TAB>size<TAB>mtime`` lines as path -> (size, mtime)."""
    found = {}
    for line in text.splitlines():
        bits = line.split("\t")
        if len(bits) == 3:
            try:
                found[bits[0]] = (int(bits[1]), float(bits[2]))
            except ValueError:
                continue
    return found


def changed_files(report: str, before: dict[str, tuple[int, float]] | None) -> list[str]:
    """The files the run wrote: the report's snapshot after against the one before.

    ``before`` None: the report carries it (``.vb_before``) ahead of the MARK line.
    """
    if MARK not in report:
        return []
    before_text, after_text = report.split(MARK + "\n", 1) if MARK + "\n" in report else (
        report.split(MARK, 1)[0], "")
    known = parse_snapshot(before_text) if before is None else before
    after = parse_snapshot(after_text)
    return sorted(p for p, meta in after.items()
                  if known.get(p) != meta and not p.startswith(OWN))
