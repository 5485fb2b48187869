"""``verifybot compare``: recipes x LLMs into a matrix; ``--report`` renders it again;
``--check`` proves a benchmark's reference solutions verify and its wrong ones fail.

The report (compare.json, compare.md, index.html) is written again after every cell,
so a Ctrl+C, or the stop watchdog's exit, still leaves the finished cells on disk.
Exit: 0 when the compare ran (a matrix is a result, not a test; ``--check``: every
solution verified and every wrong one failed, else 1), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from verifybot_tui.batch.cells import say
from verifybot_tui.batch.compare import (
    check_compare,
    find_recipes,
    out_folder,
    read_report,
    record,
    run_matrix,
    write_report,
)
from verifybot_tui.batch.headless import Stops
from verifybot_tui.cli.common import EXIT_HANGUP, SIGNALS, install_stop_signals
from verifybot_tui.cli.options import shared
from verifybot_tui.cli.recipes import approve_recipes
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
    ConfigError,
)
from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.verify.compare import report as compare_report
from verifybot_tui.core.verify.compare.matrix import Matrix


def add_args(p: argparse.ArgumentParser) -> None:
    p.description = ("Run each recipe with each LLM and compare them: pass@k, attempts, "
                     "times, models, failure kinds (compare.json, compare.md, index.html).")
    p.add_argument("recipes", nargs="*", metavar="RECIPE|DIR",
                   help="recipe files, or folders of them (searched for *.toml)")
    p.add_argument("--llm", action="append", default=[], metavar="NAME",
                   help="an [llm.NAME], replay:PATH, or replay:DIR/ (DIR/<recipe name>.md); "
                        "repeat it, once per LLM (replaces each recipe's own llm; "
                        "default: none; give one or more)")
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="runs of each recipe with each LLM (default: 1)")
    p.add_argument("--parallel", type=int, default=1, metavar="N",
                   help="cells at once; one browser profile still serves one (default: 1)")
    p.add_argument("--out", metavar="DIR",
                   help="where the report and the cells' workspaces go "
                        "(default: compare/<timestamp>/ in the workspace)")
    shared(p, "--json", text="print compare.json on stdout, the table on stderr (default: "
                             "the table on stdout)")
    p.add_argument("--report", metavar="DIR", help="render compare.md and index.html again "
                   "from DIR/compare.json (default: off)")
    p.add_argument("--resume", metavar="DIR",
                   help="finish an interrupted compare in DIR: run only its cells that are "
                        "missing or failed for the infrastructure (same recipes and LLMs, "
                        "read from DIR/compare.json) (default: off)")
    p.add_argument("--check", metavar="DIR",
                   help="a benchmark folder: each task's solution.md must verify, its "
                        "wrong.md must fail (default: off)")
    shared(p, "--trust", text="approve what the recipes and their board files set that "
                              "runs commands, without asking (default: ask; --yes never does)")
    shared(p, "--install")


async def cmd_compare(args: argparse.Namespace, cfg: Config) -> int:
    if args.report:
        return _report(Path(args.report))
    if args.repeat < 1 or args.parallel < 1:
        raise ConfigError("--repeat and --parallel must be 1 or more")
    if args.check:
        from verifybot_tui.cli.compare.check import check_benchmark

        return await check_benchmark(cfg, Path(args.check), args)
    resume = None
    if args.resume:
        resume, _ = read_report(Path(args.resume).expanduser().resolve(), "--resume")
        _resume_args(args, resume)
    if not args.recipes:
        raise ConfigError("name the recipes to compare: verifybot compare RECIPE|DIR... "
                          "--llm A --llm B")
    if not args.llm:
        raise ConfigError("name the LLMs to compare: --llm A --llm B (an [llm.NAME], "
                          "replay:PATH or replay:DIR/)")
    recipes = find_recipes(args.recipes)
    await approve_recipes(cfg, recipes, args.trust, "verifybot compare --trust", args.llm)
    llms = check_compare(cfg, recipes, args.llm)
    out = out_folder(cfg, args.out)
    stops = Stops()
    install_stop_signals(stops)
    m = await run_matrix(cfg, recipes, llms, repeat=args.repeat, parallel=args.parallel,
                         out=out, stops=stops, resume=resume)
    cid = record(cfg, m, out)
    print(compare_report.markdown(m), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(m.json_text(), end="")
    say(f"report: {out / 'index.html'}" + (f" (compare {cid} in history)" if cid else ""))
    if stops.status is not None:
        return EXIT_HANGUP if SIGNALS["hangup"] else EXIT_INTERRUPTED
    return EXIT_SUCCESS


def _resume_args(args: argparse.Namespace, resume: Matrix) -> None:
    """``--resume DIR`` takes the recipes, LLMs and repeat of the compare it finishes;
    given again on the command line, they must be the same."""
    plan = resume.plan
    if not plan.get("recipes") or not plan.get("llms"):
        raise ConfigError(f"--resume {args.resume}: its compare.json does not say which "
                          "recipes and LLMs it ran (written by an older VerifyBot); run "
                          "the compare again")
    if args.llm and list(args.llm) != list(plan["llms"]):
        raise ConfigError(f"--resume {args.resume}: it compared {', '.join(plan['llms'])}; "
                          "leave --llm out to finish it")
    args.recipes = args.recipes or list(plan["recipes"])
    args.llm = list(plan["llms"])
    args.repeat = resume.repeat
    args.out = args.resume


def list_comparisons(cfg: Config, *, json_out: bool) -> int:
    """``verifybot history --compare``: each comparison, newest first, with its cells."""
    from verifybot_tui.core.base.ansi import visible
    from verifybot_tui.core.store.history import History

    if not (cfg.workspace / "history.db").exists():
        print("[]" if json_out else f"no history yet in {cfg.workspace}")
        return EXIT_SUCCESS
    history = History(cfg.workspace)
    try:
        rows = history.comparisons()
    finally:
        history.close()
    if json_out:
        print(json.dumps(rows, indent=2))
        return EXIT_SUCCESS
    if not rows:
        print(f"no comparisons yet in {cfg.workspace}")
    for row in rows:
        note = ", interrupted" if row["interrupted"] else ""
        print(visible(f"compare {row['id']}  {row['started']}  {len(row['recipes'])} recipe(s) "
                      f"x {', '.join(row['llms'])}: {row['verified']} of {row['cells']} "
                      f"verified{note}  {row['out_dir']}"))
        for c in row["cell_rows"]:
            print(visible(f"    {c['recipe']} x {c['llm']} #{c['run']}: {c['status']}"
                          f"  session {c['session']} in {c['workspace']}"))
    return EXIT_SUCCESS


def _report(folder: Path) -> int:
    m, _ = read_report(folder)
    write_report(m, folder)
    say(f"rendered {folder / 'compare.md'} and {folder / 'index.html'}")
    return EXIT_SUCCESS


__all__ = ["EXIT_FAILED", "add_args", "cmd_compare", "run_matrix", "write_report"]
