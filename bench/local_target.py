"""Figures for the local target: start-up cost per run, the tree scan, a flood, timeouts,
and how often stdout and stderr lines written with no pause between them arrive swapped
(both pipes are read in one place, but two pipes share no clock: see the README).

Run: .venv/bin/python bench/local_target.py   (prints figures; asserts nothing;
     VB_BENCH_PAIRS=N sets the sandbox on/off pairs per language, default 30)
Before/after a change, run by run: bench/local_pairs.py.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from verifybot_tui.core.base.ports import ProgramFile, RunRequest
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.containment import cgroups
from verifybot_tui.targets.containment.tree import tree_pids
from verifybot_tui.targets.local.launch import preexec
from verifybot_tui.targets.local.target import LocalTarget
from verifybot_tui.targets.sandbox import init_script
from verifybot_tui.targets.sandbox.bubblewrap import sandbox_argv

FLOOD = ("import sys\nblock = ''.join(f'line {i}\\n' for i in range(10000))\n"
         "for _ in range(100):\n    sys.stdout.write(block)\n")


PAIRS = 20000
MIXED = (f"import sys\nfor i in range({PAIRS}):\n"
         "    print(i, flush=True)\n    print(i, file=sys.stderr, flush=True)\n")


def out_of_order(chunks: list[tuple[str, str]]) -> tuple[int, int]:
    """Lines that arrived after a line written later than them, and all lines."""
    rest = {"stdout": "", "stderr": ""}
    order: list[int] = []
    for stream, text in chunks:
        *lines, rest[stream] = (rest[stream] + text).split("\n")
        order += [2 * int(n) + (stream == "stderr") for n in lines if n.strip()]
    late, newest = 0, -1
    for n in order:
        late += n < newest
        newest = max(newest, n)
    return late, len(order)


def request(code: str, name: str = "main.py", lang: str = "python",
            timeout: float = 30) -> RunRequest:
    return RunRequest("bench_1", [ProgramFile(name, name, code, lang)], name, lang, timeout)


def ignore(stream: str, text: str) -> None:
    pass


async def timed(target: LocalTarget, req: RunRequest) -> tuple[float, object]:
    t0 = time.perf_counter()
    result = await target.run(req, ignore)
    return time.perf_counter() - t0, result


DAEMON = ("import os, subprocess\n"
          "subprocess.Popen(['sleep', '600'], start_new_session=True)\n")


async def start_up(target: LocalTarget, plain: LocalTarget, runs: int) -> None:
    """Trivial runs, in and out of the sandbox, paired run by run (the order alternating)
    so the machine's load hits both alike: what the sandbox adds is the median of the
    paired differences. Then one that leaves a daemon behind."""
    for lang, name, code in (("python", "m.py", "pass\n"), ("bash", "m.sh", "true\n"),
                             ("c", "m.c", "int main(void){return 0;}\n")):
        times: dict[str, list[float]] = {"auto": [], "off": []}
        sides = {"auto": target, "off": plain}
        for i in range(runs):
            for side in ("auto", "off") if i % 2 == 0 else ("off", "auto"):
                times[side].append((await timed(sides[side], request(code, name, lang)))[0])
        diffs = [a - b for a, b in zip(times["auto"], times["off"], strict=True)]
        print(f"{lang} trivial run, {runs} pairs: sandbox auto median "
              f"{statistics.median(times['auto']) * 1000:.1f} ms, sandbox off median "
              f"{statistics.median(times['off']) * 1000:.1f} ms; the sandbox adds (paired "
              f"difference median) {statistics.median(diffs) * 1000:+.1f} ms")
    for label, where in (("sandbox auto", target), ("sandbox off", plain)):
        runs_left = [await timed(where, request(DAEMON)) for _ in range(max(3, runs // 3))]
        escaped = getattr(runs_left[-1][1], "escaped", [])
        print(f"python run leaving a setsid daemon ({label}): median "
              f"{statistics.median(t for t, _ in runs_left) * 1000:.1f} ms; escaped {escaped}")


async def limits_cost(workspace: Path, runs: int) -> None:
    """What the limits (targets.sandbox.limits: rlimits, the init's ulimit, a sized /tmp, the
    run folder's watch, root's pids cgroup) add to a sandboxed run: trivial runs with the
    default limits and with none (every key 0), paired run by run, the order alternating."""
    limited = LocalTarget(TargetConfig(name="local"), workspace)
    free = LocalTarget(TargetConfig(name="local", max_processes=0, max_memory_mb=0, tmp_mb=0,
                                    max_file_mb=0, max_disk_mb=0), workspace)
    for lang, name, code in (("python", "m.py", "pass\n"), ("bash", "m.sh", "true\n"),
                             ("c", "m.c", "int main(void){return 0;}\n")):
        times: dict[str, list[float]] = {"limits": [], "none": []}
        sides = {"limits": limited, "none": free}
        for i in range(runs):
            for side in ("limits", "none") if i % 2 == 0 else ("none", "limits"):
                times[side].append((await timed(sides[side], request(code, name, lang)))[0])
        diffs = [a - b for a, b in zip(times["limits"], times["none"], strict=True)]
        print(f"{lang} trivial sandboxed run, {runs} pairs: default limits median "
              f"{statistics.median(times['limits']) * 1000:.1f} ms, no limits median "
              f"{statistics.median(times['none']) * 1000:.1f} ms; the limits add (paired "
              f"difference median) {statistics.median(diffs) * 1000:+.1f} ms")


def limits_parts(pairs: int = 200) -> None:
    """The limits' own work, apart from a run's noise: bubblewrap running ``true`` in a
    run's cgroup with the default limits (rlimits, the init's ulimit, a sized /tmp, root's
    pids.max) and with none, paired run by run."""
    from verifybot_tui.targets.sandbox import limits

    folder = Path(tempfile.mkdtemp(prefix="vb-bench-"))
    none = limits.Limits(0, 0, 0, 0, 0)
    argvs = {name: sandbox_argv(folder, True, limited=lim)
             for name, lim in (("limits", limits.Limits()), ("none", none))}
    if argvs["limits"] is None or argvs["none"] is None:
        return print("limits: no sandbox here")
    times: dict[str, list[float]] = {"limits": [], "none": []}
    for i in range(pairs):
        for name in ("limits", "none") if i % 2 == 0 else ("none", "limits"):
            t0 = time.perf_counter()
            cgroup = cgroups.new_cgroup()  # as every run makes one
            guard = limits.Guard(limits.Limits(), cgroup) if name == "limits" else None
            cgroup = guard.cgroup if guard is not None else cgroup
            subprocess.run([*argvs[name], "true"], stdin=subprocess.DEVNULL, check=True,
                           preexec_fn=preexec(cgroup, guard))
            if guard is not None:
                guard.finish(0, "", False)
            if cgroup is not None:
                cgroups.remove_cgroup(cgroup)
            times[name].append(time.perf_counter() - t0)
    diffs = [a - b for a, b in zip(times["limits"], times["none"], strict=True)]
    print(f"bwrap true, {pairs} pairs: with the default limits median "
          f"{statistics.median(times['limits']) * 1000:.2f} ms, none "
          f"{statistics.median(times['none']) * 1000:.2f} ms; paired difference median "
          f"{statistics.median(diffs) * 1000:+.2f} ms")


def init_cost(pairs: int = 100) -> None:
    """What the sandbox's init adds to a process that leaves nothing: bubblewrap running
    ``true`` without and with it, taken in turn (paired) so the machine's load hits both."""
    init = getattr(init_script, "INIT_ARGV", None)
    prefix = sandbox_argv(Path(tempfile.gettempdir()), True)
    if init is None or prefix is None:
        return print("sandbox init: none here (no bubblewrap, or a tree without the init)")
    bare = prefix[:-len(init)]
    times: dict[str, list[float]] = {"bare": [], "init": []}
    for _ in range(pairs):
        for label, argv in (("bare", bare), ("init", prefix)):
            t0 = time.perf_counter()
            subprocess.run([*argv, "true"], stdin=subprocess.DEVNULL, check=True)
            times[label].append(time.perf_counter() - t0)
    diffs = [b - a for a, b in zip(times["bare"], times["init"], strict=True)]
    print(f"bwrap true, {pairs} pairs: without the init median "
          f"{statistics.median(times['bare']) * 1000:.2f} ms, with it "
          f"{statistics.median(times['init']) * 1000:.2f} ms; paired difference median "
          f"{statistics.median(diffs) * 1000:.2f} ms")


async def main() -> None:
    target = LocalTarget(TargetConfig(name="local"), Path(tempfile.mkdtemp(prefix="vb-bench-")))
    plain = LocalTarget(TargetConfig(name="local", sandbox="off"), target.workspace)
    init_cost()
    limits_parts()
    await start_up(target, plain, int(os.environ.get("VB_BENCH_PAIRS", "30")))
    await limits_cost(target.workspace, int(os.environ.get("VB_BENCH_PAIRS", "30")))
    scans = []
    for _ in range(50):
        t0 = time.perf_counter()
        tree_pids(1)
        scans.append(time.perf_counter() - t0)
    print(f"/proc scan ({len(os.listdir('/proc'))} entries): "
          f"median {statistics.median(scans) * 1000:.2f} ms")
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    dt, r = await timed(target, request(FLOOD))
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"flood 1,000,000 lines ({r.stdout_bytes / 1e6:.1f} MB): {dt:.2f} s, "
          f"{r.stdout_bytes / 1e6 / dt:.0f} MB/s; result.stdout kept {len(r.stdout)} chars; "
          f"max RSS growth {(rss1 - rss0) / 1024:.1f} MiB")
    for _ in range(3):
        chunks: list[tuple[str, str]] = []
        t0 = time.perf_counter()
        await target.run(request(MIXED), lambda s, t, c=chunks: c.append((s, t)))
        swapped, lines = out_of_order(chunks)
        print(f"{PAIRS:,} stdout/stderr line pairs, flushed, no pause: {swapped} of {lines:,} "
              f"lines arrived after a later one ({time.perf_counter() - t0:.2f} s)")
    dt, _ = await timed(target, request("import time\ntime.sleep(60)\n", timeout=0.5))
    print(f"timeout 0.5 s -> result after {dt:.2f} s (TERM honoured)")
    dt, _ = await timed(target, request("import signal, time\n"
                                        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                        "time.sleep(60)\n", timeout=0.5))
    print(f"timeout 0.5 s, TERM ignored -> result after {dt:.2f} s (2 s grace, then KILL)")
    t0 = time.perf_counter()
    await target.probe()
    print(f"probe: {(time.perf_counter() - t0) * 1000:.0f} ms")


if __name__ == "__main__":
    asyncio.run(main())
