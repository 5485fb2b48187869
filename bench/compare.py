"""What ``verifybot compare`` costs over ``recipe run``, and what ``--parallel`` buys.

1. Overhead: the same recipes (local Python programs, replayed answers: one wrong
   first, then right) through ``verifybot recipe run FILE...`` (one process, the
   recipes one by one) and through ``verifybot compare DIR --llm replay:DIR/`` (one
   LLM, ``--parallel 1``). Also against one ``recipe run`` process per recipe.
   Goal: compare / recipe run <= 1.1.
2. Three backends side by side: three recipes x three LLMs (two replays and the
   loopback API server of tests/support, the one the tests use), each program
   taking about two seconds (the wait an LLM or a board costs), with
   ``--parallel 3`` against ``--parallel 1``.
   Goal: parallel / serial <= 0.5.

Run: .venv/bin/python bench/compare.py [--runs N] [--recipes N]
Prints medians of wall times (the machine may be shared: say so with the figures).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from apiserver import ApiServer  # noqa: E402

KEY, KEY_ENV = "vb-bench-key-4e1d", "VB_BENCH_API_KEY"
CLI = [sys.executable, "-m", "verifybot_tui"]


def _answers(*codes: str) -> str:
    parts = ["# bench transcript\n"]
    for i, code in enumerate(codes, 1):
        parts.append(f"## Answer {i}\n\n````markdown\nHere:\n\n```python\n"
                     f"{textwrap.dedent(code).strip()}\n```\n````\n")
    return "\n".join(parts)


def _recipe(folder: Path, name: str, expect: str, llm: str | None) -> None:
    text = (f'name = "{name}"\nprompt = "print {expect}"\ntarget = "local"\n'
            f'criteria = ["contains:{expect}"]\njudge = "off"\nmax_retries = 2\ntimeout = 20\n')
    if llm:
        text += f'llm = "{llm}"\n'
    (folder / f"{name}.toml").write_text(text)


def _timed(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    t0 = time.monotonic()
    done = subprocess.run([*CLI, *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=900)
    took = time.monotonic() - t0
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args)}: exit {done.returncode}\n{done.stderr[-3000:]}")
    return took


def overhead(tmp: Path, n: int, runs: int) -> None:
    recipes, answers = tmp / "recipes", tmp / "answers"
    recipes.mkdir()
    answers.mkdir()
    for i in range(n):
        name = f"task{i}"
        (answers / f"{name}.md").write_text(_answers(f'print("NOPE {i}")',
                                                     f'print("DONE {i}")'))
        _recipe(recipes, name, f"DONE {i}", f"replay:../answers/{name}.md")
    files = [str(p) for p in sorted(recipes.glob("*.toml"))]
    one, each, cmp_ = [], [], []
    for r in range(runs):
        # --trust: the recipes read their replays from ../answers, outside their folder,
        # which a recipe from others may not do unasked; this bench wrote both
        one.append(_timed(["recipe", "run", *files, "--trust", "--workspace",
                           str(tmp / f"ws-r{r}")], tmp))
        t0 = time.monotonic()
        for f in files:
            _timed(["recipe", "run", f, "--trust", "--workspace", str(tmp / f"ws-e{r}")], tmp)
        each.append(time.monotonic() - t0)
        cmp_.append(_timed(["compare", str(recipes), "--llm", f"replay:{answers}/", "--out",
                            str(tmp / f"out-{r}"), "--workspace", str(tmp / f"ws-c{r}")], tmp))
    m_one, m_each, m_cmp = (statistics.median(x) for x in (one, each, cmp_))
    print(f"1. {n} recipes (2 attempts each), median of {runs}:")
    print(f"   recipe run FILE... (one process):  {m_one:6.2f} s")
    print(f"   recipe run FILE, one per process:  {m_each:6.2f} s")
    print(f"   compare DIR --llm replay:DIR/:      {m_cmp:6.2f} s")
    print(f"   compare / recipe run (one process): {m_cmp / m_one:.2f}x (goal <= 1.1x)")
    print(f"   compare / recipe run (per process): {m_cmp / m_each:.2f}x")


def side_by_side(tmp: Path, runs: int) -> None:
    recipes, team = tmp / "three", tmp / "team"
    recipes.mkdir()
    team.mkdir()
    slow = "import time\ntime.sleep(2)\nprint({!r})"
    for name, word in (("alpha", "ALPHA"), ("beta", "BETA"), ("gamma", "GAMMA")):
        _recipe(recipes, name, word, None)
        (team / f"{name}.md").write_text(_answers(slow.format(word)))
    all_words = "ALPHA BETA GAMMA"
    (tmp / "b.md").write_text(_answers(slow.format(all_words)))
    server = ApiServer(key=KEY, answers=[
        f"Here:\n\n```python\n{slow.format(all_words)}\n```\n"]).start()
    try:
        (tmp / "config.toml").write_text(
            f'[run]\ndefault_llm = "api"\n\n[llm.api]\nkind = "openai"\n'
            f'base_url = "{server.url}"\nmodel = "coder"\napi_key_env = "{KEY_ENV}"\n')
        serial, parallel = [], []
        for r in range(runs):
            for n, into in ((1, serial), (3, parallel)):
                into.append(_timed(
                    ["compare", str(recipes), "--llm", f"replay:{team}/", "--llm",
                     f"replay:{tmp / 'b.md'}", "--llm", "api", "--parallel", str(n),
                     "--out", str(tmp / f"out3-{n}-{r}"), "--workspace", str(tmp / f"ws3-{r}"),
                     "--config", str(tmp / "config.toml")], tmp, {KEY_ENV: KEY}))
    finally:
        server.stop()
    m_s, m_p = statistics.median(serial), statistics.median(parallel)
    print(f"2. 3 recipes x 3 LLMs (two replays, the loopback API), median of {runs}:")
    print(f"   --parallel 1: {m_s:6.2f} s")
    print(f"   --parallel 3: {m_p:6.2f} s")
    print(f"   parallel / serial: {m_p / m_s:.2f}x (goal <= 0.5x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--recipes", type=int, default=6)
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} "
          "(shared with other work)")
    with tempfile.TemporaryDirectory(prefix="vb-bench-compare-") as tmp:
        overhead(Path(tmp), args.recipes, args.runs)
        side_by_side(Path(tmp), args.runs)


if __name__ == "__main__":
    main()
