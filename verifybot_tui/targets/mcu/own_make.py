"""A recipe's compiler and flags held for an answer's own Makefile, and checked.

A recipe that names a compiler and flags (``-Wall -Werror``) makes
``compiles-clean`` a criterion; an answer bringing its own Makefile must not
escape it by building with other flags (``-w``) or another compiler. Passing
``CFLAGS=`` on make's command line would replace the Makefile's own flags (its
``-mcpu``, its include paths) and break a sound build, so make gets
``CC=``/``CXX=`` instead: small wrappers in the run folder that log each call
and run the recipe's compiler with the Makefile's arguments and the recipe's
flags after them. Afterwards the log says what was compiled: a compile that did
not go through the wrappers (a compiler named in the Makefile itself), an
object no wrapper call made, or a flag that silences warnings means
``compiles-clean`` could not tell, and says why.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

LOG = "vb_build/cc.log"
SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".s", ".S")
_COMPILER = re.compile(r"^(\S*/)?\S*(gcc|g\+\+|cc|c\+\+|clang|clang\+\+)$")
SILENCERS = ("-w", "-Wno-error", "-fsyntax-only")


def wrappers(workdir: Path, compiler: str, cxx: str, flags: list[str]) -> list[str]:
    """Write the CC and CXX wrappers; make's variables that use them."""
    folder = workdir / "vb_build"
    folder.mkdir(exist_ok=True)
    log = workdir / LOG
    log.write_text("")
    out = []
    for var, real in (("CC", compiler), ("CXX", cxx)):
        path = folder / f"vb-{var.lower()}"
        path.write_text("#!/bin/sh\n"
                        f"printf '%s\\t%s\\n' \"$PWD\" \"$*\" >> {shlex.quote(str(log))}\n"
                        f"exec {shlex.quote(real)} \"$@\" {shlex.join(flags)}\n")
        path.chmod(0o755)
        out.append(f"{var}={path}")
    return out


def unchecked(workdir: Path, echoed: str, flags: list[str], since: float) -> str:
    """Why the recipe's compiler and flags may not have held ("" when they did)."""
    calls: list[tuple[Path, list[str]]] = []
    for line in (workdir / LOG).read_text(errors="replace").splitlines():
        where, _, words = line.partition("\t")
        calls.append((Path(where), words.split()))
    made: set[Path] = set()
    for cwd, args in calls:
        if "-o" in args[:-1]:
            made.add((cwd / args[args.index("-o") + 1]).resolve())
        elif "-c" in args:
            made.update((cwd / Path(a).with_suffix(".o").name).resolve() for a in args
                        if a.endswith(SOURCES))
    why = []
    bypass = [ln.strip() for ln in echoed.splitlines() if ln.strip() and
              _COMPILER.match(ln.split()[0]) and "vb_build/vb-c" not in ln.split()[0]]
    if bypass:
        why.append(f"the Makefile runs the compiler itself, not $(CC): {bypass[0][:120]}")
    stray = sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*.o")
                   if p.stat().st_mtime >= since and p.resolve() not in made
                   and p.relative_to(workdir).parts[0] not in ("vb_build", "vb_board"))
    if stray and not bypass:
        why.append(f"{stray[0]} was not compiled through $(CC) or $(CXX)")
    silenced = sorted({a for _, args in calls for a in args if a in SILENCERS} - set(flags))
    if silenced:
        why.append(f"the Makefile adds {' '.join(silenced)}, which silences warnings")
    if not calls and not why:
        why.append("the Makefile compiled nothing through $(CC) or $(CXX)")
    return "; ".join(why)
