"""The compare matrix: each LLM on each recipe, and what the cells add up to.

``verifybot compare`` runs every recipe with every LLM (``--repeat`` times); each run
is a *cell*. This module holds a cell's facts, the kinds of failure an attempt shows,
and the summary DESIGN.md defines for ``compare.json``: ``pass_at[k]``, the share of
cells verified within k answers (answer 1 = before any feedback), where a cell that
never verified counts as not verified for every k, and, with ``--repeat``,
``pass_at_samples`` (``pass_stats``). Attempts count the LLM's answers, not the programs
run: an answer that repeats an earlier program is an attempt that failed without a run.
A cell that failed for the infrastructure (an HTTP 429 or 5xx, a chat site's limit page,
a target or board place out of reach) says nothing of the model: it is left out of every
share and counted apart. Pure data: the runner (batch) fills cells, the report
(``compare_report``) renders them; tests check the numbers by hand.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from verifybot_tui.core.verify.compare.pass_stats import pass_at_samples

FAILURE_KINDS = ("compile", "fault", "timeout", "output", "judge", "no_code")
INFRASTRUCTURE = "infrastructure"
SCHEMA_ID = "https://verifybot.invalid/schemas/compare.schema.json"


@dataclass
class Cell:
    """One run of one recipe with one LLM."""

    recipe: str
    llm: str
    run: int
    status: str
    attempts: int = 0  # the LLM's answers
    verified_at: int | None = None  # the answer that verified, None: never
    seconds: float = 0.0
    first_answer_seconds: float | None = None  # None: no answer came
    model: str = ""
    failures: list[str] = field(default_factory=list)  # FAILURE_KINDS, first seen first
    infrastructure: str | None = None  # what failed that was not the model's doing
    tokens: dict[str, int] | None = None  # {"in", "out"} from an API's usage; None: unknown
    cost: float | None = None  # from the API, or the user's [prices]; None: unknown
    repeated: int = 0  # answers whose program repeated an earlier one (not run again)
    startup_seconds: float | None = None  # from the cell's start to the first prompt sent
    build_seconds: float | None = None  # the builds of its runs, summed (None: none built)
    session: int | None = None  # in the cell's own workspace history
    max_attempts: int = 1  # the recipe's max_retries + 1
    workspace: str = ""  # the cell's folder, relative to the compare folder
    transcript: str = ""
    message: str = ""

    @property
    def verified(self) -> bool:
        return self.verified_at is not None

    @property
    def counts(self) -> bool:
        """In the model's numbers: not a cell the infrastructure failed."""
        return self.infrastructure is None


def failure_kind(verdict_status: str, *, exit_code: int | None, timed_out: bool,
                 compile_failed: bool, diagnosis: str, stderr: str) -> str | None:
    """What went wrong in one attempt's run, as one of FAILURE_KINDS (None: it passed,
    or it did not fail in a way the program is to blame for: stopped, target gone).

    compile: the build failed; timeout: it ran out of time; fault: it crashed (a signal,
    an exception, a firmware fault); output: it ran to its end but showed the wrong thing
    (a missed criterion, a FAILED line, a non-zero exit with no crash)."""
    if verdict_status in ("success", "success_timeout", "cancelled", "target_error"):
        return None
    if compile_failed or verdict_status == "compile_error":
        return "compile"
    if timed_out or verdict_status.startswith("timeout"):
        return "timeout"
    if verdict_status == "criteria_unmet":
        return "output"
    crashed = (exit_code is None or exit_code < 0 or exit_code >= 128
               or "fault" in diagnosis.lower() or "Traceback (most recent call last)" in stderr)
    return "fault" if crashed else "output"


def pass_at(cells: list[Cell], k_max: int) -> dict[str, float]:
    """``{"1": share, ..., str(k_max): share}`` over the cells that count (none: {})."""
    cells = [c for c in cells if c.counts]
    if not cells:
        return {}
    return {str(k): round(sum(1 for c in cells if c.verified_at is not None
                              and c.verified_at <= k) / len(cells), 4)
            for k in range(1, k_max + 1)}


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def samples(cells: list[Cell], recipes: list[str]) -> list[tuple[int, int]]:
    """``(n, c)`` per recipe: its runs that count, and how many of them verified."""
    out = []
    for r in recipes:
        runs = [c for c in cells if c.recipe == r and c.counts]
        if runs:
            out.append((len(runs), sum(1 for c in runs if c.verified)))
    return out


def _sum_tokens(cells: list[Cell]) -> dict[str, int] | None:
    known = [c.tokens for c in cells if c.tokens]
    if not known:
        return None
    return {"in": sum(t.get("in", 0) for t in known), "out": sum(t.get("out", 0) for t in known)}


def _sum_cost(cells: list[Cell]) -> float | None:
    known = [c.cost for c in cells if c.cost is not None]
    return round(sum(known), 6) if known else None


def _group(cells: list[Cell], llm: str, k_max: int, recipe: str | None = None
           ) -> dict[str, Any]:
    everyone = [c for c in cells if c.llm == llm and (recipe is None or c.recipe == recipe)]
    mine = [c for c in everyone if c.counts]
    verified = [c for c in mine if c.verified_at is not None]
    firsts = [c.first_answer_seconds for c in mine if c.first_answer_seconds is not None]
    kinds: dict[str, int] = {k: 0 for k in FAILURE_KINDS}
    for c in mine:
        for kind in c.failures:
            if kind in kinds:
                kinds[kind] += 1
    row: dict[str, Any] = {"llm": llm}
    if recipe is not None:
        row["recipe"] = recipe
    row.update({
        "cells": len(mine), "verified": len(verified), "pass_at": pass_at(mine, k_max),
        "median_seconds": _median([c.seconds for c in mine]),
        "median_first_answer_seconds": _median(firsts),
        "mean_attempts_to_verified": (round(statistics.mean(c.verified_at or 0
                                                            for c in verified), 3)
                                      if verified else None),
        "failures": kinds,
        "models": sorted({c.model for c in everyone if c.model}),
        "infrastructure_cells": len(everyone) - len(mine),
        "tokens": _sum_tokens(everyone), "cost": _sum_cost(everyone),
        "repeated_answers": sum(c.repeated for c in everyone),
    })
    recipes = sorted({c.recipe for c in mine})
    row["pass_at_samples"] = pass_at_samples(samples(mine, recipes), k_max)
    return row


@dataclass
class Matrix:
    """Everything compare.json holds."""

    started: str
    recipes: list[str]
    llms: list[str]
    repeat: int = 1
    cells: list[Cell] = field(default_factory=list)
    interrupted: bool = False
    not_run: int = 0  # cells stopped or never started (Ctrl+C): not in the summary
    version: str = ""  # VerifyBot's, that ran the cells
    dates: dict[str, str] = field(default_factory=dict)  # recipe -> when the task was written
    check: dict[str, Any] | None = None  # compare --check: {"ok", "problems"}
    plan: dict[str, Any] = field(default_factory=dict)  # what --resume needs to run again

    @property
    def k_max(self) -> int:
        return max((c.max_attempts for c in self.cells), default=1)

    def summary(self) -> list[dict[str, Any]]:
        return [_group(self.cells, llm, self.k_max) for llm in self.llms]

    def by_recipe(self) -> list[dict[str, Any]]:
        return [_group(self.cells, llm, self.k_max, recipe)
                for llm in self.llms for recipe in self.recipes]

    def to_json(self) -> dict[str, Any]:
        rank = {r: i for i, r in enumerate(self.recipes)}
        lrank = {name: i for i, name in enumerate(self.llms)}
        cells = sorted(self.cells, key=lambda c: (rank.get(c.recipe, 0), lrank.get(c.llm, 0),
                                                  c.run))
        return {"$schema": SCHEMA_ID, "started": self.started, "recipes": self.recipes,
                "llms": self.llms, "repeat": self.repeat, "k_max": self.k_max,
                "interrupted": self.interrupted, "not_run": self.not_run,
                "version": self.version, "dates": self.dates, "check": self.check,
                "plan": self.plan,
                "cells": [asdict(c) for c in cells], "summary": self.summary(),
                "by_recipe": self.by_recipe()}

    def json_text(self) -> str:
        return json.dumps(self.to_json(), indent=2) + "\n"


def from_json(data: dict[str, Any]) -> Matrix:
    """A matrix read back from compare.json (``compare --report``), checked against its
    schema first: the folder may come from someone else, and each field goes into
    compare.md as one line (ValueError, TypeError or KeyError says what is wrong)."""
    known = set(Cell.__dataclass_fields__)
    cells = [Cell(**{k: _field(f"cells[{i}].{k}", v) for k, v in c.items() if k in known})
             for i, c in enumerate(_of(data, "cells", list))]
    for i, c in enumerate(cells):
        for name in ("recipe", "llm", "status"):
            _of(asdict(c), name, str, f"cells[{i}].")
    return Matrix(started=_field("started", _of(data, "started", str)),
                  recipes=[_field("recipes", r) for r in _of(data, "recipes", list)],
                  llms=[_field("llms", name) for name in _of(data, "llms", list)],
                  repeat=int(data.get("repeat", 1)), cells=cells,
                  interrupted=bool(data.get("interrupted", False)),
                  not_run=int(data.get("not_run", 0)),
                  version=_field("version", str(data.get("version", ""))),
                  dates=_field("dates", dict(data.get("dates") or {})),
                  check=_field("check", data.get("check")),
                  plan=_field("plan", dict(data.get("plan") or {})))


def _of(data: Any, key: str, kind: type, where: str = "") -> Any:
    if not isinstance(data, dict) or key not in data:
        raise KeyError(f"{where}{key} is missing")
    if not isinstance(data[key], kind):
        raise TypeError(f"{where}{key} is not a {kind.__name__}")
    return data[key]


def _field(name: str, value: Any) -> Any:
    """A value of the report as compare.md shows it: a string of one line (no line break
    of any kind, no control character), a number, a boolean, null, or a list or table
    of those."""
    if isinstance(value, list):
        return [_field(name, v) for v in value]
    if isinstance(value, dict):
        return {_field(name, k): _field(f"{name}.{k}", v) for k, v in value.items()}
    if isinstance(value, str):
        if any(ch.isspace() and ch != " " or ord(ch) < 32 or ch in "\x7f\u2028\u2029"
               for ch in value):
            raise ValueError(f"{name} is not one line of text: {value[:60]!r}")
        return value
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"{name} is not text or a number")
