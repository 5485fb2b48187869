"""Figures for the mcu target: build, run and verdict of a small firmware through VerifyBot,
against building and running the same firmware by hand (one gcc line, one qemu line).

Paired and interleaved (VerifyBot, by hand, VerifyBot, ...) so a drift in the machine's
speed hits both; prints min / median / max of each and of the ratio pair by pair, and
VerifyBot's time split into build (compile + link against the cached board package),
ELF check, and run (QEMU started paused, stub, UART until PASSED, QEMU stopped).

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


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 10))
