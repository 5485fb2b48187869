"""A recipe's compiler and flags held for an answer's own Makefile, and checked.

A recipe that names a compiler and flags (``-Wall -Werror``) makes
``compiles-clean`` a criterion; an answer bringing its own Makefile must not
escape it by building with other flags (``-w``) or another compiler. Passing
``CFLAGS=`` on make's command line would replace the Makefile's own flags (its
``-mcpu``, its include paths) and break a sound build, so make gets
``CC=``/``CXX=`` instead: small wrappers that run the recipe's compiler with the
Makefile's arguments and the recipe's flags after them, and log each call that
succeeded with the SHA-256 of what it made. The wrappers and their log live beside
the run folder, not in it (``wrap_folder``: the answer's files cannot be one of
them); a failed call logs nothing and its output (``-o``) is removed, so a
Makefile that tries $(CC), hides its errors and falls back to the bare compiler
leaves objects no call made. Afterwards the log says what was compiled: a compile
that did not go through the wrappers (a compiler named in the Makefile itself),
an object no successful call made, a firmware not linked by one, or a flag that
silences warnings means ``compiles-clean`` could not tell, and says why.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path

LOG = "cc.log"
SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".s", ".S")
_COMPILER = re.compile(r"^(\S*/)?\S*(gcc|g\+\+|cc|c\+\+|clang|clang\+\+)$")
SILENCERS = ("-w", "-Wno-error", "-fsyntax-only")


def wrap_folder(workdir: Path) -> Path:
    """Where a run's wrappers and their log live: beside its run folder, not in it."""
    return workdir.parent / f".{workdir.name}.cc"


# One wrapper: the real compiler, then (status 0) a log line "PWD<TAB>SHA256<TAB>ARGS"
# with the hash of its -o output ("-" none), else the output removed.
_WRAPPER = """#!/bin/sh
vb_out=; vb_prev=
for vb_a in "$@"; do [ "$vb_prev" = -o ] && vb_out=$vb_a; vb_prev=$vb_a; done
case " $* " in *" -c "*|*" -S "*|*" -E "*|*" -M "*|*" -MM "*) ;; *) vb_out=${{vb_out:-a.out}};; esac
{real} "$@" {flags}
vb_st=$?
if [ $vb_st = 0 ]; then
    vb_sum=-
    if [ -n "$vb_out" ] && [ -f "$vb_out" ]; then
        vb_sum=$(sha256sum < "$vb_out") && vb_sum=${{vb_sum%% *}}
    fi
    printf '%s\t%s\t%s\n' "$PWD" "$vb_sum" "$*" >> {log}
elif [ -n "$vb_out" ]; then
    rm -f -- "$vb_out"
fi
exit $vb_st
"""


def wrappers(workdir: Path, compiler: str, cxx: str, flags: list[str]) -> list[str]:
    """Write the CC and CXX wrappers (in ``wrap_folder``); make's variables that use them."""
    folder = wrap_folder(workdir)
    folder.mkdir(exist_ok=True, mode=0o700)
    log = folder / LOG
    log.write_text("")
    out = []
    for var, real in (("CC", compiler), ("CXX", cxx)):
        path = folder / f"vb-{var.lower()}"
        path.write_text(_WRAPPER.format(real=shlex.quote(real), flags=shlex.join(flags),
                                        log=shlex.quote(str(log))))
        path.chmod(0o755)
        out.append(f"{var}={path}")
    return out


def _calls(workdir: Path) -> list[tuple[Path, str, list[str]]]:
    """The successful wrapped calls: (folder, SHA-256 of the output or "-", arguments)."""
    calls = []
    for line in (wrap_folder(workdir) / LOG).read_text(errors="replace").splitlines():
        where, _, rest = line.partition("\t")
        digest, _, words = rest.partition("\t")
        calls.append((Path(where), digest, words.split()))
    return calls


def not_linked_by_a_call(workdir: Path, elf: Path) -> str:
    """Why the firmware did not come from a successful wrapped call ("" it did)."""
    made = hashlib.sha256(elf.read_bytes()).hexdigest()
    if any(digest == made for _, digest, _ in _calls(workdir)):
        return ""
    return (f"the firmware {elf.relative_to(workdir)} was not made by a successful call "
            "of $(CC) or $(CXX)")


def unchecked(workdir: Path, echoed: str, flags: list[str], since: float) -> str:
    """Why the recipe's compiler and flags may not have held ("" when they did)."""
    calls = [(cwd, args) for cwd, _, args in _calls(workdir)]
    made: set[Path] = set()
    for cwd, args in calls:
        if "-o" in args[:-1]:
            made.add((cwd / args[args.index("-o") + 1]).resolve())
        elif "-c" in args:
            made.update((cwd / Path(a).with_suffix(".o").name).resolve() for a in args
                        if a.endswith(SOURCES))
    why = []
    bypass = [ln.strip() for ln in echoed.splitlines() if ln.strip() and
              _COMPILER.match(ln.split()[0])
              and not ln.split()[0].endswith(("/vb-cc", "/vb-cxx"))]
    if bypass:
        why.append(f"the Makefile runs the compiler itself, not $(CC): {bypass[0][:120]}")
    stray = sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*.o")
                   if p.stat().st_mtime >= since and p.resolve() not in made
                   and p.relative_to(workdir).parts[0] != "vb_board")
    if stray and not bypass:
        why.append(f"{stray[0]} was not compiled through $(CC) or $(CXX)")
    silenced = sorted({a for _, args in calls for a in args if a in SILENCERS} - set(flags))
    if silenced:
        why.append(f"the Makefile adds {' '.join(silenced)}, which silences warnings")
    if not calls and not why:
        why.append("the Makefile compiled nothing through $(CC) or $(CXX)")
    return "; ".join(why)
