"""``verifybot compare --check DIR``: a benchmark proves itself.

Each task of a benchmark folder is a recipe (``DIR/<task>/task.toml``) with a
``date``, a reference solution (``solution.md``) and a plausible wrong one
(``wrong.md``), both replay transcripts; the wrong one says why it is wrong and how
that shows (``Fails as: output``, one of the failure kinds), and must fail that way: a
wrong answer that fails for another reason (a typo that does not compile) proves
nothing about the task's check. The check runs both through the real loop
on the real target (one attempt each, no feedback: a solution must be right as it
stands), as a compare of two "LLMs", ``solution`` and ``wrong``. It passes when every
solution is VERIFIED and every wrong answer FAILED on its run (not on an error of the
LLM or the target: a wrong answer that never ran proves nothing). CI runs it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
from dataclasses import replace
from pathlib import Path

from verifybot_tui.batch.cells import say
from verifybot_tui.batch.compare import out_folder, run_matrix, write_report
from verifybot_tui.batch.headless import Stops, check_names
from verifybot_tui.cli.common import EXIT_HANGUP, SIGNALS, install_stop_signals
from verifybot_tui.cli.recipes import approve_recipes
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
    ConfigError,
)
from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.verify.compare.matrix import FAILURE_KINDS, Cell, Matrix
from verifybot_tui.core.verify.recipe import Recipe, load_recipe

FAILS_AS = re.compile(r"^Fails as:\s*([a-z_]+)\s*$", re.MULTILINE)


def stated_failure(wrong: Path) -> str:
    """The failure kind a wrong answer says it shows (its ``Fails as: KIND`` line)."""
    found = FAILS_AS.search(wrong.read_text(encoding="utf-8", errors="replace"))
    if found is None or found.group(1) not in FAILURE_KINDS:
        raise ConfigError(f"{wrong}: a benchmark's wrong answer needs a line 'Fails as: KIND' "
                          f"(KIND one of {', '.join(FAILURE_KINDS)}) saying how it fails")
    return found.group(1)


def benchmark_tasks(folder: Path) -> list[Recipe]:
    """Every ``<task>/task.toml`` under the folder, each with its two answers and a date."""
    files = sorted(folder.glob("*/task.toml"))
    if not files:
        raise ConfigError(f"--check {folder}: no tasks (<task>/task.toml) in it")
    tasks = []
    for f in files:
        r = load_recipe(f, check_trust=False)  # approved in check_benchmark
        if not r.date:
            raise ConfigError(f"{f}: a benchmark task needs a 'date' (when it was written)")
        for answer in ("solution.md", "wrong.md"):
            if not (f.parent / answer).is_file():
                raise ConfigError(f"{f.parent}: a benchmark task needs {answer}")
        stated_failure(f.parent / "wrong.md")
        tasks.append(replace(r, llm=None, max_retries=0, judge=r.judge or "off"))
    names = [t.name for t in tasks]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise ConfigError(f"--check {folder}: two tasks are named {dup!r}")
    return tasks


async def check_benchmark(cfg: Config, folder: Path, args: argparse.Namespace) -> int:
    tasks = benchmark_tasks(folder)
    await approve_recipes(cfg, tasks, args.trust, "verifybot compare --check DIR --trust",
                          ["replay:solution.md, wrong.md"])  # the benchmark's own answers
    for t in tasks:
        check_names(cfg, t)
    llms = [(which, [f"replay:{(t.path.parent / f'{which}.md').resolve()}" for t in tasks])
            for which in ("solution", "wrong")]
    out = out_folder(cfg, args.out or str(
        cfg.workspace / "compare" / f"check-{dt.datetime.now():%Y%m%d-%H%M%S}"))
    stops = Stops()
    install_stop_signals(stops)
    m = await run_matrix(cfg, tasks, llms, repeat=1, parallel=args.parallel, out=out,
                         stops=stops, label="check")
    if stops.status is not None:
        return EXIT_HANGUP if SIGNALS["hangup"] else EXIT_INTERRUPTED
    bad = problems(tasks, m)
    m.check = {"ok": not bad, "problems": bad}
    write_report(m, out)
    for line in bad:
        say(f"check: {line}")
    print(f"{len(tasks) - len({b.split(':')[0] for b in bad})} of {len(tasks)} tasks: "
          "solution VERIFIED and wrong answer FAILED as it says; report in " + str(out))
    return EXIT_FAILED if bad else EXIT_SUCCESS


def problems(tasks: list[Recipe], m: Matrix) -> list[str]:
    """What keeps the benchmark from proving itself: a solution that did not verify, a
    wrong answer that did not fail, or failed another way than it says."""
    cells = {(c.recipe, c.llm): c for c in m.cells}
    bad = []
    for t in tasks:
        sol, wrong = cells.get((t.name, "solution")), cells.get((t.name, "wrong"))
        if sol is None or sol.status != "VERIFIED":
            bad.append(f"{t.name}: solution.md is {sol.status if sol else 'not run'}"
                       + (f" ({sol.message})" if sol and sol.message else ""))
        if wrong is None or wrong.status != "FAILED":
            bad.append(f"{t.name}: wrong.md is {wrong.status if wrong else 'not run'}, "
                       "not FAILED" + (f" ({wrong.message})" if wrong and wrong.message else ""))
            continue
        said = stated_failure(t.path.parent / "wrong.md")
        if _first_kind(wrong) != said:
            bad.append(f"{t.name}: wrong.md failed as {_first_kind(wrong) or 'nothing'}, "
                       f"not as it says (Fails as: {said})"
                       + (f" ({wrong.message})" if wrong.message else ""))
    return bad


def _first_kind(cell: Cell) -> str:
    return cell.failures[0] if cell.failures else ""
