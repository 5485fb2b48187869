"""Loops run headless, many at a time: the front end a recipe run, a compare cell or a
race contender answers with, and one recipe run to its end.

Both front ends use it: ``verifybot recipe run`` / ``compare`` / ``run --race`` in
cli/, and the app's compare table and race view in tui/. Nobody is at a terminal to
approve, so every version is accepted (as ``run --yes``), but no package is installed
without the user's own consent to installing (``[run] install``, ``--install``), and an
unparsable judgement counts as a failure, never as a success.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.base.errors import EXIT_FAILED, ConfigError
from verifybot_tui.core.base.toml_file import TomlFileError, read_text_file
from verifybot_tui.core.loop import events
from verifybot_tui.core.settings.config import Config, sandbox_off_line
from verifybot_tui.core.verify.recipe import Recipe
from verifybot_tui.core.verify.reports import RecipeResult


def say(text: str) -> None:
    """One line on stderr; names, judge lines and server texts are foreign: made safe."""
    print(f"[verifybot] {one_line(text)}", file=sys.stderr, flush=True)


class Headless:
    """The recipe runner's front end: says little, decides what a headless run may."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.judgements: list[str] = []

    async def on_session_started(self, ev: events.SessionStarted) -> None:
        say(f"{self.name}: session {ev.session_id} on {ev.target}, llm {ev.llm}")

    async def on_notice(self, ev: events.Notice) -> None:
        if ev.level != "info":
            say(f"{self.name}: {ev.text}")

    async def on_prompt_sent(self, ev: events.PromptSent) -> None: ...
    async def on_thinking_text(self, ev: events.ThinkingText) -> None: ...
    async def on_answer_text(self, ev: events.AnswerText) -> None: ...
    async def on_answer_done(self, ev: events.AnswerDone) -> None: ...
    async def on_code_ready(self, ev: events.CodeReady) -> None: ...

    async def on_approval_needed(self, ev: events.ApprovalNeeded) -> None:
        ev.decision.set_result(events.Decision("accept"))

    async def on_permission_needed(self, ev: events.PermissionNeeded) -> None:
        # Only an install asks here: nobody is there to consent, and consenting to
        # installs is the user's own act (--install, or [run] install in their config).
        say(f"{self.name}: missing {', '.join(ev.packages)}: not installed (a headless run "
            "installs only with --install, or [run] install = true in your own config)")
        ev.answer.set_result(False)

    async def on_feedback_ready(self, ev: events.FeedbackReady) -> None:
        ev.decision.set_result(events.FeedbackDecision(True, ev.prompt))

    async def on_run_started(self, ev: events.RunStarted) -> None: ...
    async def on_output(self, ev: events.Output) -> None: ...
    async def on_run_finished(self, ev: events.RunFinished) -> None: ...

    async def on_verdict_reached(self, ev: events.VerdictReached) -> None:
        say(f"{self.name}: attempt {ev.attempt}: {ev.verdict.status}: {ev.verdict.reason}")

    async def on_judged(self, ev: events.Judged) -> None:
        self.judgements.append(f"judgement {ev.attempt}: {ev.judgement.line}")
        say(f"{self.name}: judge: {ev.judgement.line}")

    async def on_judgement_needed(self, ev: events.JudgementNeeded) -> None:
        j = ev.judgement
        readable = j is not None and j.verdict != "UNPARSABLE"
        ev.decision.set_result(events.JudgeDecision("follow" if readable else "fail"))

    async def on_finished(self, ev: events.Finished) -> None:
        say(f"{self.name}: {ev.status}" + (f": {ev.message}" if ev.message else ""))


def check_names(cfg: Config, r: Recipe) -> None:
    """Everything a recipe names is found before any recipe runs (exit 2 with the file,
    the key and what to do): its target, its LLM and its judge, replay files readable."""
    if r.target and r.target not in cfg.targets:
        raise ConfigError(f"{r.path}: key 'target' names {r.target!r}, but there is no "
                          f"[targets.{r.target}]; configured: {', '.join(sorted(cfg.targets))}")
    _check_llm(cfg, r, "llm", r.resolve(r.llm), ())
    _check_llm(cfg, r, "judge", r.resolve(r.judge), ("", "off", "same-chat"))


def _check_llm(cfg: Config, r: Recipe, key: str, spec: str | None,
               words: tuple[str, ...]) -> None:
    if spec is None or spec in words:
        return
    if spec.startswith("replay:"):
        path = Path(spec.removeprefix("replay:"))
        try:
            read_text_file(path, int(cfg.run.max_answer_mb * 1024 * 1024) * 50)
        except TomlFileError as e:
            raise ConfigError(f"{r.path}: key '{key}': the transcript {path}: {e}") from None
        return
    if spec not in cfg.llm:
        also = ", ".join([*words[1:], "replay:PATH"])
        raise ConfigError(f"{r.path}: key '{key}' names {spec!r}, but there is no "
                          f"[llm.{spec}]; configured: {', '.join(sorted(cfg.llm))}, or {also}")


class Stops:
    """The recipe runs' stop: every live loop stopped, no recipe started after it."""

    def __init__(self) -> None:
        self.loops: list[Any] = []
        self.status: Any = None

    def __call__(self, status: Any) -> None:
        self.status = status
        for loop in self.loops:
            loop.stop(status)


async def run_one(cfg: Config, r: Recipe, stops: Stops | None = None, *,
                   handler: Headless | None = None,
                   wrap: Callable[[Any], Any] | None = None) -> RecipeResult:
    """One recipe to its end. ``compare`` passes its own ``handler`` (a Headless that
    also takes notes) and ``wrap`` (a watch around the LLM: the model, the first answer)."""
    from verifybot_tui.core.base.outcome import Outcome
    from verifybot_tui.core.loop.verify_loop import VerifyLoop, drain
    from verifybot_tui.core.store.history import History
    from verifybot_tui.core.verify.recipe import with_board
    from verifybot_tui.llm import make_llm
    from verifybot_tui.llm.verification_setup import build_verification
    from verifybot_tui.targets import make_target

    started = time.monotonic()
    began = time.time()
    handler = handler or Headless(r.name)
    llm_spec = r.resolve(r.llm) or cfg.run.default_llm
    target_name = r.target or cfg.run.default_target
    finished = None
    async with AsyncExitStack() as stack:
        try:
            cfg, target_name = with_board(cfg, r)
            if off := sandbox_off_line(cfg, target_name):
                await handler.on_notice(events.Notice(off, "warning"))
            v = build_verification(cfg, llm_spec=llm_spec, judge=r.resolve(r.judge),
                                   workspace=cfg.workspace, sanity=r.sanity)
            v.criteria = list(r.criteria)
            v.compiler, v.flags = r.compiler, list(r.flags)
            llm = make_llm(cfg, llm_spec, cfg.workspace)
            if wrap is not None:
                llm = wrap(llm)
            stack.push_async_callback(llm.close)
            if v.judge_llm is not None:
                stack.push_async_callback(v.judge_llm.close)
            target = make_target(cfg, target_name, cfg.workspace)
            stack.push_async_callback(target.close)
            history = History(cfg.workspace)
            stack.callback(history.close)
            loop = VerifyLoop(config=cfg, llm=llm, target=target, history=history,
                              max_retries=r.max_retries, timeout=r.timeout, auto_accept=True,
                              workspace=cfg.workspace, verification=v)
            if stops is not None:
                stops.loops.append(loop)
            finished = await drain(loop.events(r.task), handler)
        except Exception as e:  # one broken recipe must not stop the others' report
            outcome = Outcome.of_error(e)
            return RecipeResult(r.name, str(r.path), outcome.status, outcome.exit_code,
                                time.monotonic() - started, outcome.message,
                                target=target_name, started=began, finished=time.time())
    if finished is None:
        return RecipeResult(r.name, str(r.path), "ERROR", EXIT_FAILED,
                            time.monotonic() - started, "the loop ended without a status",
                            target=target_name, started=began, finished=time.time())
    rec = finished.record
    return RecipeResult(r.name, str(r.path), str(finished.status), finished.exit_code,
                        time.monotonic() - started, finished.message,
                        attempts=len(rec.get("attempts", [])),
                        transcript=rec.get("transcript", ""), session=rec.get("session"),
                        judgements=handler.judgements, target=target_name, started=began,
                        finished=time.time())


def files_to_trust(cfg: Config, recipes: list[Recipe],
                   llms: list[str] | None = None) -> list[Any]:
    """The recipes and their boards' files that set commands and nobody approved yet
    (``core.settings.trust``): the app refuses to start a compare until they are."""
    from verifybot_tui.core.settings import trust
    from verifybot_tui.core.verify.recipe import with_board
    from verifybot_tui.targets.mcu.boards import target_board_files

    uses: list[str | None] = [*llms] if llms else [None]
    files = [r.to_trust_in(cfg, llm) for r in recipes for llm in uses]
    for r in recipes:
        files += target_board_files(*with_board(cfg, r))
    return list(trust.unapproved(files))
