"""Figures for the mcu target: build, run and verdict of a small firmware through VerifyBot,
against building and running the same firmware by hand (one gcc line, one qemu line).

Paired and interleaved (VerifyBot, by hand, VerifyBot, ...) so a drift in the machine's
speed hits both; prints min / median / max of each and of the ratio pair by pair, and
VerifyBot's time split into build (compile + link against the cached board package),
ELF check, and run (QEMU started paused, stub, UART until PASSED, QEMU stopped).

Then an Arduino sketch on the Uno: VerifyBot's build (sketch made C++, compiled, linked
against the core's cached archive) against building it by hand with avr-g++ and the core's
sources in one line, and against by hand linked with the same archive; the cold build of
the core (once per board and core version) said apart.

Run: .venv/bin/python bench/mcu_firmware.py [ROUNDS]   (prints figures; asserts nothing)
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verifybot_tui.core.base.ports import ProgramFile, RunRequest
from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets import make_target
from verifybot_tui.targets.mcu import build
from verifybot_tui.targets.mcu.elfcheck import check_elf
from verifybot_tui.targets.mcu.qemu import run_qemu
from verifybot_tui.targets.mcu.sources import arduino, sketch

SUM = """#include <stdio.h>
int main(void)
{
    int sum = 0;
    for (int i = 1; i <= 10; i++)
        sum += i;
    printf("sum=%d\\n", sum);
    printf("PASSED\\n");
    return 0;
}
"""


def _quiet(stream: str, text: str) -> None:
    pass


async def through_verifybot(t, n: int) -> tuple[float, dict[str, float]]:  # type: ignore[no-untyped-def]
    """The target's own steps, timed one by one, then the verdict."""
    workdir = t._fresh_workdir(f"bench_{n}")
    names = t._write_files(workdir, RunRequest(f"bench_{n}", [ProgramFile(
        "main.c", "main.c", SUM, "c")], "main.c", "c", 10.0))
    began = time.perf_counter()
    built = await build.build(t.local, t.board, workdir, names, _quiet)
    b = time.perf_counter()
    assert built.elf is not None
    info = check_elf(built.elf, t.board)
    c = time.perf_counter()
    fw = await run_qemu(t.board, built.elf, info.vectors, workdir, 10.0, _quiet)
    d = time.perf_counter()
    assert fw.exit_code == 0 and "PASSED" in fw.uart, fw
    parts = {"build": b - began, "elf check": c - b, "run": d - c}
    return d - began, parts


async def _run(*argv: str) -> str:
    proc = await asyncio.create_subprocess_exec(*argv, stdin=subprocess.DEVNULL,
                                                stdout=subprocess.PIPE)
    out, _ = await proc.communicate()
    assert proc.returncode == 0, argv
    return out.decode()


async def by_hand(folder: Path, board) -> float:  # type: ignore[no-untyped-def]
    """gcc with the board package in one line, then qemu until the semihosting exit."""
    pkg = [str(folder / "vb_board" / n) for n in (*build.ARM_PACKAGE, board.uart_source)]
    began = time.perf_counter()
    await _run(board.compiler, *board.cpu_flags, "-O1", "-g", "-DVB_SEMIHOSTING",
               "-nostartfiles", "--specs=nano.specs", "-T", str(folder / "vb_board" / "board.ld"),
               "-o", str(folder / "hand.elf"), str(folder / "main.c"), *pkg, "-lm")
    out = await _run(*board.qemu, "-display", "none", "-monitor", "none", "-serial", "stdio",
                     "-semihosting-config", "enable=on,target=native",
                     "-kernel", str(folder / "hand.elf"))
    assert "PASSED" in out
    return time.perf_counter() - began


def spread(values: list[float]) -> str:
    return (f"min {min(values):.3f}  median {statistics.median(values):.3f}  "
            f"max {max(values):.3f}")


async def main(rounds: int) -> None:
    ws = Path(tempfile.mkdtemp(prefix="vb-bench-mcu-"))
    cfg = parse_config({"targets": {"b": {"kind": "mcu", "board": "netduinoplus2"}}})
    t = make_target(cfg, "b", ws)
    hand = ws / "hand"
    hand.mkdir()
    (hand / "main.c").write_text(SUM)
    build.install_package(t.board, hand)
    await through_verifybot(t, 0)  # warm-up: the board package is compiled once, cached
    await by_hand(hand, t.board)
    ours, theirs, ratio = [], [], []
    parts: dict[str, list[float]] = {}
    for n in range(1, rounds + 1):
        total, split = await through_verifybot(t, n)
        manual = await by_hand(hand, t.board)
        ours.append(total)
        theirs.append(manual)
        ratio.append(total / manual)
        for k, v in split.items():
            parts.setdefault(k, []).append(v)
    r = await t.run(RunRequest("bench_verdict", [ProgramFile("main.c", "main.c", SUM, "c")],
                               "main.c", "c", 10.0), _quiet)
    began = time.perf_counter()
    v = judge(r, [])
    verdict_s = time.perf_counter() - began
    await t.close()
    print(f"firmware on netduinoplus2 (STM32F405) in QEMU, {rounds} paired rounds, seconds")
    print(f"verifybot build+check+run : {spread(ours)}")
    for k, values in parts.items():
        print(f"  {k:<23} : {spread(values)}")
    print(f"by hand gcc + qemu        : {spread(theirs)}")
    print(f"ratio verifybot / by hand : {spread(ratio)}")
    print(f"{'verdict (' + v.status + ')':<26}: {verdict_s * 1000:.3f} ms")


SKETCH = """void setup() {
  Serial.begin(115200);
  Serial.println(sumTo(10));
  Serial.println("PASSED");
}

void loop() {}

int sumTo(int n) { return n ? n + sumTo(n - 1) : 0; }
"""


async def sketch_build(t, n: int) -> float:  # type: ignore[no-untyped-def]
    workdir = t._fresh_workdir(f"sketch_{n}")
    names = t._write_files(workdir, RunRequest(f"sketch_{n}", [ProgramFile(
        "sum.ino", "sum.ino", SKETCH, "cpp")], "sum.ino", "cpp", 10.0))
    began = time.perf_counter()
    built = await build.build(t.local, t.board, workdir, names, _quiet)
    took = time.perf_counter() - began
    assert built.elf is not None, built.result.stderr
    return took


async def sketch_by_hand(folder: Path, archive: str | None) -> float:
    """avr-g++ on the sketch (made C++ as the Arduino tools do) with the core's sources in
    one line, or (``archive``) linked with the core's archive VerifyBot keeps."""
    s = arduino.Settings("uno", "atmega328p", "16000000L", "AVR_UNO", "standard")
    core = arduino.CORE / "cores" / "arduino"
    sources = [str(p) for p in sorted(core.iterdir()) if p.suffix in (".c", ".cpp", ".S")]
    # one avr-gcc line: the driver compiles each file as its extension says
    flags = ["-g", "-Os", "-w", "-std=gnu++11", "-ffunction-sections", "-fdata-sections",
             "-fno-exceptions", "-fno-threadsafe-statics", "-DDECIMAL_DIG=__DECIMAL_DIG__",
             *s.flags("x.c")[s.flags("x.c").index("-fdata-sections") + 1:]]
    began = time.perf_counter()
    await _run("avr-gcc", *flags, *s.includes, "-Wl,--gc-sections", "-o",
               str(folder / "hand.elf"), str(folder / "sum.ino.cpp"),
               *([archive] if archive else sources), "-lm")
    return time.perf_counter() - began


async def arduino_figures(rounds: int) -> None:
    ws = Path(tempfile.mkdtemp(prefix="vb-bench-arduino-"))
    cfg = parse_config({"targets": {"b": {"kind": "mcu", "board": "arduino-uno"}}})
    t = make_target(cfg, "b", ws)
    cold = await sketch_build(t, 0)  # compiles the core and caches its archive
    folder = ws / "hand"
    folder.mkdir()
    (folder / "sum.ino.cpp").write_text(sketch.to_cpp([("sum.ino", SKETCH)]))
    archive = str(next((ws / "runs" / ".vb_board_cache").glob("arduino-uno-core-*.a")))
    ours, whole, linked, ratio = [], [], [], []
    for n in range(1, rounds + 1):
        mine = await sketch_build(t, n)
        full = await sketch_by_hand(folder, None)
        quick = await sketch_by_hand(folder, archive)
        ours.append(mine)
        whole.append(full)
        linked.append(quick)
        ratio.append(mine / full)
    await t.close()
    print(f"Arduino sketch on arduino-uno, {rounds} paired rounds, seconds (build only)")
    print(f"verifybot, core cached        : {spread(ours)}")
    print(f"by hand, avr-g++ + core srcs  : {spread(whole)}")
    print(f"ratio verifybot / by hand     : {spread(ratio)}")
    print(f"by hand, linked with the archive: {spread(linked)}")
    print(f"verifybot cold (core compiled once, said apart): {cold:.3f}")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    asyncio.run(main(count))
    if arduino.installed():
        asyncio.run(arduino_figures(max(3, count // 3)))
