"""A compare's run: recipes found and checked, each recipe with each LLM (the cells),
and the report (compare.json, compare.md, index.html) written again after every cell,
so a stop (Ctrl+C in the CLI, Esc or a quit in the app) leaves the finished cells on
disk; then the comparison in history. ``verifybot compare`` and the app's "Compare
LLMs…" both run it.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from verifybot_tui.batch.cells import Plan, Progress, run_cells, safe_name, say
from verifybot_tui.batch.headless import Stops, check_names
from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings.config import Config, check_llm_spec
from verifybot_tui.core.store.workspace import write_fresh
from verifybot_tui.core.verify import compare_report
from verifybot_tui.core.verify.matrix import Cell, Matrix
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
        try:
            write_fresh(out / name, text)
        except OSError as e:
            raise ConfigError(f"compare report: cannot write {out / name}: {e}") from None


async def run_matrix(cfg: Config, recipes: list[Recipe], llms: list[tuple[str, list[str]]],
                     *, repeat: int, parallel: int, out: Path, stops: Stops,
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
