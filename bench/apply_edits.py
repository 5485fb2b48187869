"""How long applying a follow-up's edits to the project tree takes (issue 37).

Run: .venv/bin/python bench/apply_edits.py [--blocks 50] [--lines 5000] [--repeat 5]

One answer of 50 SEARCH/REPLACE blocks (aider's format: the path line, a fence,
the markers), each changing one function of a 5,000-line Python file; one in five
searches with its indentation lost, so the tolerant match runs too. The figure is
``plan_update`` end to end (extract of the answer, then every edit applied), the
median of a few runs [goal: under 0.2 s], and the same with the file's blocks as
unified diffs; and what plan_update adds to extract for 50 MB of prose.
"""

from __future__ import annotations

import argparse
import statistics
import time

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.answers.tree_changes import plan_update


def big_file(lines: int) -> str:
    """A Python module of ``lines`` lines: functions of ten lines each."""
    out: list[str] = []
    n = 0
    while len(out) < lines:
        out += [f"def step_{n}(rows):", f"    \"\"\"Step {n} of the pipeline.\"\"\"",
                "    total = 0", "    for row in rows:", f"        total += row * {n}",
                "        if total > 1000:", "            break", f"    print('step {n}', total)",
                "    return total", ""]
        n += 1
    return "\n".join(out[:lines]) + "\n"


def search_replace_answer(blocks: int, functions: int) -> str:
    parts = ["Here are the changes, as SEARCH/REPLACE blocks.\n"]
    for k in range(blocks):
        n = k * (functions // blocks)
        lost = k % 5 == 4  # the model dropped the indentation of what it searches for
        pad = "" if lost else "    "
        parts.append(
            f"pipeline.py\n```python\n<<<<<<< SEARCH\n{pad}for row in rows:\n"
            f"{pad}    total += row * {n}\n=======\n{pad}for row in rows:\n"
            f"{pad}    total += row * {n} + 1\n>>>>>>> REPLACE\n```\n")
    return "\n".join(parts)


def diff_answer(blocks: int, functions: int) -> str:
    parts = ["The patch:\n\n```diff\n--- a/pipeline.py\n+++ b/pipeline.py"]
    for k in range(blocks):
        n = k * (functions // blocks)
        parts.append(f"@@ ... @@\n     for row in rows:\n-        total += row * {n}\n"
                     f"+        total += row * {n} + 1\n         if total > 1000:")
    return "\n".join(parts) + "\n```\n"


def timed(tree: dict[str, str], answer: str, repeat: int) -> tuple[float, float]:
    """(median seconds of plan_update, of extract alone)."""
    whole, alone = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        update = plan_update(tree, answer)
        whole.append(time.perf_counter() - t)
        assert not update.problems, update.problems[:3]
        t = time.perf_counter()
        extract(answer)
        alone.append(time.perf_counter() - t)
    return statistics.median(whole), statistics.median(alone)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--blocks", type=int, default=50)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--prose-mb", type=int, default=50)
    args = parser.parse_args()
    text = big_file(args.lines)
    tree = {"pipeline.py": text, "main.py": "import pipeline\n"}
    functions = args.lines // 10
    for name, answer in (("SEARCH/REPLACE", search_replace_answer(args.blocks, functions)),
                         ("unified diff", diff_answer(args.blocks, functions))):
        update = plan_update(tree, answer)
        after = update.apply(tree)["pipeline.py"]
        changed = after.count(" + 1\n")
        assert changed == args.blocks, f"{changed} of {args.blocks} edits applied"
        took, extracting = timed(tree, answer, args.repeat)
        print(f"{name}: {args.blocks} edits to a {args.lines:,}-line file: "
              f"{took:.3f} s (extract {extracting:.3f} s of it) [goal: < 0.2 s]")
    prose_after_extract(args.prose_mb, tree)


def prose_after_extract(mb: int, tree: dict[str, str]) -> None:
    """What plan_update adds to a huge answer's extract (the loop calls both): prose
    that says "remove" and "rename" in every paragraph, naming no file of the tree."""
    para = "Please remove the old code, it is no longer needed; then rename nothing else.\n\n"
    answer = para * (mb * 1_000_000 // len(para)) + "```python\nprint('hi')\n```\n"
    ex = extract(answer)
    t = time.perf_counter()
    plan_update(tree, answer, ex)
    print(f"{mb} MB of prose: plan_update after extract {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
