"""A firmware built from an answer: against the board package, or with the answer's own make.

An answer with only C/C++ (and assembly) sources is compiled file by file with
the board's cross-compiler and CPU flags, next to the board package (start-up
code and vector table, linker script, UART retargeting, fault handler) copied
into ``vb_board/`` of the run folder, so a compiler message about either names
a file the user can open. An answer that brings a Makefile is built with
``make`` in the run folder and its newest ``.elf`` is the firmware. Errors and
warnings keep gcc's ``file:line:`` form: that is what the LLM gets back.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from verifybot_tui.core.base.ports import OutputCallback, RunResult
from verifybot_tui.targets.mcu.boards import PACKAGE_DIR, Board
from verifybot_tui.targets.sandbox import BOARD_CACHE

BUILD_TIMEOUT = 120.0
MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
C_EXT = (".c",)
CXX_EXT = (".cpp", ".cc", ".cxx", ".c++")
ASM_EXT = (".s", ".S")
DEFAULT_FLAGS = ["-O1", "-g", "-Wall"]
ARM_PACKAGE = ("startup.c", "fault.c", "syscalls.c")
PACKAGE_FLAGS = ["-O1", "-g", "-Wall", "-Wextra"]


class Runner(Protocol):
    async def command(self, argv: list[str], cwd: Path, on_output: OutputCallback,
                      timeout: float) -> RunResult: ...


@dataclass
class Built:
    elf: Path | None  # None: the build failed (result says why)
    result: RunResult  # the last step's result; compile_failed on failure
    warnings: str  # every step's compiler output of a build that passed
    command: str  # the steps, joined for the transcript
    own_make: bool = False


def linker_script(board: Board) -> str:
    template = (PACKAGE_DIR / "cortex-m" / "cortex-m.ld.in").read_text()
    return template.format(board=board.name, mcu=board.mcu, flash_origin=board.flash[0],
                           flash_size=board.flash[1], ram_origin=board.ram[0],
                           ram_size=board.ram[1])


def install_package(board: Board, workdir: Path) -> list[str]:
    """Copy the board package into ``vb_board/``; the sources to compile with the answer."""
    folder = workdir / "vb_board"
    folder.mkdir(exist_ok=True)
    names = [*ARM_PACKAGE] if board.arch == "cortex-m" else []
    for name in names:
        shutil.copyfile(PACKAGE_DIR / board.arch / name, folder / name)
    shutil.copyfile(board.uart_path, folder / board.uart_source)
    if board.arch == "cortex-m":
        (folder / "board.ld").write_text(linker_script(board))
    return [f"vb_board/{n}" for n in (*names, board.uart_source)]


def has_makefile(names: list[str]) -> bool:
    return any(n in MAKEFILES for n in names)


def buildable(names: list[str]) -> bool:
    """Whether the answer's files make a firmware: sources or a Makefile."""
    return has_makefile(names) or any(n.endswith((*C_EXT, *CXX_EXT, *ASM_EXT)) for n in names)


def _cxx(compiler: str) -> str:
    return compiler[:-3] + "g++" if compiler.endswith("gcc") else compiler


def compile_argv(board: Board, source: str, obj: str, *, compiler: str, flags: list[str],
                 semihosting: bool) -> list[str]:
    cc = compiler or board.compiler
    cxx = source.endswith(CXX_EXT)
    argv = [_cxx(cc) if cxx else cc, *board.cpu_flags, *flags,
            *(f"-D{d}" for d in board.defines), *board.hal_flags]
    if semihosting:
        argv.append("-DVB_SEMIHOSTING")
    argv += ["-ffunction-sections", "-fdata-sections", "-Ivb_board"]
    if cxx:
        argv += ["-fno-exceptions", "-fno-rtti"]
    return [*argv, "-c", source, "-o", obj]


def link_argv(board: Board, objs: list[str], *, compiler: str, cxx: bool) -> list[str]:
    cc = compiler or board.compiler
    argv = [_cxx(cc) if cxx else cc, *board.cpu_flags, *board.hal_flags]
    if board.arch == "cortex-m":
        argv += ["-nostartfiles", "--specs=nano.specs", "-T", "vb_board/board.ld"]
    return [*argv, "-Wl,--gc-sections", "-o", "firmware.elf", *objs, "-lm"]


async def build(runner: Runner, board: Board, workdir: Path, names: list[str],
                on_output: OutputCallback, *, compiler: str = "", flags: list[str] | None = None,
                semihosting: bool = True) -> Built:
    """Build the firmware in ``workdir`` (the answer's files are there)."""
    package = install_package(board, workdir)
    if has_makefile(names):
        return await _make(runner, workdir, on_output)
    sources = [n for n in names if n.endswith((*C_EXT, *CXX_EXT, *ASM_EXT))]
    (workdir / "vb_build").mkdir(exist_ok=True)
    steps: list[list[str]] = []
    objs: list[str] = []
    for i, src in enumerate(sources):
        obj = f"vb_build/{i}_{Path(src).stem}.o"
        steps.append(compile_argv(board, src, obj, compiler=compiler, semihosting=semihosting,
                                  flags=flags or DEFAULT_FLAGS))
        objs.append(obj)
    cached = await _package_objects(runner, board, workdir, package, on_output,
                                    compiler=compiler, semihosting=semihosting)
    if isinstance(cached, Built):
        return cached
    steps.append(link_argv(board, [*objs, *cached], compiler=compiler,
                           cxx=any(s.endswith(CXX_EXT) for s in sources)))
    return await _steps(runner, workdir, steps, on_output)


async def _package_objects(runner: Runner, board: Board, workdir: Path, package: list[str],
                           on_output: OutputCallback, *, compiler: str,
                           semihosting: bool) -> list[str] | Built:
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
        ours = install_package(board, scratch)
        objs: list[str] = []
        for src in ours:
            argv = compile_argv(board, src, "OBJ", compiler=compiler, flags=PACKAGE_FLAGS,
                                semihosting=semihosting)
            key = hashlib.sha256("\0".join(argv).encode() + (scratch / src).read_bytes())
            obj = cache / f"{board.name}-{Path(src).stem}-{key.hexdigest()[:16]}.o"
            if not obj.exists():
                tmp = f"{Path(src).stem}.pkg.o"
                here = f"-fdebug-prefix-map={scratch}=."  # names as in a run's vb_board/
                built = await _steps(runner, scratch, [[*argv[:-3], here, *argv[-3:-1], tmp]],
                                     on_output, link=False)
                if built.elf is None:
                    return built
                os.replace(scratch / tmp, obj)  # whole or not at all, for parallel runs
            objs.append(str(obj))
        return objs
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


async def _steps(runner: Runner, workdir: Path, steps: list[list[str]],
                 on_output: OutputCallback, link: bool = True) -> Built:
    warnings: list[str] = []
    commands: list[str] = []
    result = RunResult(exit_code=0, stdout="", stderr="", duration=0.0)
    for argv in steps:
        if shutil.which(argv[0]) is None:
            return _missing(argv[0], workdir, on_output)
        result = await runner.command(argv, workdir, on_output, BUILD_TIMEOUT)
        commands.append(result.command)
        if result.exit_code != 0:
            result.compile_failed = True
            return Built(None, result, "".join(warnings), " && ".join(commands))
        warnings.append(result.stderr + result.stdout)
    return Built(workdir / ("firmware.elf" if link else ""), result, "".join(warnings),
                 " && ".join(commands))


async def _make(runner: Runner, workdir: Path, on_output: OutputCallback) -> Built:
    if shutil.which("make") is None:
        return _missing("make", workdir, on_output)
    result = await runner.command(["make"], workdir, on_output, BUILD_TIMEOUT)
    if result.exit_code != 0:
        result.compile_failed = True
        return Built(None, result, "", "make", own_make=True)
    elves = sorted((p for p in workdir.rglob("*.elf") if "vb_board" not in p.parts),
                   key=lambda p: p.stat().st_mtime)
    if not elves:
        text = "make finished, but no .elf file was made in the run folder\n"
        on_output("stderr", text)
        result.compile_failed = True
        result.stderr += text
        return Built(None, result, "", "make", own_make=True)
    # make echoes its commands on stdout: only what the tools wrote on stderr are warnings
    return Built(elves[-1], result, result.stderr, "make", own_make=True)


def _missing(tool: str, workdir: Path, on_output: OutputCallback) -> Built:
    text = (f"{tool} is not installed on this machine (verifybot doctor says how to "
            "install the toolchain)\n")
    on_output("stderr", text)
    result = RunResult(exit_code=127, stdout="", stderr=text, duration=0.0,
                       compile_failed=True, workdir=str(workdir))
    return Built(None, result, "", tool)
