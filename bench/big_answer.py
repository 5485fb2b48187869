"""How big answers and floods of output cost: extraction, replay streaming, outputs/.

Run: .venv/bin/python bench/big_answer.py [MB]
Prints figures; no thresholds. The loop refuses answers above [run] max_answer_mb
(default 5) before extracting them, so the 50 MB figures are what `extract` of a
raised limit would cost, not what a session pays.
"""

from __future__ import annotations

import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path

from verifybot_tui.core.extract import extract
from verifybot_tui.core.recorder import OutputFile
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
