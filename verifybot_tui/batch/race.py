"""Best of n: one prompt to several LLMs at once, the first VERIFIED wins.

Each contender is a loop of its own (its own chat, target connection, session in
history and transcript), every version accepted (nobody can approve three runs at
once). The first to end VERIFIED wins; the others are stopped there and then (their
program's tree too) and end STOPPED, their transcripts and history rows kept. With no
criteria and no judge nothing can be VERIFIED, so a PASSED run wins. ``run --race``
prints it; the app's race view shows each contender as it goes.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from contextlib import AsyncExitStack
from typing import Any

from verifybot_tui.batch.cells import say
from verifybot_tui.batch.headless import Headless
from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.outcome import Outcome, Status
from verifybot_tui.core.loop import events
from verifybot_tui.core.settings.config import check_llm_spec, sandbox_off_line


def contenders(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if len(names) < 2:
        raise ConfigError(f"--race {text}: name two LLMs or more, e.g. --race chatgpt,claude")
    if len(set(names)) != len(names):
        raise ConfigError(f"--race {text}: an LLM is named twice")
    return names


Progress = Callable[[str, str], None]
"""What a front end hears of a contender as it goes: its name and its state (asking,
answer N, running attempt N, then its final status). The app's race view shows it."""


class Contender(Headless):
    """One contender's front end: recipe run's answers, and the race told of its end."""

    def __init__(self, name: str, race: Race, progress: Progress | None = None) -> None:
        super().__init__(name)
        self.race = race
        self.status = ""
        self.record: dict[str, Any] = {}
        self.ended = 0.0
        self.session: int | None = None
        self.attempt = 0
        self._tell: Progress = progress or (lambda name, state: None)

    async def on_session_started(self, ev: events.SessionStarted) -> None:
        await super().on_session_started(ev)
        self.session = ev.session_id

    async def on_prompt_sent(self, ev: events.PromptSent) -> None:
        self.attempt = ev.attempt
        self._tell(self.name, f"asking (attempt {ev.attempt})")

    async def on_answer_done(self, ev: events.AnswerDone) -> None:
        self._tell(self.name, f"answer {self.attempt}")

    async def on_run_started(self, ev: events.RunStarted) -> None:
        self._tell(self.name, f"running attempt {ev.attempt}")

    async def on_permission_needed(self, ev: events.PermissionNeeded) -> None:
        ev.answer.set_result(self.race.installs)

    async def on_thinking_text(self, ev: events.ThinkingText) -> None: ...

    async def on_finished(self, ev: events.Finished) -> None:
        await super().on_finished(ev)
        self.status, self.record, self.ended = str(ev.status), ev.record, time.monotonic()
        self.race.finished(self)
        self._tell(self.name, self.status)


class Race:
    def __init__(self, names: list[str], wins: tuple[str, ...], installs: bool) -> None:
        self.names = names
        self.wins = wins
        self.installs = installs
        self.loops: dict[str, Any] = {}
        self.winner: Contender | None = None
        self.won_at = 0.0
        self.stopped: Any = None

    def finished(self, c: Contender) -> None:
        if self.winner is None and self.stopped is None and c.status in self.wins:
            self.winner, self.won_at = c, time.monotonic()
            say(f"race: {c.name} wins ({c.status}); stopping the others")
            for name, loop in self.loops.items():
                if name != c.name:
                    loop.stop(Status.STOPPED)

    def stop(self, status: Any) -> None:
        self.stopped = status
        for loop in self.loops.values():
            loop.stop(status)


async def _contend(cfg: Any, args: argparse.Namespace, name: str, race: Race,
                   handler: Contender) -> None:
    from verifybot_tui.core.loop.verify_loop import VerifyLoop, drain
    from verifybot_tui.core.store.history import History
    from verifybot_tui.llm import make_llm
    from verifybot_tui.llm.verification_setup import build_verification
    from verifybot_tui.targets import choose_target, make_target

    async with AsyncExitStack() as stack:
        try:
            target_name, _ = choose_target(cfg, args.prompt, args.target)
            if off := sandbox_off_line(cfg, target_name):
                await handler.on_notice(events.Notice(off, "warning"))
            v = build_verification(cfg, llm_spec=name, judge=args.judge, expect=args.expect,
                                   criteria_file=args.criteria, workspace=cfg.workspace)
            if v.judge_llm is not None:
                stack.push_async_callback(v.judge_llm.close)
            llm = make_llm(cfg, name, cfg.workspace)
            stack.push_async_callback(llm.close)
            target = make_target(cfg, target_name, cfg.workspace,
                                 trust_new_host=args.trust_new_host)
            stack.push_async_callback(target.close)
            history = History(cfg.workspace)
            stack.callback(history.close)
            loop = VerifyLoop(config=cfg, llm=llm, target=target, history=history,
                              max_retries=args.max_retries, timeout=args.timeout,
                              auto_accept=True,
                              workspace=cfg.workspace, verification=v)
            race.loops[name] = loop
            if race.winner is not None or race.stopped is not None:
                loop.stop(race.stopped or Status.STOPPED)
            await drain(loop.events(args.prompt), handler)
        except Exception as e:  # one contender's error must not end the race
            outcome = Outcome.of_error(e)
            handler.status, handler.ended = str(outcome.status), time.monotonic()
            say(f"{name}: {outcome.status}: {outcome.message}")
            handler._tell(name, handler.status)


def make_race(cfg: Any, args: argparse.Namespace, progress: Progress | None = None
              ) -> tuple[Race, dict[str, Contender]]:
    """The race and its contenders, checked (the CLI and the app's "Race LLMs…" alike):
    with no criteria and no judge nothing can be VERIFIED, so a PASSED run wins."""
    names = contenders(args.race)
    for name in names:
        check_llm_spec(cfg, name)
    if args.max_retries is not None and args.max_retries < 0:
        raise ConfigError("--max-retries must be 0 or more")
    plain = not args.expect and not args.criteria and (args.judge or "off") == "off"
    wins = (Status.VERIFIED, Status.PASSED) if plain else (Status.VERIFIED,)
    race = Race(names, tuple(str(w) for w in wins), installs=cfg.run.install)  # never --yes
    return race, {n: Contender(n, race, progress) for n in names}


async def run_race(cfg: Any, args: argparse.Namespace, race: Race,
                   handlers: dict[str, Contender]) -> list[dict[str, Any]]:
    """Every contender at once to its end (or its stop); a row per contender."""
    started = time.monotonic()
    await asyncio.gather(*(_contend(cfg, args, n, race, handlers[n]) for n in race.names))
    rows = []
    for n in race.names:
        h = handlers[n]
        after = (h.ended - race.won_at) if race.winner and h is not race.winner else None
        rows.append({"llm": n, "status": h.status, "winner": h is race.winner,
                     "seconds": round((h.ended or time.monotonic()) - started, 3),
                     "stopped_after_win": round(after, 3) if after is not None else None,
                     "session": h.record.get("session", h.session),
                     "transcript": h.record.get("transcript", "")})
    return rows
