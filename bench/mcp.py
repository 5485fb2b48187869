"""What a `run` through a warm `verifybot mcp` costs an agent, against the CLI and by hand.

One line of Python (``print(6 * 7)``) on the local target, each way timed from the
caller's side, median of N (default 30):
- by hand: ``python3 main.py`` started as a subprocess (the interpreter the local target
  uses; no sandbox, no records);
- mcp: a `run` tool call to a server started once (stdio, the SDK's own client): the
  sandbox, the saved version, the output file, the verdict and the history rows,
  without the start-up and the target's probe of a command;
- cli: ``verifybot extract answer.md --run --yes`` of the same program (the CLI's one
  run of a given program: the interpreter's start, the config, the probe, the loop);
- sandboxed: the local target's own run of it, called in this process (the sandbox, the
  run folder, no loop, no records, no protocol): what mcp adds on top of it is the
  server's own cost, the rest is the sandbox's.

Run: .venv/bin/python bench/mcp.py [--runs N]
Goal: mcp within 40 ms of by hand, well under the CLI. Prints figures; asserts nothing
(the machine may be shared: say so with the figures).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# Run as a script, this file's folder is first on sys.path, and this file is "mcp": the
# SDK of the same name must be found instead.
HERE = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.modules.pop("mcp", None)

from mcp import Client, StdioServerParameters  # noqa: E402

PROGRAM = "print(6 * 7)\n"
CONFIG = '[run]\nworkspace = "ws"\n'


def by_hand(folder: Path) -> float:
    # The interpreter itself, as the local target starts it (not a version manager's shim,
    # which is a shell script that costs more than the program).
    python = os.path.realpath(sys.executable)
    t = time.perf_counter()
    out = subprocess.run([python, "main.py"], cwd=folder, capture_output=True, text=True)
    took = time.perf_counter() - t
    assert out.stdout == "42\n", out
    return took


async def over_mcp(c: Client) -> float:
    args = {"files": [{"path": "main.py", "content": PROGRAM}], "target": "local"}
    t = time.perf_counter()
    got = await c.call_tool("run", args)
    took = time.perf_counter() - t
    assert got.structured_content and got.structured_content["stdout"] == "42\n", got
    return took


def over_cli(folder: Path) -> float:
    cmd = [sys.executable, "-m", "verifybot_tui", "extract", str(folder / "answer.md"),
           "--run", "--yes", "--config", str(folder / "config.toml")]
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=folder, capture_output=True, text=True,
                         stdin=subprocess.DEVNULL)
    took = time.perf_counter() - t
    assert out.returncode == 0 and "42" in out.stdout + out.stderr, out
    return took


async def sandboxed(target: Any, n: int) -> float:
    from verifybot_tui.core.base.ports import ProgramFile, RunRequest

    request = RunRequest(run_id=f"bench_{n}", entry="main.py", language="python", timeout=30,
                         files=[ProgramFile("main.py", "main.py", PROGRAM, "python")])
    t = time.perf_counter()
    got = await target.run(request, lambda _stream, _text: None)
    took = time.perf_counter() - t
    assert got.stdout == "42\n", got
    return took


async def rounds(folder: Path, runs: int) -> dict[str, list[float]]:
    """Each way once per round, in turn: a machine that gets busier mid-way weighs on
    all three alike."""
    (folder / "main.py").write_text(PROGRAM)
    (folder / "answer.md").write_text(f"```python\n{PROGRAM}```\n")
    cmd = [sys.executable, "-m", "verifybot_tui", "mcp", "--config", str(folder / "config.toml")]
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ),
                                   cwd=str(folder))
    from verifybot_tui.core.settings.config import load_config
    from verifybot_tui.targets import make_target

    cfg = load_config(str(folder / "config.toml"))
    target = make_target(cfg, "local", cfg.workspace)
    times: dict[str, list[float]] = {"by hand": [], "sandboxed": [], "mcp": [], "cli": []}
    async with Client(params, read_timeout_seconds=120) as c:
        for _ in range(3):  # warm: the target made, the first run folder, the caches
            await over_mcp(c)
        for n in range(runs):
            times["by hand"].append(by_hand(folder))
            times["sandboxed"].append(await sandboxed(target, n))
            times["mcp"].append(await over_mcp(c))
            times["cli"].append(over_cli(folder))
    return times


def show(name: str, times: list[float], base: float | None = None) -> None:
    med = statistics.median(times) * 1000
    p90 = sorted(times)[int(0.9 * (len(times) - 1))] * 1000
    extra = f"  (+{med - base:.1f} ms over by hand)" if base is not None else ""
    print(f"{name:10} median {med:7.1f} ms   p90 {p90:7.1f} ms   n={len(times)}{extra}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=30)
    runs = ap.parse_args().runs
    with tempfile.TemporaryDirectory(prefix="verifybot-bench-mcp-") as tmp:
        folder = Path(tmp)
        (folder / "config.toml").write_text(CONFIG)
        times = asyncio.run(rounds(folder, runs))
    base = statistics.median(times["by hand"]) * 1000
    print(f"one line of Python on the local target, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.2f}")
    for name, taken in times.items():
        show(name, taken, None if name == "by hand" else base)
    own = statistics.median(times["mcp"]) - statistics.median(times["sandboxed"])
    print(f"mcp over the sandboxed run alone: {own * 1000:+.1f} ms (the protocol, the loop's "
          "records: history, transcript, saved version, output file, verdict)")


if __name__ == "__main__":
    main()
