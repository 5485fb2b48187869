"""A compare's run: recipes found and checked, each recipe with each LLM (the cells),
and the report (compare.json, compare.md, index.html) written again after every cell,
so a stop (Ctrl+C in the CLI, Esc or a quit in the app) leaves the finished cells on
disk; then the comparison in history. ``verifybot compare`` and the app's "Compare
LLMs…" both run it.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from verifybot_tui import __version__
from verifybot_tui.batch.cells import Plan, Progress, run_cells, safe_name, say
from verifybot_tui.batch.headless import Stops, check_names
from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.fresh_file import write_fresh
from verifybot_tui.core.settings.config import Config, check_llm_spec
from verifybot_tui.core.verify.compare import report as compare_report
from verifybot_tui.core.verify.compare.matrix import Cell, Matrix, from_json
from verifybot_tui.core.verify.recipe import Recipe, load_recipe


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
    """What a recipe's llm becomes for this --llm: replay paths made absolute; a replay
    folder gives the recipe's own answers in it (``DIR/<name>.md``, or a benchmark's
    ``DIR/<name>/solution.md``); a ``*`` in the path stands for the recipe's name
    (``replay:benchmarks/embedded/*/wrong.md``)."""
    if not llm.startswith("replay:"):
        check_llm_spec(cfg, llm)
        return llm
    given = llm.removeprefix("replay:")
    names = [recipe.name, Path(recipe.path).parent.name]
    if "*" in given:
        tries = [Path(given.replace("*", n)) for n in names]
    elif Path(given).expanduser().is_dir():
        tries = [Path(given) / f"{n}.md" for n in names] + [Path(given) / n / "solution.md"
                                                             for n in names]
    else:
        tries = [Path(given)]
    path = next((p for p in (t.expanduser().resolve() for t in tries) if p.is_file()), None)
    if path is None:
        if len(tries) == 1 and "*" not in given:
            path = tries[0].expanduser().resolve()  # check_llm_spec says what is wrong
        else:
            raise ConfigError(f"--llm {llm}: no answers for the recipe {recipe.name!r} "
                              f"({recipe.path}): looked for "
                              + ", ".join(str(t) for t in dict.fromkeys(tries)))
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
        try:
            write_fresh(out / name, text)
        except OSError as e:
            raise ConfigError(f"compare report: cannot write {out / name}: {e}") from None


async def run_matrix(cfg: Config, recipes: list[Recipe], llms: list[tuple[str, list[str]]],
                     *, repeat: int, parallel: int, out: Path, stops: Stops,
                     label: str = "compare", progress: Progress | None = None,
                     resume: Matrix | None = None) -> Matrix:
    """Every (recipe, llm, run) cell; ``llms`` pairs each label with one spec per recipe.
    With ``resume`` (a report read back), its cells that count are kept and only the
    missing ones and those the infrastructure failed run again, in folders of their own."""
    started = dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
    m = Matrix(started=resume.started if resume else started, recipes=[r.name for r in recipes],
               llms=[name for name, _ in llms], repeat=repeat, version=__version__,
               dates={r.name: r.date for r in recipes if r.date},
               plan={"recipes": [str(Path(r.path).resolve()) for r in recipes],
                     "llms": [name for name, _ in llms], "parallel": parallel})
    kept = {(c.recipe, c.llm, c.run): c for c in (resume.cells if resume else [])
            if c.counts}
    m.cells = list(kept.values())
    plans = [Plan(r, name, specs[i], run, _cell_folder(out, r.name, name, run))
             for run in range(1, repeat + 1)
             for i, r in enumerate(recipes) for name, specs in llms
             if (r.name, name, run) not in kept]
    again = f", {len(kept)} kept from before" if resume else ""
    say(f"{label}: {len(recipes)} recipe(s) x {len(llms)} LLM(s) x {repeat} = "
        f"{len(plans) + len(kept)} cell(s){again}, {parallel} at once; report in {out}")
    write_report(m, out)

    def on_cell(cell: Cell) -> None:
        m.cells.append(cell)
        write_report(m, out)

    _, not_run = await run_cells(cfg, plans, parallel, stops, out, on_cell, progress)
    m.not_run = not_run
    m.interrupted = stops.status is not None
    write_report(m, out)
    return m


def _cell_folder(out: Path, recipe: str, llm: str, run: int) -> Path:
    """The cell's workspace; a cell run again (``--resume``) gets a new one, so what the
    first try left (its transcript, its outputs) stays as evidence."""
    base = out / "cells" / safe_name(recipe) / f"{safe_name(llm)}-{run}"
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-try{n}")
    return folder


def read_report(folder: Path, what: str = "--report") -> tuple[Matrix, dict[str, Any]]:
    """The matrix of ``folder/compare.json`` and its raw data; a clear error otherwise."""
    path = folder / "compare.json"
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        return from_json(data), data
    except OSError as e:
        raise ConfigError(f"{what} {folder}: cannot read {path}: {e.strerror or e}") from None
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ConfigError(f"{what} {folder}: {path} is not a compare report: {e}") from None


def record(cfg: Config, m: Matrix, out: Path) -> int | None:
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


def check_compare(cfg: Config, recipes: list[Recipe], names: list[str]
                  ) -> list[tuple[str, list[str]]]:
    """Everything the recipes and the LLMs name is found before a cell runs (the CLI and
    the app's "Compare LLMs…" alike); returns each LLM's label with one spec per recipe."""
    if len(set(names)) != len(names):
        raise ConfigError("an --llm is given twice: use --repeat for more runs of one LLM")
    for r in recipes:
        check_names(cfg, replace_llm(r))
    return [(name, [llm_spec_for(cfg, name, r) for r in recipes]) for name in names]


def replace_llm(r: Recipe) -> Recipe:
    """The recipe as compare checks it: its own llm does not matter (--llm replaces it)."""
    from dataclasses import replace

    return replace(r, llm=None)
