"""The sandbox's init: the first process of ours in a sandbox, which runs the program
(a compiled one's build first, in the same sandbox) and, once it ended, names and
KILLs what it left running, reporting those names to VerifyBot on fd 9.
"""

from __future__ import annotations

import contextlib
import os
import shlex

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

