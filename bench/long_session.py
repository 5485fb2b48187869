"""Whether a long session stays flat: attempts 21-40 against attempts 1-20, in the app.

Run: .venv/bin/python bench/long_session.py [--attempts 40]

One session in the real app (Pilot, replay LLM, local target, auto-accept,
feedback sent without review, judge off): every answer is a program that
prints a few lines, writes to stderr and exits 1, so the loop goes round again
until the last attempt. Printed: the time of each half (from one attempt's
prompt to the next's), their ratio [goal <= 1.2], and the process's memory
(RSS after a garbage collection) at the end of each half: growth over the
second half [goal < 10 MB]. A first warm-up session is run and discarded.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ANSWER = """## Answer {n}

Here is version {n} of the program, with a longer explanation of what changed so
that the conversation pane has some markdown to render: a list,

- it prints a few lines,
- it writes to stderr,
- it **fails** with exit status 1.

```python
import sys
for i in range(20):
    print("attempt {n}, line", i)
print("something went wrong", file=sys.stderr)
sys.exit(1)
```

"""


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def session(tmp: Path, attempts: int) -> tuple[list[float], dict[int, float]]:
    """Seconds at each attempt's prompt (and the end), RSS (MB) after attempts 20 and 40."""
    from verifybot_tui.core.loop.events import Finished, PromptSent
    from verifybot_tui.core.settings.config import parse_config
    from verifybot_tui.tui.app import VerifyBotApp
    from verifybot_tui.tui.messages import LoopEvent

    transcript = tmp / "answers.md"
    transcript.write_text("".join(ANSWER.format(n=n) for n in range(1, attempts + 1)))
    cfg = parse_config({"run": {"workspace": str(tmp / "ws"), "timeout": 30.0,
                                "auto_accept": True, "max_retries": attempts - 1,
                                "judge": "off"}})
    app = VerifyBotApp(config=cfg, llm=f"replay:{transcript}", target="local",
                       review_feedback=False)
    marks: list[float] = []
    memory: dict[int, float] = {}
    done = asyncio.Event()

    def hook(message: object) -> None:
        if isinstance(message, LoopEvent):
            if isinstance(message.event, PromptSent):
                marks.append(time.perf_counter())
            elif isinstance(message.event, Finished):
                marks.append(time.perf_counter())
                done.set()

    async with app.run_test(size=(140, 44), message_hook=hook) as pilot:
        while app.main_screen is None or not app.main_screen.is_mounted:
            await pilot.pause(0.01)
        await pilot.pause(0.3)
        app.main_screen.query_one("#prompt").value = "a program that fails"
        await pilot.press("enter")
        half = attempts // 2
        while not done.is_set():
            await asyncio.sleep(0.05)
            if len(marks) == half + 1 and half not in memory:
                gc.collect()
                memory[half] = rss_mb()
        await pilot.pause(0.5)
        gc.collect()
        memory[attempts] = rss_mb()
    return marks, memory


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--attempts", type=int, default=40)
    args = ap.parse_args()
    os.environ.pop("NO_COLOR", None)
    with tempfile.TemporaryDirectory(prefix="vb-long-") as d:
        tmp = Path(d)
        os.environ["XDG_CONFIG_HOME"] = str(tmp / "cfg")
        os.environ["XDG_DATA_HOME"] = str(tmp / "data")
        (tmp / "warm").mkdir()
        asyncio.run(session(tmp / "warm", 4))
        (tmp / "run").mkdir()
        marks, memory = asyncio.run(session(tmp / "run", args.attempts))
    half = args.attempts // 2
    first, second = marks[half] - marks[0], marks[-1] - marks[half]
    print(f"one session of {args.attempts} attempts ({len(marks) - 1} measured)")
    print(f"  attempts 1-{half}: {first:7.2f} s   attempts {half + 1}-{args.attempts}: "
          f"{second:7.2f} s   ratio {second / first:.2f}   [goal <= 1.2]")
    print(f"  RSS after attempt {half}: {memory[half]:.1f} MB, after attempt {args.attempts}: "
          f"{memory[args.attempts]:.1f} MB   growth {memory[args.attempts] - memory[half]:+.1f}"
          f" MB   [goal < 10 MB]")


if __name__ == "__main__":
    main()
