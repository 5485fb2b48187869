"""``verifybot compare``: recipes x LLMs into a matrix; ``--report`` renders it again;
``--check`` proves a benchmark's reference solutions verify and its wrong ones fail.

The report (compare.json, compare.md, index.html) is written again after every cell,
so a Ctrl+C, or the stop watchdog's exit, still leaves the finished cells on disk.
Exit: 0 when the compare ran (a matrix is a result, not a test; ``--check``: every
solution verified and every wrong one failed, else 1), 130 when interrupted.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

from verifybot_tui.cli.common import EXIT_HANGUP, SIGNALS, install_stop_signals
from verifybot_tui.cli.compare.cells import Plan, Progress, run_cells, safe_name, say
from verifybot_tui.cli.recipes import _check_names, _Stops, approve_recipes
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
    ConfigError,
)
from verifybot_tui.core.settings.config import Config, check_llm_spec
from verifybot_tui.core.verify import compare_report
from verifybot_tui.core.verify.matrix import Cell, Matrix, from_json
from verifybot_tui.core.verify.recipe import Recipe, load_recipe


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
    p.add_argument("--json", action="store_true",
                   help="print compare.json on stdout, the table on stderr (default: the "
                        "table on stdout)")
    p.add_argument("--report", metavar="DIR",
                   help="render compare.md and index.html again from DIR/compare.json "
                        "(default: off)")
    p.add_argument("--check", metavar="DIR",
                   help="a benchmark folder: each task's solution.md must verify, its "
                        "wrong.md must fail (default: off)")
    p.add_argument("--trust", action="store_true",
                   help="approve what the recipes and their board files set that runs "
                        "commands, without asking (default: ask; --yes never does)")


def find_recipes(paths: list[str]) -> list[Recipe]:
    """Recipe files as given; a folder gives every *.toml under it, in name order."""
    files: list[Path] = []
    for item in paths:
        p = Path(item).expanduser()
        if p.is_dir():
            found = sorted(p.rglob("*.toml"))
            if not found:
                raise ConfigError(f"{item}: a folder without recipes (*.toml)")
            files += found
        elif p.is_file():
            files.append(p)
        else:
            raise ConfigError(f"{item}: no such recipe file or folder")
    recipes = [load_recipe(f, check_trust=False) for f in files]  # approved in cmd_compare
    names = [r.name for r in recipes]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise ConfigError(f"two recipes are named {dup!r}: names must differ in the matrix")
    return recipes


def llm_spec_for(cfg: Config, llm: str, recipe: Recipe) -> str:
    """What a recipe's llm becomes for this --llm (replay paths made absolute, a replay
    folder turned into the recipe's own file in it)."""
    if not llm.startswith("replay:"):
        check_llm_spec(cfg, llm)
        return llm
    path = Path(llm.removeprefix("replay:")).expanduser().resolve()
    if path.is_dir():
        path = path / f"{recipe.name}.md"
        if not path.is_file():
            raise ConfigError(f"--llm {llm}: the folder has no {recipe.name}.md for the "
                              f"recipe {recipe.name!r} ({recipe.path})")
    spec = f"replay:{path}"
    check_llm_spec(cfg, spec)
    return spec


def out_folder(cfg: Config, given: str | None) -> Path:
    if given:
        out = Path(given).expanduser().resolve()
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {given}: is a file; give a folder")
    else:
        stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = cfg.workspace / "compare" / stamp
        n = 1
        while out.exists():
            n += 1
            out = cfg.workspace / "compare" / f"{stamp}-{n}"
    out.mkdir(parents=True, exist_ok=True)
    return out


def write_report(m: Matrix, out: Path) -> None:
    """compare.json, compare.md and index.html, each written whole (then renamed)."""
    for name, text in (("compare.json", m.json_text()),
                       ("compare.md", compare_report.markdown(m)),
                       ("index.html", compare_report.index_html(m))):
        tmp = out / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out / name)


async def run_matrix(cfg: Config, recipes: list[Recipe], llms: list[tuple[str, list[str]]],
                     *, repeat: int, parallel: int, out: Path, stops: _Stops,
                     label: str = "compare", progress: Progress | None = None) -> Matrix:
    """Every (recipe, llm, run) cell; ``llms`` pairs each label with one spec per recipe."""
    started = dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
    m = Matrix(started=started, recipes=[r.name for r in recipes],
               llms=[name for name, _ in llms], repeat=repeat)
    plans = [Plan(r, name, specs[i], run,
                  out / "cells" / safe_name(r.name) / f"{safe_name(name)}-{run}")
             for run in range(1, repeat + 1)
             for i, r in enumerate(recipes) for name, specs in llms]
    say(f"{label}: {len(recipes)} recipe(s) x {len(llms)} LLM(s) x {repeat} = {len(plans)} "
        f"cell(s), {parallel} at once; report in {out}")
    write_report(m, out)

    def on_cell(cell: Cell) -> None:
        m.cells.append(cell)
        write_report(m, out)

    _, not_run = await run_cells(cfg, plans, parallel, stops, out, on_cell, progress)
    m.not_run = not_run
    m.interrupted = stops.status is not None
    write_report(m, out)
    return m


def _record(cfg: Config, m: Matrix, out: Path) -> int | None:
    """The comparison in the workspace's history: a compare id over its cells' sessions."""
    from verifybot_tui.core.store.history import History

    try:
        history = History(cfg.workspace)
    except Exception as e:  # noqa: BLE001 - the report is on disk whatever happens here
        say(f"history: not recorded: {e}")
        return None
    try:
        return history.add_comparison(m.to_json(), str(out))
    finally:
        history.close()


async def cmd_compare(args: argparse.Namespace, cfg: Config) -> int:
    if args.report:
        return _report(Path(args.report))
    if args.repeat < 1 or args.parallel < 1:
        raise ConfigError("--repeat and --parallel must be 1 or more")
    if args.check:
        from verifybot_tui.cli.compare.check import check_benchmark

        return await check_benchmark(cfg, Path(args.check), args)
    if not args.recipes:
        raise ConfigError("name the recipes to compare: verifybot compare RECIPE|DIR... "
                          "--llm A --llm B")
    if not args.llm:
        raise ConfigError("name the LLMs to compare: --llm A --llm B (an [llm.NAME], "
                          "replay:PATH or replay:DIR/)")
    recipes = find_recipes(args.recipes)
    await approve_recipes(cfg, recipes, args.trust, "verifybot compare --trust")
    llms = check_compare(cfg, recipes, args.llm)
    out = out_folder(cfg, args.out)
    stops = _Stops()
    install_stop_signals(stops)
    m = await run_matrix(cfg, recipes, llms, repeat=args.repeat, parallel=args.parallel,
                         out=out, stops=stops)
    cid = _record(cfg, m, out)
    print(compare_report.markdown(m), file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print(m.json_text(), end="")
    say(f"report: {out / 'index.html'}" + (f" (compare {cid} in history)" if cid else ""))
    if stops.status is not None:
        return EXIT_HANGUP if SIGNALS["hangup"] else EXIT_INTERRUPTED
    return EXIT_SUCCESS


def check_compare(cfg: Config, recipes: list[Recipe], names: list[str]
                  ) -> list[tuple[str, list[str]]]:
    """Everything the recipes and the LLMs name is found before a cell runs (the CLI and
    the app's "Compare LLMs…" alike); returns each LLM's label with one spec per recipe."""
    if len(set(names)) != len(names):
        raise ConfigError("an --llm is given twice: use --repeat for more runs of one LLM")
    for r in recipes:
        _check_names(cfg, replace_llm(r))
    return [(name, [llm_spec_for(cfg, name, r) for r in recipes]) for name in names]


def record(cfg: Config, m: Matrix, out: Path) -> int | None:
    """The comparison in history (the app records its compares as the CLI does)."""
    return _record(cfg, m, out)


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


def replace_llm(r: Recipe) -> Recipe:
    """The recipe as compare checks it: its own llm does not matter (--llm replaces it)."""
    from dataclasses import replace

    return replace(r, llm=None)


def _report(folder: Path) -> int:
    path = folder / "compare.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        m = from_json(data)
    except OSError as e:
        raise ConfigError(f"--report {folder}: cannot read {path}: {e.strerror or e}") from None
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"--report {folder}: {path} is not a compare report: {e}") from None
    write_report(m, folder)
    say(f"rendered {folder / 'compare.md'} and {folder / 'index.html'}")
    return EXIT_SUCCESS


__all__ = ["EXIT_FAILED", "add_args", "cmd_compare", "run_matrix", "write_report"]
