"""How big answers and floods of output cost: extraction, replay streaming, outputs/.

Run: .venv/bin/python bench/big_answer.py [MB]
Prints figures; no thresholds. The loop refuses answers above [run] max_answer_mb
(default 5) before extracting them, so the 50 MB figures are what `extract` of a
raised limit would cost, not what a session pays. The `verifybot extract FILE`
lines run the real command in a fresh process (time and peak RSS of the whole
process; the issue's goal for 50 MB: under 10 s and 500 MB).
"""

from __future__ import annotations

import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.loop.recorder import OutputFile
from verifybot_tui.llm.replay import ReplayLLM


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def answer(kind: str, size: int) -> str:
    if kind == "code":
        line = "print('x' * 40)  # a line of code\n"
        return "Here:\n\n```python\n" + line * (size // len(line)) + "```\n"
    para = "Some prose with `inline` code and **bold** text. " * 20 + "\n\n"
    return para * (size // len(para))


async def replay_steps(text: str) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "a.md"
        path.write_text(f"## Answer 1\n\n`````markdown\n{text}`````\n")
        llm = ReplayLLM(path)
        await llm.start()
        steps = 0

        def on_text(_: str) -> None:
            nonlocal steps
            steps += 1

        t = time.perf_counter()
        await llm.ask("x", on_text)
        return steps, time.perf_counter() - t


def cli_extract(path: Path, limit_mb: float) -> tuple[float, float, int]:
    """`verifybot extract FILE` in its own process: seconds, peak RSS in MB, exit code."""
    config = path.with_suffix(".toml")
    config.write_text(f"[run]\nmax_answer_mb = {limit_mb:g}\n")
    script = ("import sys, time\n"
              "from verifybot_tui.cli.entry import main\n"
              "t = time.perf_counter()\n"
              "sys.stdout = open('/dev/null', 'w')\n"
              "code = main(['extract', sys.argv[1], '--config', sys.argv[2]])\n"
              "took = time.perf_counter() - t\n"
              "hwm = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
              "rss = int(hwm) / 1024  # ru_maxrss would count the parent's, kept by exec\n"
              "print(f'{took} {rss} {code}', file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", script, str(path), str(config)],
                          capture_output=True, text=True, check=False)
    took, rss, code = done.stderr.split()[-3:]
    return float(took), float(rss), int(code)


def main() -> None:
    sizes = [float(a) for a in sys.argv[1:]] or [1, 5]
    for mb in sizes:
        for kind in ("code", "prose"):
            text = answer(kind, int(mb * 1024 * 1024))
            t = time.perf_counter()
            ex = extract(text)
            took = time.perf_counter() - t
            print(f"extract {kind:5} {mb:5.1f} MB: {took:6.2f} s, {len(ex.blocks)} blocks, "
                  f"max RSS so far {rss_mb():.0f} MB")
        steps, took = asyncio.run(replay_steps(answer("code", int(mb * 1024 * 1024))))
        print(f"replay {mb:5.1f} MB answer: {steps} steps, {took:.2f} s")
        with tempfile.TemporaryDirectory() as d:
            for kind in ("code", "prose"):
                for heading in ("", "## Answer 1\n\n"):
                    path = Path(d) / "answer.md"
                    path.write_text(heading + answer(kind, int(mb * 1024 * 1024)))
                    took, rss, code = cli_extract(path, mb + 1)
                    form = "as '## Answer 1'" if heading else "one answer    "
                    print(f"verifybot extract {kind:5} {mb:5.1f} MB {form}: {took:6.2f} s, "
                          f"peak RSS {rss:4.0f} MB, exit {code}")
    with tempfile.TemporaryDirectory() as d:
        out = OutputFile(Path(d) / "o.txt", "p.py", "local", max_bytes=64 * 1024 * 1024)
        chunk = "y" * 65535 + "\n"
        t = time.perf_counter()
        for _ in range(2048):  # 128 MB of output
            out.add("stdout", chunk)
        out.footer("done")
        out.close()
        size = (Path(d) / "o.txt").stat().st_size
        print(f"outputs/ of a 128 MB flood: {size / 1e6:.1f} MB kept in "
              f"{time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
