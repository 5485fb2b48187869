"""Arduino sketches on AVR boards, built against Debian's Arduino AVR core (arduino-core-avr).

A sketch (``.ino``, or C++ with ``setup()`` and ``loop()`` and no ``main()``) is made C++
as the Arduino tools do (``sketch.py``) and built with the core's own sources for the
board (``arduino = "uno"`` in the board file: its ``build.*`` settings from the core's
boards.txt, 16 MHz for the Uno). The core and each library the sketch includes (Wire,
SPI, EEPROM, SoftwareSerial: those the package ships) are compiled once into archives
kept beside the runs, like the board package's objects, and only linked after that;
``Serial`` is the core's own HardwareSerial on USART0, the UART QEMU shows. Nothing of
the core is copied into VerifyBot: it is read where Debian installs it.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from verifybot_tui.core.base.ports import OutputCallback, RunResult
from verifybot_tui.targets.mcu.boards import Board
from verifybot_tui.targets.mcu.build_steps import Built, Runner, run_steps, tell
from verifybot_tui.targets.mcu.sources import sketch
from verifybot_tui.targets.sandbox.view import BOARD_CACHE

CORE = Path("/usr/share/arduino/hardware/arduino/avr")
PACKAGE = "arduino-core-avr"
IDE_VERSION = "10819"  # the ARDUINO macro: the Arduino IDE the Debian core comes with
_SOURCES = (".c", ".cpp", ".S")
_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
_NOT_FOUND = re.compile(r"fatal error: ([\w./+-]+): No such file or directory")


@dataclass(frozen=True)
class Settings:
    """The core's build settings for one board (boards.txt: ``uno.build.mcu``...)."""

    board: str  # "uno"
    mcu: str
    f_cpu: str
    define: str  # "AVR_UNO" -> -DARDUINO_AVR_UNO
    variant: str

    @property
    def fqbn(self) -> str:
        return f"arduino:avr:{self.board}"

    @property
    def includes(self) -> list[str]:
        return [f"-I{CORE / 'cores' / 'arduino'}", f"-I{CORE / 'variants' / self.variant}"]

    def flags(self, source: str, warnings: bool = False) -> list[str]:
        """platform.txt's compile flags for this kind of source (without -flto)."""
        common = [f"-mmcu={self.mcu}", f"-DF_CPU={self.f_cpu}", f"-DARDUINO={IDE_VERSION}",
                  f"-DARDUINO_{self.define}", "-DARDUINO_ARCH_AVR"]
        warn = ["-Wall"] if warnings else ["-w"]
        if source.endswith(".S"):
            return ["-c", "-g", "-x", "assembler-with-cpp", *common]
        if source.endswith(".c"):
            return ["-c", "-g", "-Os", *warn, "-std=gnu11", "-ffunction-sections",
                    "-fdata-sections", *common]
        # avr-gcc 5's <float.h> gives C++ no DECIMAL_DIG, which the core's WString.cpp uses
        return ["-c", "-g", "-Os", *warn, "-std=gnu++11", "-fpermissive", "-fno-exceptions",
                "-ffunction-sections", "-fdata-sections", "-fno-threadsafe-statics",
                "-Wno-error=narrowing", "-DDECIMAL_DIG=__DECIMAL_DIG__", *common]


def installed() -> bool:
    return (CORE / "cores" / "arduino" / "Arduino.h").is_file()


def core_version() -> str:
    text = (CORE / "platform.txt").read_text(errors="replace") if installed() else ""
    m = re.search(r"^version=(\S+)", text, re.M)
    return m.group(1) if m else "?"


def settings(board: Board) -> Settings | None:
    """The board's settings from the core's boards.txt (None: not there or not installed)."""
    path = CORE / "boards.txt"
    if not board.arduino or not path.is_file():
        return None
    found = {}
    for line in path.read_text(errors="replace").splitlines():
        key, _, value = line.partition("=")
        if key.startswith(f"{board.arduino}.build."):
            found[key.split(".build.", 1)[1]] = value.strip()
    keys = ("mcu", "f_cpu", "board", "variant")
    if not all(k in found for k in keys):
        return None
    return Settings(board.arduino, found["mcu"], found["f_cpu"], found["board"],
                    found["variant"])


def is_sketch(board: Board, workdir: Path, names: list[str]) -> bool:
    """Whether the answer is an Arduino sketch for a board the core knows how to build."""
    if not board.arduino:
        return False
    if any(n.endswith(".ino") for n in names):
        return True
    return any(n.endswith((".cpp", ".cc")) and sketch.is_sketch_code(
        (workdir / n).read_text(errors="replace")) for n in names)


def libraries() -> dict[str, Path]:
    """The core's libraries, by name: their ``src`` folders."""
    root = CORE / "libraries"
    return {p.name: p / "src" for p in sorted(root.iterdir()) if (p / "src").is_dir()} \
        if root.is_dir() else {}


def needed_libraries(texts: list[str]) -> list[str]:
    """The libraries whose headers the sketch includes (one level: theirs are their own)."""
    headers = {h for text in texts for h in _INCLUDE.findall(text)}
    return [name for name, src in libraries().items() if any((src / h).is_file()
                                                              for h in headers)]


def missing_library_note(stderr: str) -> str:
    """A feedback naming the library a sketch needs and this machine lacks ("" none)."""
    m = _NOT_FOUND.search(stderr)
    if not m:
        return ""
    header = m.group(1)
    have = ", ".join(libraries()) or "none"
    return (f"note: {header} is not found: it belongs to an Arduino library "
            f"({Path(header).stem}) that is not installed here. The Arduino AVR core's "
            f"libraries are {have}; use those, or write the code without the library\n")


def not_installed(on_output: OutputCallback, workdir: Path) -> RunResult:
    text = (f"this is an Arduino sketch, and the Arduino AVR core is not installed (Debian: "
            f"apt install {PACKAGE}; verifybot doctor names it)\n")
    on_output("stderr", text)
    return RunResult(exit_code=127, stdout="", stderr=text, duration=0.0, compile_failed=True,
                     workdir=str(workdir))


def _key(s: Settings, name: str, sources: list[Path], includes: list[str]) -> str:
    digest = hashlib.sha256("\0".join([s.fqbn, name, *includes, core_version()]).encode())
    for src in sources:
        st = src.stat()
        digest.update(f"{src}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        digest.update(" ".join(s.flags(src.name)).encode())
    return digest.hexdigest()[:16]


def archive_sources(name: str) -> tuple[list[Path], list[str]]:
    """The sources of the core ("core") or of a library, and the folders they include."""
    if name == "core":
        root = CORE / "cores" / "arduino"
        return sorted(p for p in root.iterdir() if p.suffix in _SOURCES), []
    src = libraries()[name]
    return sorted(p for p in src.rglob("*") if p.suffix in _SOURCES), [f"-I{src}"]


async def archive(runner: Runner, s: Settings, name: str, cache: Path,
                  on_output: OutputCallback, extra: Sequence[str] = ()) -> Path | RunResult:
    """The core's or a library's archive for this board, compiled once and kept in ``cache``
    (in a scratch folder there, then renamed whole: parallel runs never see half of it)."""
    sources, own = archive_sources(name)
    includes = [*s.includes, *own, *extra]
    target = cache / f"arduino-{s.board}-{name}-{_key(s, name, sources, includes)}.a"
    if target.exists():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f"arduino-{name}-", dir=cache))
    try:
        objs = [f"{i}_{src.name}.o" for i, src in enumerate(sources)]
        steps = [[_cc(src.name), *s.flags(src.name), *includes, str(src), "-o", obj]
                 for src, obj in zip(sources, objs, strict=True)]
        for at in range(0, len(steps), 2):  # two at a time: the machine's cores
            results = await asyncio.gather(*(runner.command(argv, scratch, on_output, 120.0)
                                             for argv in steps[at:at + 2]))
            failed = [r for r in results if r.exit_code != 0]
            if failed:
                failed[0].compile_failed = True
                return failed[0]
        made = await runner.command(["avr-ar", "rcs", "lib.a", *objs], scratch, on_output, 60.0)
        if made.exit_code != 0:
            made.compile_failed = True
            return made
        os.replace(scratch / "lib.a", target)
        return target
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _cc(source: str) -> str:
    return "avr-g++" if source.endswith((".cpp", ".cc", ".ino")) else "avr-gcc"


def cache_folder(workdir: Path) -> Path:
    return workdir.parent.parent / BOARD_CACHE


def _sketch_sources(workdir: Path, names: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The sketch's parts (name, text: .ino files, the main one first, and C++ written as a
    sketch) and the other sources, compiled as they are."""
    parts, others = [], []
    for n in names:
        text = (workdir / n).read_text(errors="replace") if n.endswith(
            (".ino", ".cpp", ".cc", ".c", ".S")) else ""
        if n.endswith(".ino") or (n.endswith((".cpp", ".cc")) and sketch.is_sketch_code(text)):
            parts.append((n, text))
        elif n.endswith((".c", ".cpp", ".cc", ".S")):
            others.append(n)
    main = [p for p in parts if sketch.is_sketch_code(p[1])]
    return main[:1] + [p for p in parts if p not in main[:1]], others


async def build_sketch(runner: Runner, board: Board, workdir: Path, names: list[str],
                       on_output: OutputCallback) -> Built:
    """Build the sketch in ``workdir`` against the core: sketch and own sources compiled,
    the core's and the libraries' cached archives linked."""
    s = settings(board) if installed() else None
    if s is None:
        return Built(None, not_installed(on_output, workdir), "", "arduino")
    parts, others = _sketch_sources(workdir, names)
    libs = needed_libraries([text for _, text in parts] + [
        (workdir / n).read_text(errors="replace") for n in others])
    lib_flags = [f"-I{libraries()[name]}" for name in libs]
    archives: list[str] = []
    for name in (*libs, "core"):
        made = await archive(runner, s, name, cache_folder(workdir), on_output,
                             lib_flags if name != "core" else ())
        if isinstance(made, RunResult):
            return Built(None, made, "", f"arduino core ({name})")
        archives.append(str(made))
    folder = workdir / "vb_build" / "sketch"
    folder.mkdir(parents=True, exist_ok=True)
    cpp = f"vb_build/sketch/{Path(parts[0][0]).name}.cpp" if parts else ""
    if parts:
        (workdir / cpp).write_text(sketch.to_cpp(parts))
    sources = ([cpp] if cpp else []) + others
    objs = [f"vb_build/sketch/{Path(src).name}.o" for src in sources]
    steps = [[_cc(src), *s.flags(src, warnings=True), *s.includes, *lib_flags, "-I.", src,
              "-o", obj] for src, obj in zip(sources, objs, strict=True)]
    compiled = await run_steps(runner, workdir, steps, on_output, link=False)
    if compiled.elf is None:
        note = missing_library_note(compiled.result.stderr)
        if note:
            tell(compiled, on_output, note)
        return compiled
    linked = await run_steps(runner, workdir, [[
        "avr-gcc", "-Os", "-g", "-Wl,--gc-sections", f"-mmcu={s.mcu}", "-o", "firmware.elf",
        *objs, *archives[:-1], archives[-1], "-lm"]], on_output)
    linked.warnings = compiled.warnings + linked.warnings
    linked.command = " && ".join(c for c in (compiled.command, linked.command) if c)
    linked.parts = _said(s, parts, libs, cpp)
    return linked


def _said(s: Settings, parts: list[tuple[str, str]], libs: list[str], cpp: str) -> str:
    made = (f"sketch {', '.join(n for n, _ in parts)} made C++ as the Arduino tools do "
            f"(#include <Arduino.h>, prototypes: {cpp})") if parts else "no sketch file"
    return "; ".join([
        made,
        f"Arduino AVR core {core_version()} for {s.fqbn} ({s.mcu}, "
        f"{int(s.f_cpu.rstrip('L')) // 1_000_000} MHz) from {PACKAGE} ({CORE}), compiled once "
        "and cached",
        f"libraries {', '.join(libs)} from the core" if libs else "no libraries",
        "no VerifyBot UART code: Serial is the core's"])
