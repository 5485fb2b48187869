"""Local runs before and after a change, paired run by run: the machine's load, which
drifts over minutes on a shared machine, hits both sides of each pair alike.

Two workers, one per source tree, each keep a LocalTarget (sandbox "auto") and do one
run per line they are sent; the driver sends them the same run in turn, alternating
which goes first, and prints each side's median and the median of the paired
differences (after minus before), with how many processes the last run named as
escaped.

Run: .venv/bin/python bench/local_pairs.py BEFORE_TREE [PAIRS]
     (BEFORE_TREE: a folder holding another verifybot_tui, e.g. from
     ``git archive main verifybot_tui | tar -x -C /tmp/before``; the other side is
     this checkout. Prints figures; asserts nothing.)
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
RUNS = {"python": ("python", "m.py", "pass\n"), "bash": ("bash", "m.sh", "true\n"),
        "c": ("c", "m.c", "int main(void){return 0;}\n"),
        "daemon": ("python", "m.py", "import subprocess\n"
                   "subprocess.Popen(['sleep', '600'], start_new_session=True)\n")}


async def worker(tree: str) -> None:
    """One side: verifybot_tui from ``tree`` (not the editable install), a run per line."""
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
    sys.path.insert(0, tree)
    from verifybot_tui.core.base.ports import ProgramFile, RunRequest
    from verifybot_tui.core.settings.config import TargetConfig
    try:
        from verifybot_tui.targets.local.target import LocalTarget
    except ImportError:  # a tree from before targets/local/ was a package (issue 43)
        from verifybot_tui.targets.local import LocalTarget  # type: ignore[attr-defined,no-redef]

    target = LocalTarget(TargetConfig(name="local"), Path(tempfile.mkdtemp(prefix="vb-pair-")))
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        lang, name, code = RUNS[line.strip()]
        request = RunRequest("pair_1", [ProgramFile(name, name, code, lang)], name, lang, 30)
        t0 = time.perf_counter()
        result = await target.run(request, lambda stream, text: None)
        print(f"{time.perf_counter() - t0:.6f} {len(result.escaped)}", flush=True)


def driver(before: str, pairs: int) -> None:
    sides = {side: subprocess.Popen(
        [sys.executable, __file__, "--worker", tree], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True, env={"PYTHONDONTWRITEBYTECODE": "1",
                                                "PATH": "/usr/local/bin:/usr/bin:/bin"})
        for side, tree in (("before", before), ("after", str(HERE)))}

    def one(side: str, kind: str) -> tuple[float, int]:
        proc = sides[side]
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(kind + "\n")
        proc.stdin.flush()
        took, escaped = proc.stdout.readline().split()
        return float(took), int(escaped)

    for kind in RUNS:
        times: dict[str, list[float]] = {"before": [], "after": []}
        named = {"before": 0, "after": 0}
        for i in range(pairs):
            for side in ("before", "after") if i % 2 == 0 else ("after", "before"):
                took, named[side] = one(side, kind)
                times[side].append(took)
        diffs = [a - b for a, b in zip(times["after"], times["before"], strict=True)]
        print(f"{kind} run, {pairs} pairs: before median "
              f"{statistics.median(times['before']) * 1000:.1f} ms, after "
              f"{statistics.median(times['after']) * 1000:.1f} ms, paired difference median "
              f"{statistics.median(diffs) * 1000:+.1f} ms (escaped named: before "
              f"{named['before']}, after {named['after']})", flush=True)
    for proc in sides.values():
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        asyncio.run(worker(sys.argv[2]))
    else:
        driver(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 40)
