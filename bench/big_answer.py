"""How big answers cost: a big code answer through a whole run, big prose through extract.

Run: .venv/bin/python bench/big_answer.py [--replay-mb 5] [--prose-mb 50] [--pairs 3]

Each figure comes from paired runs taken in turn (A B A B ...), each in a fresh
process, and is printed with its baseline from the same pairs:

- ``verifybot run`` replaying an answer of one 5 MB Python block (the local
  target runs it) against the same program started by hand (``python3 -u
  prog.py > /dev/null``) [goals: <= 3 s, <= 400 MB];
- ``verifybot extract`` of 50 MB of prose ending in one code block against a
  process that only reads the file [goals: <= 6 s, <= 600 MB];
- the 128 MB flood kept in outputs/ (in this process).

Memory is VerifyBot's own process's peak (VmHWM), not the program's it runs:
a 5 MB Python program costs CPython hundreds of MB to compile, whoever runs it.
The answer limit ([run] max_answer_mb, default 5) is raised just enough.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from verifybot_tui.core.loop.recorder import OutputFile

# Runs the CLI in this child and reports its own time and peak memory on stderr.
_CLI = ("import sys, time\n"
        "from verifybot_tui.cli.entry import main\n"
        "t = time.perf_counter()\n"
        "sys.stdout = open('/dev/null', 'w')\n"
        "sys.stderr, err = open('/dev/null', 'w'), sys.stderr\n"
        "code = main(sys.argv[1:])\n"
        "took = time.perf_counter() - t\n"
        "hwm = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
        "print(f'{took} {int(hwm) / 1024} {code}', file=err)\n")
# The baseline of extract: a process that reads the file and nothing more.
_READ = ("import sys, time\n"
         "t = time.perf_counter()\n"
         "n = len(open(sys.argv[1], encoding='utf-8').read())\n"
         "took = time.perf_counter() - t\n"
         "hwm = open('/proc/self/status').read().split('VmHWM:')[1].split()[0]\n"
         "print(f'{took} {int(hwm) / 1024} 0', file=sys.stderr)\n")


def code_answer(size: int) -> str:
    line = "print('x' * 40)  # a line of code\n"
    return "Here:\n\n```python\n" + line * (size // len(line)) + "```\n"


def prose_answer(size: int) -> str:
    para = "Some prose with `inline` code and **bold** text. " * 20 + "\n\n"
    return para * (size // len(para)) + "Save it as `main.py`:\n\n```python\nprint('hi')\n```\n"


def child(script: str, args: list[str]) -> tuple[float, float, int]:
    """(seconds, peak MB, exit code) the child reports of itself."""
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                          text=True, check=False)
    took, rss, code = done.stderr.split()[-3:]
    return float(took), float(rss), int(code)


def by_hand(program: Path) -> tuple[float, float, int]:
    t = time.perf_counter()
    with open("/dev/null", "w") as out:
        code = subprocess.run([sys.executable, "-u", str(program)], stdout=out,
                              check=False).returncode
    return time.perf_counter() - t, 0.0, code


def paired(a, b, pairs: int) -> tuple[list[tuple[float, float, int]], ...]:  # type: ignore[no-untyped-def]
    runs_a, runs_b = [], []
    for _ in range(pairs):
        runs_a.append(a())
        runs_b.append(b())
    return runs_a, runs_b


def show(label: str, ours: list[tuple[float, float, int]], base: list[tuple[float, float, int]],
         base_label: str, goal: str) -> None:
    ratios = [o[0] / b[0] for o, b in zip(ours, base, strict=True)]
    secs = statistics.median(o[0] for o in ours)
    mb = max(o[1] for o in ours)
    base_secs = statistics.median(b[0] for b in base)
    print(f"{label}: {secs:6.2f} s (median), peak {mb:4.0f} MB (max), exit "
          f"{sorted({o[2] for o in ours})}; {base_label} {base_secs:.2f}"
          f" s; ratio median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, "
          f"max {max(ratios):.2f})   {goal}")


def replay_figures(d: Path, mb: float, pairs: int) -> None:
    text = code_answer(int(mb * 1024 * 1024))
    transcript = d / "code.md"
    transcript.write_text(f"## Answer 1\n\n`````markdown\n{text}`````\n")
    program = d / "prog.py"
    program.write_text(text.split("```python\n", 1)[1].rsplit("```", 1)[0])
    config = d / "replay.toml"
    config.write_text(f"[run]\nmax_answer_mb = {mb + 1:g}\n")
    runs = iter(range(10_000))

    def replay() -> tuple[float, float, int]:
        return child(_CLI, ["run", "x", "--config", str(config), "--llm", f"replay:{transcript}",
                            "--target", "local", "--yes", "--max-retries", "0",
                            "--workspace", str(d / f"ws{next(runs)}")])

    ours, base = paired(replay, lambda: by_hand(program), pairs)
    show(f"verifybot run, replayed {mb:g} MB code answer", ours, base,
         "the program by hand", "[goal <= 3 s, <= 400 MB]")


def extract_figures(d: Path, mb: float, pairs: int) -> None:
    answer = d / "prose.md"
    answer.write_text(prose_answer(int(mb * 1024 * 1024)))
    config = d / "extract.toml"
    config.write_text(f"[run]\nmax_answer_mb = {mb + 1:g}\n")
    ours, base = paired(lambda: child(_CLI, ["extract", str(answer), "--config", str(config)]),
                        lambda: child(_READ, [str(answer)]), pairs)
    show(f"verifybot extract, {mb:g} MB of prose + one block", ours, base,
         "reading the file", "[goal <= 6 s, <= 600 MB]")


def flood_figure(d: Path) -> None:
    out = OutputFile(d / "o.txt", "p.py", "local", max_bytes=64 * 1024 * 1024)
    chunk = "y" * 65535 + "\n"
    t = time.perf_counter()
    for _ in range(2048):  # 128 MB of output
        out.add("stdout", chunk)
    out.footer("done")
    out.close()
    size = (d / "o.txt").stat().st_size
    print(f"outputs/ of a 128 MB flood: {size / 1e6:.1f} MB kept in "
          f"{time.perf_counter() - t:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replay-mb", type=float, default=5)
    ap.add_argument("--prose-mb", type=float, default=50)
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="vb-big-") as tmp:
        d = Path(tmp)
        replay_figures(d, args.replay_mb, args.pairs)
        extract_figures(d, args.prose_mb, args.pairs)
        flood_figure(d)


if __name__ == "__main__":
    main()
