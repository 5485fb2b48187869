"""Figures for the labgrid backend: one firmware run through a loopback labgrid farm against
the same firmware on the local QEMU backend, as a ratio, and where the farm's time goes.

The farm is tests/support/labgrid_farm.py's: a real labgrid-coordinator, exporter and
ser2net on 127.0.0.1, the board a QEMU behind a pty whose "flash" starts QEMU with the
ELF. Both runs are McuTarget.run (build, ELF check, run, verdict input), paired and
interleaved (farm, local, farm, ...) so a drift in the machine's speed hits both. The
farm's run is split by the moments its own lines appear: the build (as local), the
coordinator's session and the acquire, the serial port (the exporter starts ser2net on
the acquire), the flash step, the firmware's UART until PASSED, and the release.

Run: .venv/bin/python bench/farm.py [ROUNDS]   (prints figures; asserts nothing)
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from labgrid_farm import loopback_farm  # noqa: E402

from verifybot_tui.core.base.ports import ProgramFile, RunRequest  # noqa: E402
from verifybot_tui.core.settings.config import parse_config  # noqa: E402
from verifybot_tui.targets import make_target  # noqa: E402
from verifybot_tui.targets.mcu.farm import claim as claims  # noqa: E402
from verifybot_tui.targets.mcu.farm.session import farm_session  # noqa: E402

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
MARKS = [("acquired", "labgrid: acquired place"), ("serial", "labgrid: reading"),
         ("flash", "labgrid: flashing"), ("first byte", "sum="), ("end line", "PASSED"),
         ("released", "labgrid: released")]


def request(n: int) -> RunRequest:
    return RunRequest(f"bench_{n}", [ProgramFile("main.c", "main.c", SUM, "c")], "main.c", "c",
                      10.0)


async def timed(t, n: int) -> tuple[float, dict[str, float]]:  # type: ignore[no-untyped-def]
    seen: dict[str, float] = {}
    began = time.perf_counter()

    def mark(stream: str, text: str) -> None:
        for key, needle in MARKS:
            if key not in seen and needle in text:
                seen[key] = time.perf_counter() - began

    r = await t.run(request(n), mark)
    total = time.perf_counter() - began
    assert r.exit_code == 0 and "PASSED" in r.stdout, r
    return total, seen


def spread(values: list[float]) -> str:
    return (f"min {min(values):.3f}  median {statistics.median(values):.3f}  "
            f"max {max(values):.3f}")


async def session_open(address: str) -> float:
    began = time.perf_counter()
    async with farm_session(address):
        opened = time.perf_counter() - began
    return opened


async def connect_check(t) -> float:  # type: ignore[no-untyped-def]
    """McuTarget.connect on a farm: the coordinator, the place, free (before the prompt)."""
    began = time.perf_counter()
    await t.connect()
    return time.perf_counter() - began


async def handover(lab, cfg) -> float:  # type: ignore[no-untyped-def]
    """A place another user holds, waited for: from the moment this session hears it
    given back (the coordinator's stream) to our acquire done (which includes the
    exporter starting ser2net: compare the bare acquire). A 0.25 s poll added 0.125 s
    on average to this; the waiter now wakes on the stream itself."""
    await asyncio.to_thread(lab.client, "-p", "f4-bench-1", "acquire", user="alice")
    async with farm_session(lab.address) as session:
        freed: list[float] = []
        told = session.on_place_changed

        async def heard(place) -> None:  # type: ignore[no-untyped-def]
            await told(place)
            if place.name == "f4-bench-1" and not place.acquired and not freed:
                freed.append(time.perf_counter())

        session.on_place_changed = heard
        waiting = asyncio.ensure_future(claims.acquire(session, cfg, lab.address,
                                                       lambda _s, _t: None))
        await asyncio.sleep(1.0)  # queued behind alice
        await asyncio.to_thread(lab.client, "-p", "f4-bench-1", "release", user="alice")
        held = await waiting
        took = time.perf_counter() - freed[0]
        await claims.release(session, held, lambda _s, _t: None)
    return took


async def acquire_cycle(address: str, cfg) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """A bare acquire and release on an open session (no build, no flash)."""
    async with farm_session(address) as session:
        began = time.perf_counter()
        held = await claims.acquire(session, cfg, address, lambda _s, _t: None)
        got = time.perf_counter()
        await claims.release(session, held, lambda _s, _t: None)
        return got - began, time.perf_counter() - got


async def main(rounds: int, lab) -> None:  # type: ignore[no-untyped-def]
    address, flash = lab.address, lab.flash()
    ws = Path(tempfile.mkdtemp(prefix="vb-bench-farm-"))
    cfg = parse_config({"targets": {
        "local": {"kind": "mcu", "board": "netduinoplus2"},
        "lab": {"kind": "mcu", "board": "netduinoplus2", "backend": "labgrid",
                "place": "f4-bench-1", "coordinator": address, "acquire_timeout": 30,
                "flash": flash}}})
    local, farm = make_target(cfg, "local", ws / "l"), make_target(cfg, "lab", ws / "f")
    await timed(local, 0)  # warm-up: the board package is compiled once, cached
    await timed(farm, 0)
    ours, theirs, ratio = [], [], []
    phases: dict[str, list[float]] = {}
    for n in range(1, rounds + 1):
        f, seen = await timed(farm, n)
        q, _ = await timed(local, n)
        ours.append(f)
        theirs.append(q)
        ratio.append(f / q)
        last = 0.0
        for key, _ in MARKS:
            if key in seen:
                phases.setdefault(key, []).append(seen[key] - last)
                last = seen[key]
        phases.setdefault("session stop", []).append(f - last)
    opens = [await session_open(address) for _ in range(rounds)]
    checks = [await connect_check(farm) for _ in range(rounds)]
    handovers = [await handover(lab, cfg.targets["lab"]) for _ in range(rounds)]
    cycles = [await acquire_cycle(address, cfg.targets["lab"]) for _ in range(rounds)]
    await farm.close()
    await local.close()
    print(f"firmware on netduinoplus2, {rounds} paired rounds, seconds (McuTarget.run)")
    print(f"labgrid farm (loopback)   : {spread(ours)}")
    print(f"local QEMU backend        : {spread(theirs)}")
    print(f"ratio farm / local        : {spread(ratio)}")
    print("where the farm's run goes (each phase ends when its line appears):")
    names = {"acquired": "build + coordinator session + acquire",
             "serial": "TCP to ser2net + 1.0 s for it to open the port",
             "flash": "flash step starts",
             "first byte": "flash step (QEMU started) to first UART byte",
             "end line": "firmware to PASSED",
             "released": "end grace + release",
             "session stop": "session stop, verdict input"}
    for key, values in phases.items():
        print(f"  {names[key]:<46}: {spread(values)}")
    print(f"  (a coordinator session alone opens in      : {spread(opens)})")
    print(f"  (the check before the prompt, connect()    : {spread(checks)})")
    print(f"  (a bare acquire, the exporter starting ser2net: {spread([a for a, _ in cycles])})")
    print(f"  (a bare release, the exporter stopping it : {spread([b for _, b in cycles])})")
    print(f"  (another user's release to our acquire     : {spread(handovers)})")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with loopback_farm(("f4-bench-1",)) as lab:
        asyncio.run(main(n, lab))
