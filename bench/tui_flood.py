"""How the TUI holds up under a flood of output, and how fast it shows its first frame.

Prints figures, asserts nothing (goals in brackets):
- a program writing 1,000,000 lines: wall time through the app (replay LLM,
  local target, auto-accept, until the pane shows the last line) vs the same
  command writing to a file [<= 1.5x]
- peak RSS growth of the app's process during the flood [<= 150 MB]
- key-press response during the flood: a key event posted every 20 ms from
  the prompt to the run's end, time until its binding's action runs,
  p50/p95/max [p95 <= 100 ms]
- time to first frame of `verifybot` vs a bare Textual app, in a pty,
  median of several starts [<= 1.5x]

Run: .venv/bin/python bench/tui_flood.py [--lines N] [--starts N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FLOOD = "for i in range({n}):\n    print(f'line {{i}} of the flood, some text to make it longer')\n"


def rss_kb(field: str = "VmRSS") -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def plain_run(program: Path, out: Path) -> float:
    """The same command the local target runs (python -u), writing to a file."""
    start = time.perf_counter()
    with open(out, "w") as f:
        subprocess.run([sys.executable, "-u", str(program)], stdout=f, check=True)
    return time.perf_counter() - start


async def app_run(tmp: Path, lines: int) -> dict[str, float]:
    from textual import events

    from verifybot_tui.core.loop.events import RunFinished, RunStarted
    from verifybot_tui.core.settings.config import parse_config
    from verifybot_tui.tui.app import VerifyBotApp
    from verifybot_tui.tui.messages import LoopEvent

    transcript = tmp / "flood.md"
    transcript.write_text("## Answer 1\n\n````markdown\n```python\n"
                          + FLOOD.format(n=lines) + "```\n````\n")
    cfg = parse_config({"run": {"workspace": str(tmp / "ws"), "timeout": 600.0,
                                "auto_accept": True}})
    app = VerifyBotApp(config=cfg, llm=f"replay:{transcript}", target="local")
    marks: dict[str, float] = {}

    def hook(message: object) -> None:
        if isinstance(message, LoopEvent):
            if isinstance(message.event, RunStarted):
                marks.setdefault("started", time.perf_counter())
            elif isinstance(message.event, RunFinished):
                marks.setdefault("finished", time.perf_counter())

    latencies: list[float] = []
    sent: dict[int, float] = {}

    def probe() -> None:
        # The binding's action: how long the key waited behind the flood.
        if sent:
            latencies.append(time.perf_counter() - sent.pop(min(sent)))

    async with app.run_test(size=(140, 44), message_hook=hook) as pilot:
        app.action_bench_probe = probe  # type: ignore[attr-defined]
        app.bind("f12", "bench_probe", show=False)
        while app.main_screen is None or not app.main_screen.is_mounted:
            await pilot.pause(0.01)
        await pilot.pause(0.3)
        base_rss = rss_kb()
        screen = app.main_screen
        screen.query_one("#prompt").value = "flood"
        await pilot.press("enter")
        output = screen.query_one("#output")
        last = f"line {lines - 1} of the flood, some text to make it longer"
        key = 0
        while True:
            if "finished" not in marks:  # from the prompt on, through the whole run
                key += 1
                sent[key] = time.perf_counter()
                app.post_message(events.Key("f12", None))
            await asyncio.sleep(0.02)
            if "finished" in marks and output._lines and output._lines[-2][1] == last:
                marks["shown"] = time.perf_counter()
                break
            if time.perf_counter() - marks.get("started", time.perf_counter()) > 900:
                raise RuntimeError("the flood did not finish in 15 minutes")
        await pilot.pause(0.2)
        peak = rss_kb("VmHWM")
        chunks = app.output_buffer.chunks
    lat = sorted(latencies) or [0.0]
    return {
        "wall": marks["shown"] - marks["started"],
        "run": marks["finished"] - marks["started"],
        "rss_growth_mb": (peak - base_rss) / 1024,
        "base_rss_mb": base_rss / 1024,
        "keys": len(latencies),
        "key_p50_ms": statistics.median(lat) * 1000,
        "key_p95_ms": lat[min(len(lat) - 1, int(len(lat) * 0.95))] * 1000,
        "key_max_ms": lat[-1] * 1000,
        "chunks": chunks,
    }


# A bare Textual app with the main screen's layout: the same containers and ids, the
# same stylesheet, a plain Static for each pane, an Input for the prompt, a Footer.
BARE = """
import sys
from textual.app import App
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Input, Static
class Bare(App):
    CSS_PATH = sys.argv[1]
    def compose(self):
        yield Static("status", id="status")
        with Horizontal(id="body"):
            yield Static("history", id="history")
            with Vertical(id="work"):
                with Horizontal(id="top"):
                    conversation = Static("", id="conversation")
                    conversation.border_title = "Conversation"
                    yield conversation
                    yield Static("code", id="code")
                yield Static("output", id="output")
        with Vertical(id="bottom"):
            yield Input(placeholder="Ask for a program", id="prompt")
        yield Footer()
Bare().run()
"""
TCSS = ROOT / "verifybot_tui" / "tui" / "screens" / "main" / "main.tcss"


# Run in the child before the app: the first write holding the marker records the
# process's CPU time so far (what the start cost, whatever else the machine does).
PROBE = """
import os, sys, time
from textual.drivers.linux_driver import LinuxDriver
_write = LinuxDriver.write
def write(self, data, _done=[]):
    if not _done and os.environ["VB_MARKER"] in data:
        _done.append(1)
        with open(os.environ["VB_CPU_FILE"], "w") as f:
            f.write(str(time.process_time()))
    _write(self, data)
LinuxDriver.write = write
"""


def first_frame(argv: list[str], marker: bytes, env: dict[str, str],
                cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds from spawn until ``marker`` is written to the terminal."""
    import fcntl
    import struct
    import termios

    cpu_file = cwd / "first-frame-cpu"
    cpu_file.unlink(missing_ok=True)
    env = {**env, "VB_MARKER": marker.decode(), "VB_CPU_FILE": str(cpu_file)}
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(cwd)
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 130, 0, 0))
    start = time.perf_counter()
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], 30)
            if not ready:
                raise RuntimeError(f"no {marker!r} in 30 s: {seen[-500:]!r}")
            try:
                data = os.read(fd, 65536)
            except OSError:
                raise RuntimeError(f"exited before {marker!r}: {seen[-500:]!r}") from None
            seen += data
            if marker in seen:
                wall = time.perf_counter() - start
                break
        for _ in range(100):
            if cpu_file.exists() and cpu_file.read_text():
                return wall, float(cpu_file.read_text())
            time.sleep(0.01)
        raise RuntimeError("the child did not record its CPU time")
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def first_frames(tmp: Path, starts: int) -> dict[str, float]:
    # As a user's shell runs it: bytecode cached (a PYTHONDONTWRITEBYTECODE here would
    # make every start compile the modules without a .pyc, which no user pays twice).
    env = {k: v for k, v in os.environ.items()
           if k not in ("NO_COLOR", "PYTHONDONTWRITEBYTECODE")}
    env.update(TERM="xterm-256color", XDG_CONFIG_HOME=str(tmp / "cfg"),
               XDG_DATA_HOME=str(tmp / "data"))
    transcript = tmp / "one.md"
    transcript.write_text("## Answer 1\n\n```python\nprint(1)\n```\n")
    # What the `verifybot` entry point runs, after the probe.
    vb = [sys.executable, "-c", PROBE + "from verifybot_tui.cli.entry import main\n"
          "sys.argv[0] = 'verifybot'\nsys.exit(main())",
          "--llm", f"replay:{transcript}", "--workspace", str(tmp / "ws-ff")]
    bare = [sys.executable, "-c", PROBE + BARE, str(TCSS)]
    ours, theirs = [], []
    first_frame(vb, b"Conversation", env, tmp)  # warm the file cache once
    first_frame(bare, b"Conversation", env, tmp)
    for _ in range(starts):  # in turn, so a machine that slows down slows both
        ours.append(first_frame(vb, b"Conversation", env, tmp))
        theirs.append(first_frame(bare, b"Conversation", env, tmp))
    return {"ours": statistics.median(t[0] for t in ours),
            "bare": statistics.median(t[0] for t in theirs),
            "ours_cpu": statistics.median(t[1] for t in ours),
            "bare_cpu": statistics.median(t[1] for t in theirs),
            "ratio": statistics.median(a[0] / b[0] for a, b in zip(ours, theirs, strict=True)),
            "ratio_cpu": statistics.median(a[1] / b[1] for a, b in zip(ours, theirs,
                                                                          strict=True))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--starts", type=int, default=5)
    args = ap.parse_args()
    os.environ.pop("NO_COLOR", None)
    with tempfile.TemporaryDirectory(prefix="vb-bench-") as d:
        tmp = Path(d)
        os.environ["XDG_CONFIG_HOME"] = str(tmp / "cfg")
        os.environ["XDG_DATA_HOME"] = str(tmp / "data")
        program = tmp / "flood.py"
        program.write_text(FLOOD.format(n=args.lines))
        plain = plain_run(program, tmp / "plain.txt")
        r = asyncio.run(app_run(tmp, args.lines))
        ff = first_frames(tmp, args.starts)
    print(f"flood of {args.lines:,} lines ({r['chunks']:,} output chunks)")
    print(f"  plain run to a file      {plain:8.2f} s")
    print(f"  through the app          {r['wall']:8.2f} s  = {r['wall'] / plain:.2f}x plain  "
          f"(program ran {r['run']:.2f} s)   [goal <= 1.5x]")
    print(f"  peak RSS growth          {r['rss_growth_mb']:8.1f} MB  "
          f"(from {r['base_rss_mb']:.0f} MB)   [goal <= 150 MB]")
    print(f"  key response ({r['keys']} keys)  p50 {r['key_p50_ms']:.1f} ms  "
          f"p95 {r['key_p95_ms']:.1f} ms  max {r['key_max_ms']:.1f} ms   [goal p95 <= 100 ms]")
    print(f"first frame (median of {args.starts} starts; wall, and the process's CPU time)")
    print(f"  verifybot                {ff['ours'] * 1000:8.0f} ms wall  "
          f"{ff['ours_cpu'] * 1000:6.0f} ms CPU")
    print(f"  bare Textual app         {ff['bare'] * 1000:8.0f} ms wall  "
          f"{ff['bare_cpu'] * 1000:6.0f} ms CPU")
    print(f"  ratio                    {ff['ours'] / ff['bare']:8.2f}x wall  "
          f"{ff['ours_cpu'] / ff['bare_cpu']:6.2f}x CPU   [goal <= 1.5x]")


if __name__ == "__main__":
    main()
