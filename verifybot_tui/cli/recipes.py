"""``verifybot recipe run FILE...`` and ``verifybot recipe new [SESSION]``.

Recipes run headless (every version accepted, like ``run --yes``): nobody is at the
terminal to approve, which is what CI needs. An unparsable judgement therefore counts
as a failure, never as a success. Every recipe file is checked before the first one
runs, so a typo in the tenth file costs nothing (exit 2, naming the file and the key).
With ``--parallel N`` up to N recipes run at once, never two on the same target (a
labgrid farm's target excepted: its coordinator hands out the places).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from verifybot_tui.batch.headless import Stops, check_names, run_one, say
from verifybot_tui.cli.common import (
    EXIT_HANGUP,
    SIGNALS,
    install_stop_signals,
    output_path,
    write_output,
)
from verifybot_tui.cli.options import shared
from verifybot_tui.core.base.ansi import visible
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
    ConfigError,
)
from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.verify.recipe import Recipe, load_recipe, mark_written, recipe_toml
from verifybot_tui.core.verify.reports import RecipeResult, json_text, junit_xml, summary_table


def add_args(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="run|new", required=True,
                         help="run: run recipes; new: write one from a session")
    run = sub.add_parser("run", help="run recipes headless; exit 0 only if all are verified")
    run.add_argument("files", nargs="+", metavar="FILE", help="recipe TOML files")
    run.add_argument("--parallel", type=int, default=1, metavar="N",
                     help="run up to N recipes at once, never two on one target (default: 1)")
    run.add_argument("--junit", metavar="PATH", help="write a JUnit XML report (default: none)")
    shared(run, "--json", text="print a JSON report on stdout (default: off)")
    shared(run, "--trust", text="approve what the recipes and their board files set that runs "
                                "commands (a compiler, flags like -wrapper, a board's qemu) "
                                "without asking (default: shown and asked in a terminal, "
                                "refused without one); recipes accept every version anyway, "
                                "that is not this")
    shared(run, "--install")
    new = sub.add_parser("new", help="write a recipe from a finished session")
    new.add_argument("session", nargs="?", type=int, help="a session id (default: the last)")
    new.add_argument("--output", "-o", metavar="FILE", help="write here (default: stdout)")
    for q in (run, new):
        shared(q, "--config", text="config file, yours (default: the user config dir's; a "
                                   "./config.toml here is asked about first)")
        shared(q, "--workspace", text="the workspace (default: [run] workspace)")


async def run_recipes(cfg: Config, recipes: list[Recipe], parallel: int,
                      stops: Stops | None = None) -> list[RecipeResult]:
    gate = asyncio.Semaphore(max(1, parallel))
    per_target: dict[str, asyncio.Lock] = {}

    async def one(r: Recipe) -> RecipeResult:
        name = r.target or cfg.run.default_target
        t = cfg.targets.get(name)
        # A labgrid target is a farm: its coordinator gives each run a free matching place
        # (or a countdown while they are all held), so runs on it are not taken in turns here.
        farm = t is not None and t.kind == "mcu" and t.backend == "labgrid"
        lock = contextlib.nullcontext() if farm else per_target.setdefault(name, asyncio.Lock())
        async with gate, lock:
            if stops is not None and stops.status is not None:
                return RecipeResult(r.name, str(r.path), str(stops.status), EXIT_INTERRUPTED,
                                    0.0, "not started: interrupted",
                                    target=r.target or cfg.run.default_target)
            return await run_one(cfg, r, stops)

    return list(await asyncio.gather(*(one(r) for r in recipes)))


async def cmd_recipe(args: argparse.Namespace, cfg: Config) -> int:
    if args.action == "new":
        return _new(args, cfg)
    if args.parallel < 1:
        raise ConfigError("--parallel must be 1 or more")
    junit = output_path(args.junit, "--junit") if args.junit else None
    recipes = [load_recipe(Path(f), check_trust=False) for f in args.files]
    for r in recipes:
        check_names(cfg, r)
    await approve_recipes(cfg, recipes, args.trust)
    names = [r.name for r in recipes]
    dup = next((n for n in names if names.count(n) > 1), None)
    if dup:
        raise ConfigError(f"two recipes are named {dup!r}: names must differ in the report")
    started = time.time()
    stops = Stops()
    install_stop_signals(stops)
    results = await run_recipes(cfg, recipes, args.parallel, stops)
    table = visible(summary_table(results))
    if args.json:
        print(json_text(results))
        print(table, file=sys.stderr)
    else:
        print(table)
    if junit is not None:
        write_output(junit, junit_xml(results, started=started), "--junit")
        say(f"JUnit report written to {args.junit}")
    if stops.status is not None:
        return EXIT_HANGUP if SIGNALS["hangup"] else EXIT_INTERRUPTED
    return EXIT_SUCCESS if all(r.verified for r in results) else EXIT_FAILED


async def approve_recipes(cfg: Config, recipes: list[Recipe], trusted: bool,
                          how: str = "verifybot recipe run --trust",
                          llms: list[str] | None = None) -> None:
    """Every recipe and board file that sets commands, reads files from outside its
    folder or would run its own answers without a sandbox: approved before any recipe
    runs (recipe run and compare alike; ``llms``: a compare's, in place of the recipes')."""
    from verifybot_tui.batch.headless import files_to_trust
    from verifybot_tui.cli.approval import approve_files

    files = files_to_trust(cfg, recipes, llms)
    await approve_files(files, trusted=trusted, how=how)


def _number(value: Any, kind: type) -> Any:
    """A limit from the run record; None when missing (a record older than the key)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return kind(value)


def _replay_from(llm: str | None, recipe_dir: Path, workspace: Path) -> str | None:
    """A session's ``replay:PATH`` as the recipe must say it: relative to the recipe file.

    History keeps the path as it was given, relative to where the session ran
    (this folder, as a rule; else the workspace); ``recipe run`` reads it relative
    to the recipe's own folder.
    """
    if not llm or not llm.startswith("replay:"):
        return llm
    path = Path(llm.removeprefix("replay:")).expanduser()
    if not path.is_absolute():
        path = next((p for p in (Path.cwd() / path, workspace / path) if p.exists()),
                    Path.cwd() / path)
    return "replay:" + os.path.relpath(path.resolve(), recipe_dir.resolve())


def _new(args: argparse.Namespace, cfg: Config) -> int:
    from verifybot_tui.core.store.history import History
    from verifybot_tui.core.store.transcript import read_record

    if not (cfg.workspace / "history.db").exists():
        raise ConfigError(f"no history in {cfg.workspace}: run a session first")
    history = History(cfg.workspace)
    try:
        sessions = history.sessions()
    finally:
        history.close()
    if not sessions:
        raise ConfigError(f"no sessions in {cfg.workspace}: run a session first")
    if args.session is None:
        s = max(sessions, key=lambda row: row["id"])
    else:
        found = [row for row in sessions if row["id"] == args.session]
        if not found:
            raise ConfigError(f"no session {args.session} in {cfg.workspace}; "
                              f"known: {', '.join(str(row['id']) for row in sessions)}")
        s = found[0]
    record: dict[str, Any] = {}
    if s.get("transcript"):
        path = Path(s["transcript"])
        path = path if path.is_absolute() else cfg.workspace / path
        record = (read_record(path) if path.exists() else None) or {}
    out_dir = Path(args.output).parent if args.output else Path.cwd()
    text = recipe_toml(name=s["slug"], prompt=s["prompt"], target=s.get("target"),
                       llm=_replay_from(s.get("llm"), out_dir, cfg.workspace),
                       criteria=list(record.get("criteria", [])),
                       judge=record.get("judge") or None,
                       max_retries=_number(record.get("max_retries"), int),
                       timeout=_number(record.get("timeout"), float))
    mark_written(text, Path(args.output or "<stdout>"))  # from the user's own session
    if args.output:
        write_output(output_path(args.output, "--output"), text, "--output")
        say(f"recipe written to {args.output}")
    else:
        print(text, end="")
    return EXIT_SUCCESS
