"""Running the cells of a compare: each recipe with each LLM, each run its own chat
and its own workspace folder.

A cell is ``recipe run``'s ``run_one`` (the same loop, the same headless answers)
with three things added: a handler that notes what the matrix needs (the LLM's
answers, failure kinds, judge FAILs, repeated programs), a watch around the LLM (the
model that answered, the time from the first prompt's send to its answer, the start-up
before it, the tokens), and a workspace folder of its own under the compare folder.
A cell that ends on an error of the LLM's service or the target is the
infrastructure's failure, named in the cell, not the model's. Cells run up to
``--parallel`` at once, but one browser profile serves one cell at a time: a chat
site's tab is not two chats.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from verifybot_tui.batch.headless import Headless, Stops, run_one
from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.base.outcome import Status
from verifybot_tui.core.loop import events
from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.verify.compare.matrix import Cell, failure_kind
from verifybot_tui.core.verify.recipe import Recipe


def say(text: str) -> None:
    print(f"[verifybot] {one_line(text)}", file=sys.stderr, flush=True)


Progress = Callable[["Plan", str, "Cell | None"], None]
"""What a front end hears of a cell as it goes: ``running`` (started), ``asking N`` (waiting
on the LLM for its answer N), ``running N`` (answer N's program runs), then ``done``
(with the cell), ``stopped`` or ``not run``. The CLI says a line per finished cell; the
app's compare table redraws the cell."""


class _Notes(Headless):
    """recipe run's headless front end, quieter, that also keeps the matrix's facts."""

    def __init__(self, name: str, progress: Callable[[str], None] | None = None) -> None:
        super().__init__(name)
        self.failures: list[str] = []
        self._result: Any = None
        self._progress = progress
        self.answers = 0  # the LLM's answers (a judge's are not the model under test's)
        self.repeated = 0  # answers whose program repeated one already run
        self._asked = ""  # the kind of the last prompt sent
        self.build_seconds = 0.0  # the builds' part of the runs (compiled programs, firmware)

    async def on_prompt_sent(self, ev: events.PromptSent) -> None:
        self._asked = ev.kind
        if self._progress is not None and ev.kind != "judge":
            self._progress(f"asking {self.answers + 1}")

    async def on_answer_done(self, ev: events.AnswerDone) -> None:
        await super().on_answer_done(ev)
        if self._asked != "judge":
            self.answers += 1

    async def on_notice(self, ev: events.Notice) -> None:
        await super().on_notice(ev)
        # the loop's own words for an answer that ran nothing (verify_loop's notices)
        if "holds no program to run" in ev.text:
            self._kind("no_code")
        elif "is identical to version" in ev.text:
            self.repeated += 1

    async def on_run_started(self, ev: events.RunStarted) -> None:
        await super().on_run_started(ev)
        if self._progress is not None:
            self._progress(f"running {self.answers}")

    def _kind(self, kind: str | None) -> None:
        if kind and kind not in self.failures:
            self.failures.append(kind)

    async def on_session_started(self, ev: events.SessionStarted) -> None: ...

    async def on_thinking_text(self, ev: events.ThinkingText) -> None: ...

    async def on_run_finished(self, ev: events.RunFinished) -> None:
        self._result = ev.result
        if ev.result.build_seconds is not None:
            self.build_seconds += ev.result.build_seconds

    async def on_verdict_reached(self, ev: events.VerdictReached) -> None:
        r = self._result
        if r is not None:
            self._kind(failure_kind(ev.verdict.status, exit_code=r.exit_code,
                                    timed_out=r.timed_out, compile_failed=r.compile_failed,
                                    diagnosis=r.diagnosis, stderr=r.stderr))
        self._result = None

    async def on_judged(self, ev: events.Judged) -> None:
        await super().on_judged(ev)
        if ev.judgement.verdict == "FAIL":
            self._kind("judge")

    async def on_finished(self, ev: events.Finished) -> None: ...


class Watched:
    """An LLM backend seen through: every call goes to it; ``ask`` also notes the model
    that answered and when the first answer came. Attribute writes (the loop's
    ``on_thinking``) reach the backend itself."""

    _OWN = ("_inner", "_t0", "first_answer", "startup", "model", "fallback_model")
    first_answer: float | None  # from the first prompt's send to its answer
    startup: float | None  # from the cell's start to the first prompt's send
    model: str

    def __init__(self, inner: Any, t0: float, fallback_model: str = "") -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_t0", t0)
        object.__setattr__(self, "first_answer", None)
        object.__setattr__(self, "startup", None)
        object.__setattr__(self, "model", "")
        object.__setattr__(self, "fallback_model", fallback_model)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self._OWN:
            object.__setattr__(self, name, value)
        else:
            setattr(self._inner, name, value)

    async def ask(self, prompt: str, on_text: Any = None) -> Any:
        sent = time.monotonic()
        if self.startup is None:
            self.startup = sent - self._t0
        answer = await self._inner.ask(prompt, on_text)
        if self.first_answer is None:
            self.first_answer = time.monotonic() - sent
        self.model = getattr(answer, "model", "") or self.model or self.fallback_model
        return answer


def safe_name(text: str) -> str:
    """A folder name from a recipe or LLM name (``replay:/a/b/`` becomes ``replay_b``)."""
    if text.startswith("replay:"):
        text = "replay_" + Path(text.removeprefix("replay:").rstrip("/")).name
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._")[:60] or "x"


@dataclass
class Plan:
    """One cell to run: the recipe with its LLM put in, where it runs, its labels."""

    recipe: Recipe
    llm: str  # the label in the matrix, as the user gave it
    spec: str  # what the recipe's llm becomes
    run: int
    folder: Path


def profile_key(cfg: Config, spec: str) -> str | None:
    """Cells that must not overlap: those on one browser profile (one browser, one tab)."""
    llm = cfg.llm.get(spec)
    if llm is None or llm.kind != "browser":
        return None
    return f"profile:{llm.profile_dir or llm.site or spec}"


def _fallback_model(cfg: Config, spec: str) -> str:
    llm = cfg.llm.get(spec)
    if llm is not None and llm.kind != "browser":
        return llm.model  # an API names the model it is sent; "" for a server's default
    return ""


async def run_cell(cfg: Config, plan: Plan, stops: Stops, out: Path,
                   progress: Progress | None = None) -> Cell:
    from verifybot_tui.core.base.errors import EXIT_FAILED

    plan.folder.mkdir(parents=True, exist_ok=True)
    cell_cfg = replace(cfg, run=replace(cfg.run, workspace=str(plan.folder)))
    recipe = replace(plan.recipe, llm=plan.spec)
    notes = _Notes(f"{plan.recipe.name} x {plan.llm} #{plan.run}",
                   (lambda text: progress(plan, text, None)) if progress else None)
    t0 = time.monotonic()
    watch: dict[str, Watched] = {}

    def wrap(llm: Any) -> Any:
        watch["llm"] = Watched(llm, t0, _fallback_model(cfg, plan.spec))
        return watch["llm"]

    try:
        result = await run_one(cell_cfg, recipe, stops, handler=notes, wrap=wrap)
    except Exception as e:  # noqa: BLE001 - one cell must not end the compare
        from verifybot_tui.core.verify.reports import RecipeResult

        result = RecipeResult(plan.recipe.name, str(plan.recipe.path), "ERROR", EXIT_FAILED,
                              time.monotonic() - t0, str(e))
    w = watch.get("llm")
    max_retries = plan.recipe.max_retries
    if max_retries is None:
        max_retries = cfg.run.max_retries
    verified = result.status == Status.VERIFIED
    transcript = result.transcript
    infra = infrastructure(str(result.status), result.message,
                           replay=plan.spec.startswith("replay:"))
    tokens, cost = spent(cfg, plan.spec, w)
    return Cell(recipe=plan.recipe.name, llm=plan.llm, run=plan.run, status=str(result.status),
                attempts=notes.answers,
                verified_at=(notes.answers or 1) if verified else None,
                seconds=round(result.duration, 3),
                first_answer_seconds=_rounded(w.first_answer if w is not None else None),
                startup_seconds=_rounded(w.startup if w is not None else None),
                build_seconds=_rounded(notes.build_seconds) if notes.build_seconds else None,
                model=w.model if w is not None else "",
                failures=list(notes.failures) + (["infrastructure"] if infra else []),
                infrastructure=infra, tokens=tokens, cost=cost, repeated=notes.repeated,
                session=result.session, max_attempts=max_retries + 1,
                workspace=str(plan.folder.relative_to(out)) if plan.folder.is_relative_to(out)
                else str(plan.folder),
                transcript=transcript, message=one_line(result.message)[:300])


def _rounded(value: float | None) -> float | None:
    return round(value, 3) if value is not None else None


def infrastructure(status: str, message: str, *, replay: bool = False) -> str | None:
    """What failed, when a cell ended on the LLM's service, the target or VerifyBot
    itself rather than on the model's answers (None: the model's own result). A replay
    has no service: its LLM error is the recording's end, the model's own result."""
    if status not in (Status.LLM_ERROR, Status.TARGET_ERROR, Status.ERROR):
        return None
    if replay and status == Status.LLM_ERROR:
        return None
    text = one_line(message)
    m = re.search(r"\((\d{3})\)|answered (\d{3})", text)
    if m:
        return f"HTTP {m.group(1) or m.group(2)}: {text[:160]}"
    where = {Status.LLM_ERROR: "LLM", Status.TARGET_ERROR: "target"}.get(Status(status),
                                                                           "VerifyBot")
    return f"{where}: {text[:160]}"


def spent(cfg: Config, spec: str, w: Watched | None) -> tuple[dict[str, int] | None,
                                                             float | None]:
    """The cell's tokens (from the API's usage) and their cost: the provider's own
    figure, else the user's ``price_in`` / ``price_out`` of the LLM (USD per million)."""
    usage = getattr(w._inner, "usage", None) if w is not None else None
    if usage is None or not (usage.input_tokens or usage.output_tokens):
        return None, None
    tokens = {"in": int(usage.input_tokens), "out": int(usage.output_tokens)}
    if usage.cost is not None:
        return tokens, round(float(usage.cost), 6)
    llm = cfg.llm.get(spec)
    if llm is None or llm.price_in < 0 or llm.price_out < 0:
        return tokens, None
    return tokens, round((tokens["in"] * llm.price_in + tokens["out"] * llm.price_out) / 1e6, 6)


async def run_cells(cfg: Config, plans: list[Plan], parallel: int, stops: Stops, out: Path,
                    on_cell: Callable[[Cell], None], progress: Progress | None = None
                    ) -> tuple[list[Cell], int]:
    """Run the plans; ``on_cell`` gets each finished cell as it ends, ``progress`` (the
    app's table) every change of a cell. Returns the finished cells and how many did not
    finish (stopped or never started)."""
    tell: Progress = progress or (lambda plan, state, cell: None)
    gate = asyncio.Semaphore(max(1, parallel))
    locks: dict[str, asyncio.Lock] = {}
    finished: list[Cell] = []
    not_run = [0]

    async def one(plan: Plan) -> None:
        key = profile_key(cfg, plan.spec)
        lock = locks.setdefault(key, asyncio.Lock()) if key else None
        async with gate:
            if lock is not None:
                await lock.acquire()
            try:
                if stops.status is not None:
                    not_run[0] += 1
                    tell(plan, "not run", None)
                    return
                tell(plan, "running", None)
                cell = await run_cell(cfg, plan, stops, out, progress)
            finally:
                if lock is not None:
                    lock.release()
        if cell.status in (Status.INTERRUPTED, Status.STOPPED) and stops.status is not None:
            not_run[0] += 1
            say(f"{plan.recipe.name} x {plan.llm} #{plan.run}: stopped, left out of the report")
            tell(plan, "stopped", None)
            return
        finished.append(cell)
        tell(plan, "done", cell)
        at = f" at answer {cell.verified_at}" if cell.verified_at else ""
        infra = (f"; infrastructure, left out of pass@k: {cell.infrastructure}"
                 if cell.infrastructure else "")
        say(f"cell {plan.recipe.name} x {plan.llm} #{plan.run}: {cell.status}{at} "
            f"({cell.attempts} answer(s), {cell.seconds:.1f} s"
            + (f", model {cell.model}" if cell.model else "") + infra + ")")
        on_cell(cell)

    await asyncio.gather(*(one(p) for p in plans))
    return finished, not_run[0]


def check_profile_free(cfg: Config, specs: list[tuple[str, list[str]]], held_by: str) -> None:
    """No LLM of ``specs`` uses the browser profile ``held_by`` (an LLM the app's chat
    has open) has: Chromium refuses a second browser on one profile, so such a cell or
    contender could only end LLM_ERROR. Said before anything runs instead."""
    from verifybot_tui.core.base.errors import ConfigError

    held = profile_key(cfg, held_by)
    if held is None:
        return
    for name, names in specs:
        if any(profile_key(cfg, s) == held for s in names):
            raise ConfigError(f"{name} needs the browser profile the app's chat has open "
                              f"({held_by}): switch the app's LLM first (F8), or run it "
                              "in a terminal (verifybot compare / run --race)")
