"""A firmware built from an answer: against the board package, or with the answer's own make.

An answer with only C/C++ (and assembly) sources is compiled file by file with
the board's cross-compiler and CPU flags, next to the board package (start-up
code and vector table, linker script, UART retargeting, fault handler) copied
into ``vb_board/`` of the run folder, so a compiler message about either names
a file the user can open. What the answer brings itself replaces the package
part it duplicates, read from its compiled objects' symbols: its own
Reset_Handler or vector table drops the package's start-up and fault handler,
its own ``.ld`` is the linker script, its own ``_write``/``_sbrk``/... override
the package's (weak) syscalls. The command says which parts came from where.
An answer that brings a Makefile is built with ``make`` in the run folder and
the newest executable ELF it made is the firmware, whatever its name. Errors
and warnings keep gcc's ``file:line:`` form: that is what the LLM gets back.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.targets.mcu.boards import (
    PACKAGE_DIR,
    Board,
    refused_place,
    shown_paths,
)
from verifybot_tui.targets.mcu.build_steps import (
    BUILD_TIMEOUT,
    Built,
    Runner,
    missing_tool,
    run_steps,
    tell,
)
from verifybot_tui.targets.mcu.elfcheck import read_symbols
from verifybot_tui.targets.mcu.sources import arduino, own_make, own_startup
from verifybot_tui.targets.sandbox.view import BOARD_CACHE

MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
C_EXT = (".c",)
CXX_EXT = (".cpp", ".cc", ".cxx", ".c++")
ASM_EXT = (".s", ".S")
DEFAULT_FLAGS = ["-O1", "-g", "-Wall"]
ARM_PACKAGE = ("startup.c", "fault.c", "syscalls.c")
ARM_HEADERS = ("vb_uart.h",)  # the shape every UART source of the package includes
SYSCALLS = ("_write", "_read", "_sbrk", "_exit", "_close", "_fstat", "_isatty", "_lseek",
            "_getpid", "_kill")
LD_EXT = (".ld", ".lds")
SOURCES = (*C_EXT, *CXX_EXT, *ASM_EXT)
PACKAGE_FLAGS = ["-O1", "-g", "-Wall", "-Wextra"]


def board_paths(board: Board, workspace: Path | None = None) -> list[Path]:
    """What a build must see of the board besides VerifyBot's own package: the absolute
    paths its flags name (a vendor HAL's include folder), each approved with the board
    file (``boards._commands``); the sandbox shows them read-only, nothing else. The
    board's own sources are copied into the run (``install_package``), not shown. A
    path into the workspace is refused here, where the workspace is known."""
    shown: list[Path] = []
    for value in shown_paths([*board.cpu_flags, *board.hal_flags]):
        why = refused_place(value, workspace) if board.path else ""
        if why:
            raise ConfigError(f"{board.path}: the board shows {value} to every build: {why}, "
                              "never shown")
        if os.path.exists(value):
            shown.append(Path(value))
    return shown


def linker_script(board: Board, vectors: str = "") -> str:
    """The package's linker script; ``vectors``: the section of the answer's own vector
    table, placed first when it has a name the script does not know."""
    template = (PACKAGE_DIR / "cortex-m" / "cortex-m.ld.in").read_text()
    return template.format(board=board.name, mcu=board.mcu, flash_origin=board.flash[0],
                           flash_size=board.flash[1], ram_origin=board.ram[0],
                           ram_size=board.ram[1],
                           vectors=f" KEEP(*({vectors}))" if vectors else "")


def irq_header(board: Board) -> str:
    """``vb_irqs.h``: the board's device IRQs for the package's vector table, by handler name
    (``VB_IRQ(TIM2_IRQHandler)``, ``VB_RESERVED``), as many as the board's ``irq_count``."""
    lines = [f"/* Written from the board file for {board.name} ({board.mcu}): its "
             f"{board.irq_count} device IRQs in order. */"]
    for irq in range(board.irq_count):
        name = board.irq_name(irq)
        lines.append(f"VB_IRQ({name}_IRQHandler)  /* IRQ {irq} */" if name else
                     f"VB_RESERVED  /* IRQ {irq} */")
    return "\n".join(lines) + "\n"


def install_package(board: Board, workdir: Path) -> list[str]:
    """Copy the board package into ``vb_board/``; the sources to compile with the answer."""
    folder = workdir / "vb_board"
    folder.mkdir(exist_ok=True)
    names = [*ARM_PACKAGE] if board.arch == "cortex-m" else []
    for name in (*names, *(ARM_HEADERS if board.arch == "cortex-m" else ())):
        shutil.copyfile(PACKAGE_DIR / board.arch / name, folder / name)
    copy_regular(board.uart_path, folder / board.uart_source)
    if board.arch == "cortex-m":
        (folder / "board.ld").write_text(linker_script(board))
        (folder / "vb_irqs.h").write_text(irq_header(board))
    return [f"vb_board/{n}" for n in (*names, board.uart_source)]


def copy_regular(source: Path, dest: Path) -> None:
    """Copy a regular file without following a link at its place (ConfigError if one is)."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as e:
        raise ConfigError(f"{source}: cannot be copied into the build ({e.strerror}); a board "
                          "file's sources are regular files in its own folder") from None
    with os.fdopen(fd, "rb") as f, open(dest, "wb") as out:
        shutil.copyfileobj(f, out)


def has_makefile(names: list[str]) -> bool:
    return any(n in MAKEFILES for n in names)


def buildable(names: list[str]) -> bool:
    """Whether the answer's files make a firmware: sources or a Makefile."""
    return has_makefile(names) or any(n.endswith((*C_EXT, *CXX_EXT, *ASM_EXT, ".ino"))
                                      for n in names)


def _cxx(compiler: str) -> str:
    return compiler[:-3] + "g++" if compiler.endswith("gcc") else compiler


def compile_argv(board: Board, source: str, obj: str, *, compiler: str, flags: list[str],
                 semihosting: bool, sections: bool = True) -> list[str]:
    cc = compiler or board.compiler
    cxx = source.endswith(CXX_EXT)
    argv = [_cxx(cc) if cxx else cc, *board.cpu_flags, *flags,
            *(f"-D{d}" for d in board.defines), *board.hal_flags]
    if semihosting:
        argv.append("-DVB_SEMIHOSTING")
    if sections:  # not for a linker script that would scatter them (own_startup)
        argv += ["-ffunction-sections", "-fdata-sections"]
    argv.append("-Ivb_board")
    if cxx:
        argv += ["-fno-exceptions", "-fno-rtti"]
    return [*argv, "-c", source, "-o", obj]


def link_argv(board: Board, objs: list[str], *, compiler: str, cxx: bool,
              script: str = "vb_board/board.ld", gc: bool = True) -> list[str]:
    cc = compiler or board.compiler
    argv = [_cxx(cc) if cxx else cc, *board.cpu_flags, *board.hal_flags]
    if board.arch == "cortex-m":
        argv += ["-nostartfiles", "--specs=nano.specs", "-T", script]
        if cxx:  # newlib-nano's lite exit registers global destructors only if this is linked
            argv.append("-Wl,-u,__register_exitproc")
    return [*argv, *(["-Wl,--gc-sections"] if gc else []), "-o", "firmware.elf", *objs, "-lm"]


@dataclass
class Parts:
    """Which package parts an answer's own objects replace."""

    package: list[str]  # the package sources still linked
    script: str  # the linker script
    said: str  # for the transcript


def compose(board: Board, workdir: Path, names: list[str], objs: list[str],
            package: list[str]) -> Parts:
    """Drop the package parts the answer brings itself (read from its objects' symbols)."""
    ours = [n for n in names if n.endswith(LD_EXT)]
    script = _main_script(workdir, ours) if ours else "vb_board/board.ld"
    if board.arch != "cortex-m":
        return Parts(package, script, "start-up code, vector table and C library from "
                     "avr-libc; UART set-up from VerifyBot")
    defined: dict[str, str] = {}
    symbols = {}
    for src, obj in zip([n for n in names if n.endswith(SOURCES)], objs, strict=True):
        symbols[src] = read_symbols(workdir / obj)
        defined.update({k: v for k, v in symbols[src].defined.items() if k not in defined})
    start = own_startup.find(symbols, own_startup.script_entry(
        own_startup.script_text(workdir, ours)))
    keep = [p for p in package if not (start.found and Path(p).name in ("startup.c",
                                                                           "fault.c"))]
    if start.table and not ours:  # its table first in VerifyBot's script, whatever its name
        (workdir / script).write_text(linker_script(board, start.table))
    said = [start.said() if start.found else
            "start-up code, vector table and fault handler from VerifyBot",
            f"linker script from the answer ({script})" if ours else
            "linker script from VerifyBot (vb_board/board.ld)"]
    calls = [c for c in SYSCALLS if c in defined]
    said.append(f"syscalls {', '.join(calls)} from the answer, the others from VerifyBot"
                if calls else "syscalls (newlib retargeting) from VerifyBot")
    said.append("UART set-up from VerifyBot (at the first printf)" if start.found else
                "UART set-up from VerifyBot")
    return Parts(keep, script, "; ".join(said))


def _main_script(workdir: Path, scripts: list[str]) -> str:
    """The answer's linker script: the one with SECTIONS (another may be INCLUDEd by it)."""
    full = [s for s in scripts if "SECTIONS" in (workdir / s).read_text(errors="replace")]
    return sorted(full or scripts)[0]


async def build(runner: Runner, board: Board, workdir: Path, names: list[str],
                on_output: OutputCallback, *, compiler: str = "", flags: list[str] | None = None,
                semihosting: bool = True) -> Built:
    """Build the firmware in ``workdir`` (the answer's files are there)."""
    if not has_makefile(names) and arduino.is_sketch(board, workdir, names):
        built = await arduino.build_sketch(runner, board, workdir, names, on_output)
    else:
        built = await _build(runner, board, workdir, names, on_output, compiler=compiler,
                             flags=flags, semihosting=semihosting)
    over = disk_cap(workdir, names)
    if over:
        tell(built, on_output, over)
        built.elf = None
        built.result.compile_failed = True
        if built.result.exit_code == 0:
            built.result.exit_code = 1
    return built


FILE_CAP = 64 << 20  # bytes one file of an attempt may be (a firmware is at most a few MB)
FOLDER_CAP = 128 << 20  # bytes one attempt's run folder may hold after its build


def disk_cap(workdir: Path, names: list[str]) -> str:
    """Files over the caps deleted, said in words ("" when the build stayed within them).

    A ``.space 1G`` or a huge array makes a huge object and ELF on every attempt;
    what is over the cap is deleted, then the build products (never the answer's
    own files) until the folder is within its cap."""
    files = sorted(((p.stat().st_size, p) for p in workdir.rglob("*") if p.is_file()
                    and not p.is_symlink()), reverse=True)
    total = sum(size for size, _ in files)
    if total <= FOLDER_CAP and (not files or files[0][0] <= FILE_CAP):
        return ""
    own = set(names)
    gone = []
    for size, path in files:
        rel = str(path.relative_to(workdir))
        if size > FILE_CAP or (total > FOLDER_CAP and rel not in own):
            path.unlink(missing_ok=True)
            total -= size
            gone.append(f"{rel} ({size / (1 << 20):,.0f} MB)")
    return (f"the build left more on disk than one attempt may ({FILE_CAP >> 20} MB a file, "
            f"{FOLDER_CAP >> 20} MB in all): deleted {', '.join(gone[:5])}"
            + (f" and {len(gone) - 5} more" if len(gone) > 5 else "") +
            ". A firmware is at most a few MB: a .space directive or an array far larger "
            "than the chip's memory?\n")


async def _build(runner: Runner, board: Board, workdir: Path, names: list[str],
                 on_output: OutputCallback, *, compiler: str, flags: list[str] | None,
                 semihosting: bool) -> Built:
    package = install_package(board, workdir)
    if has_makefile(names):
        return await _make(runner, workdir, on_output, compiler=compiler, flags=flags or [])
    sources = [n for n in names if n.endswith(SOURCES)]
    scripts = [n for n in names if n.endswith(LD_EXT)]
    text = own_startup.script_text(workdir, scripts)
    # the answer's own script may place only *(.text): no sections it would scatter or drop
    sections = not scripts or own_startup.keeps_sections(text)
    (workdir / "vb_build").mkdir(exist_ok=True)
    steps: list[list[str]] = []
    objs: list[str] = []
    for src in sources:
        obj = own_startup.object_path(src, text)  # startup.s -> startup.o, where .ld says
        if obj in objs:
            obj = f"vb_build/{Path(src).with_suffix(Path(src).suffix + '.o')}"
        (workdir / obj).parent.mkdir(parents=True, exist_ok=True)
        steps.append(compile_argv(board, src, obj, compiler=compiler, semihosting=semihosting,
                                  flags=[*(flags or DEFAULT_FLAGS), "-fstack-usage"],
                                  sections=sections))
        objs.append(obj)
    shown = board_paths(board, workdir.parent.parent)
    compiled = await run_steps(runner, workdir, steps, on_output, link=False, read_only=shown)
    if compiled.elf is None:
        return compiled
    parts = compose(board, workdir, names, objs, package)
    cached = await _package_objects(runner, board, workdir, parts.package, on_output,
                                    compiler=compiler, semihosting=semihosting,
                                    sections=sections)
    if isinstance(cached, Built):
        return cached
    linked = await run_steps(runner, workdir, [link_argv(
        board, [*objs, *cached], compiler=compiler, script=parts.script, gc=sections,
        cxx=any(s.endswith(CXX_EXT) for s in sources))], on_output, read_only=shown)
    linked.warnings = compiled.warnings + linked.warnings
    linked.command = " && ".join(c for c in (compiled.command, linked.command) if c)
    linked.parts = parts.said
    if linked.elf is None and "multiple definition of" in linked.result.stderr:
        tell(linked, on_output, f"note: the board package supplies: {parts.said}; an "
              "answer's own start-up code (Reset_Handler or a vector table), linker script "
              "(.ld) or syscalls replace the package's, other duplicates clash\n")
    return linked


async def _package_objects(runner: Runner, board: Board, workdir: Path, package: list[str],
                           on_output: OutputCallback, *, compiler: str,
                           semihosting: bool, sections: bool = True) -> list[str] | Built:
    """The board package's objects, compiled once per board, compiler and mode.

    They are the same for every answer, so they are kept beside the runs (by a hash
    of the command and the source) and only linked: a firmware build is then one
    compile of the answer and one link. They are compiled from VerifyBot's own
    package sources in a scratch folder of the cache (never from the run folder, where
    the answer's files are), and every build sees the cache read-only (the sandbox):
    an answer cannot change what later answers are linked with."""
    cache = workdir.parent.parent / BOARD_CACHE
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="build-", dir=cache))
    try:
        ours = [src for src in install_package(board, scratch) if src in package]
        objs: list[str] = []
        for src in ours:
            argv = compile_argv(board, src, "OBJ", compiler=compiler, flags=PACKAGE_FLAGS,
                                semihosting=semihosting, sections=sections)
            key = hashlib.sha256("\0".join(argv).encode() + (scratch / src).read_bytes())
            for header in sorted((scratch / "vb_board").glob("*.h")):  # the IRQ names
                key.update(header.read_bytes())
            obj = cache / f"{board.name}-{Path(src).stem}-{key.hexdigest()[:16]}.o"
            if not obj.exists():
                tmp = f"{Path(src).stem}.pkg.o"
                here = f"-fdebug-prefix-map={scratch}=."  # names as in a run's vb_board/
                built = await run_steps(runner, scratch,
                                        [[*argv[:-3], here, *argv[-3:-1], tmp]],
                                        on_output, link=False,
                                        read_only=board_paths(board, workdir.parent.parent))
                if built.elf is None:
                    return built
                os.replace(scratch / tmp, obj)  # whole or not at all, for parallel runs
            objs.append(str(obj))
        return objs
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def _make(runner: Runner, workdir: Path, on_output: OutputCallback, *, compiler: str,
                flags: list[str]) -> Built:
    if shutil.which("make") is None:
        return missing_tool("make", workdir, on_output)
    argv = ["make"]
    since = time.time() - 1
    wrapped = bool(compiler or flags)  # a recipe's build: held for the Makefile, and checked
    if wrapped:
        argv += own_make.wrappers(workdir, compiler or "gcc", _cxx(compiler or "gcc"), flags)
    result = await runner.command(argv, workdir, on_output, BUILD_TIMEOUT, writable=(
        [own_make.wrap_folder(workdir)] if wrapped else []))
    if result.exit_code != 0:
        result.compile_failed = True
        return Built(None, result, "", "make", own_make=True)
    unchecked = own_make.unchecked(workdir, result.stdout, flags, since) if wrapped else ""
    elves = find_elves(workdir)
    if wrapped and elves:
        why = own_make.not_linked_by_a_call(workdir, elves[-1])
        unchecked = "; ".join(w for w in (unchecked, why) if w)
    if not elves:
        text = ("make finished, but it made no firmware: no executable ELF file (whatever its "
                "name) in the run folder\n")
        on_output("stderr", text)
        result.compile_failed = True
        result.stderr += text
        return Built(None, result, "", "make", own_make=True)
    # make echoes its commands on stdout: only what the tools wrote on stderr are warnings
    uses = any("vb_board" in p.read_text(errors="replace") for p in workdir.iterdir()
               if p.name in MAKEFILES)
    parts = ("everything from the answer's Makefile" + (
        ", with the board package files it names from VerifyBot (vb_board/)" if uses else
        f"; firmware {elves[-1].relative_to(workdir)}"))
    return Built(elves[-1], result, result.stderr, shlex.join(argv), own_make=True,
                 unchecked=unchecked, parts=parts)


def find_elves(workdir: Path) -> list[Path]:
    """The executable ELF files a Makefile made (``app``, ``build/fw.out``...), oldest first.

    Told by their first bytes (ELF, type executable), not their name; objects and
    the package's files are not firmware."""
    found = []
    for path in workdir.rglob("*"):
        if "vb_board" in path.relative_to(workdir).parts or not path.is_file():
            continue
        try:
            with path.open("rb") as f:
                head = f.read(18)
        except OSError:
            continue
        if head[:4] == b"\x7fELF" and head[16:18] == b"\x02\x00":  # ET_EXEC
            found.append(path)
    return sorted(found, key=lambda p: p.stat().st_mtime)
