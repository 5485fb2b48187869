"""Race LLMs in the app (best of n): the form, and a view of the contenders as they go.

The same engine as ``verifybot run PROMPT --race A,B`` (verifybot_tui.batch.race): the prompt
goes to every contender at once, each its own chat, target connection, session and
transcript, every version accepted; the first VERIFIED (PASSED when nothing can
verify) wins and the others are stopped. The engine's progress hook becomes a message
and the table shows it; when the view closes, the main panes show the winner's session.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from typing import Any

from rich.text import Text
from textual import on, work
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, DataTable, Input, Label, Static

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings.config import Config
from verifybot_tui.tui.screens.dialogs import FormDialog
from verifybot_tui.tui.widgets.compare_table import STYLE, short
from verifybot_tui.tui.widgets.notices import NoticeLine


def race_args(prompt: str, names: str, target: str, expect: str = "") -> argparse.Namespace:
    """What ``run PROMPT --race`` would have parsed, from the app's fields."""
    if not prompt.strip():
        raise ConfigError("type the prompt the LLMs race on")
    llms = ",".join(n.strip() for n in names.replace(",", " ").split())
    return argparse.Namespace(prompt=prompt.strip(), race=llms, target=target, judge="off",
                              expect=[e for e in expect.split() if e], criteria=None,
                              max_retries=None, timeout=None, yes=False,
                              trust_new_host=False, json=False)


class RaceForm(FormDialog[argparse.Namespace]):
    """The prompt, the contenders (the configured LLMs by default), a criterion."""

    FIELD = "#race-prompt"
    CSS_PATH = ["dialogs.tcss", "compare.tcss"]  # compact: the form fits 80x24

    def __init__(self, config: Config, target: str, app_llm: str = "") -> None:
        super().__init__(classes="dialog")
        self.config = config
        self.target = target
        self.app_llm = app_llm

    def compose(self):
        with Vertical(id="dialog"):
            yield Label("Race LLMs: the first VERIFIED wins", id="dialog-title")
            yield Label("The prompt:", id="dialog-question")
            yield Input(id="race-prompt")
            yield Label("Contenders ([llm.NAME] or replay:PATH; comma between):")
            yield Input(", ".join(self.config.llm), id="race-llms")
            yield Label("Success criteria, e.g. contains:RESULT=42 (blank: PASSED wins):")
            yield Input(id="race-expect")
            yield from self.form_end("Race", "race-start")

    def read(self) -> argparse.Namespace:
        value = {i: self.query_one(f"#race-{i}", Input).value for i in ("prompt", "llms",
                                                                          "expect")}
        args = race_args(value["prompt"], value["llms"], self.target, value["expect"])
        check_race(self.config, args, self.app_llm)
        return args

    @on(Input.Submitted)
    @on(Button.Pressed, "#race-start")
    def _start(self) -> None:
        self.action_submit()


def check_race(cfg: Config, args: argparse.Namespace, app_llm: str) -> None:
    """Every name checked before the view opens, as ``run --race`` checks them; none may
    need the browser profile the app's own chat has open."""
    from verifybot_tui.batch.cells import check_profile_free
    from verifybot_tui.batch.race import make_race

    race, _ = make_race(cfg, args)
    check_profile_free(cfg, [(n, [n]) for n in race.names], app_llm)


class ContenderChanged(Message):
    def __init__(self, name: str, state: str) -> None:
        super().__init__()
        self.name, self.state = name, state


class RaceDone(Message):
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        super().__init__()
        self.rows = rows


class RaceScreen(Screen[int | None]):
    """One row per contender: its state as it goes, then its end; dismissed with the
    winner's session id (None: nobody won)."""

    CSS_PATH = "compare.tcss"
    BINDINGS = [Binding("escape", "stop_or_close", "Stop / close"),
                Binding("ctrl+c", "stop_or_close", "Stop / close", show=False,
                        priority=True)]

    def __init__(self, config: Config, args: argparse.Namespace) -> None:
        super().__init__()
        self.config = config
        self.args = args
        self.race: Any = None
        self.running = False
        self.rows: list[dict[str, Any]] = []
        self.states: dict[str, str] = {}
        self.started = time.monotonic()

    def compose(self):
        yield Label(f"Race: {self.args.prompt}", id="race-title", markup=False)
        yield DataTable(id="race-table", cursor_type="row")
        yield Static("Starting…", id="race-status", markup=False)
        yield NoticeLine(id="notices")
        yield Static("Esc: stop every contender · Esc again: close (the winner's session "
                     "shows)", id="race-keys")

    def on_mount(self) -> None:
        from verifybot_tui.batch.race import make_race

        table = self.query_one(DataTable)
        table.add_column("LLM", key="llm")
        table.add_column("state", key="state")
        table.add_column("s", key="seconds")
        table.add_column("session", key="session")
        self.race, handlers = make_race(
            self.config, self.args,
            lambda name, state: self.post_message(ContenderChanged(name, state)))
        for name in self.race.names:
            table.add_row(short(name, 20), Text("queued", style=STYLE["queued"]), "", "",
                          key=name)
        table.focus()
        self.running = True
        self._run(handlers)

    @work(group="race", exclusive=True, exit_on_error=False)
    async def _run(self, handlers: dict[str, Any]) -> None:
        from verifybot_tui.batch.race import run_race

        self.query_one("#race-status", Static).update(
            f"{len(handlers)} contenders on {self.args.target}; the first "
            f"{' or '.join(self.race.wins)} wins")
        self.post_message(RaceDone(await run_race(self.config, self.args, self.race,
                                                  handlers)))

    def state_of(self, name: str) -> str:
        value = self.query_one(DataTable).get_cell(name, "state")
        return value.plain if isinstance(value, Text) else str(value)

    @on(ContenderChanged)
    def _changed(self, message: ContenderChanged) -> None:
        state = message.state
        if self.race is not None and self.race.winner is not None:
            if self.race.winner.name == message.name:
                state = f"{state} (winner)"
            elif state == "STOPPED":
                state = "stopped (lost)"
        self.states[message.name] = state
        word = state.split()[0]
        style = STYLE.get(word, STYLE["running"] if word in ("asking", "running") else "")
        table = self.query_one(DataTable)
        table.update_cell(message.name, "state", Text(state, style=style), update_width=True)
        table.update_cell(message.name, "seconds", f"{time.monotonic() - self.started:.1f}")

    @on(RaceDone)
    def _done(self, message: RaceDone) -> None:
        self.running = False
        self.rows = message.rows
        table = self.query_one(DataTable)
        for r in message.rows:
            table.update_cell(r["llm"], "seconds", f"{r['seconds']:.1f}")
            table.update_cell(r["llm"], "session", str(r["session"] or ""))
        won = next((r for r in message.rows if r["winner"]), None)
        after = max((r["stopped_after_win"] for r in message.rows
                     if r["stopped_after_win"] is not None), default=None)
        within = f" within {after:.2f} s" if after is not None else ""
        text = (f"{short(won['llm'], 30)} won ({won['status']}, session {won['session']}); "
                f"the others stopped{within}, their transcripts kept" if won
                else "Nobody won: " + ", ".join(f"{short(r['llm'])} {r['status']}"
                                                 for r in message.rows))
        self.query_one("#race-status", Static).update(text)
        self.query_one("#race-keys", Static).update("Esc: close (the main panes show the "
                                                    "winner's session)")
        self.notify(text, title="Race", timeout=12)

    @property
    def winner_session(self) -> int | None:
        won = next((r for r in self.rows if r["winner"]), None)
        return int(won["session"]) if won and won["session"] is not None else None

    def on_unmount(self) -> None:
        """The app quits mid-race: every contender is stopped (its program's tree too),
        as Esc would have."""
        from verifybot_tui.core.base.outcome import Status

        if self.running and self.race is not None and self.race.stopped is None:
            self.race.stop(Status.STOPPED)

    def action_stop_or_close(self) -> None:
        from verifybot_tui.core.base.outcome import Status

        if self.running:
            if self.race is not None and self.race.stopped is None:
                self.race.stop(Status.STOPPED)
                self.query_one("#race-status", Static).update("Stopping every contender…")
            return
        self.dismiss(self.winner_session)


def open_race(main: Any, prompt: str = "", names: str = "") -> None:
    """The palette's "Race LLMs…" (the form), or ``verifybot PROMPT --race A,B`` (the view
    at once); when it closes, the main panes show the winner's session."""
    session = main.session
    cfg = session.config
    cfg = replace(cfg, run=replace(cfg.run, workspace=str(session.workspace)))

    def closed(winner: int | None) -> None:
        main.refresh_history()
        if winner is not None:
            main.run_worker(main.show_session(winner), group="ui", exclusive=True)

    def chosen(args: argparse.Namespace | None) -> None:
        if args is not None:
            main.app.push_screen(RaceScreen(cfg, args), callback=closed)

    if prompt and names:
        try:
            args = race_args(prompt, names, session.target_name)
            check_race(cfg, args, session.llm_spec)
        except ConfigError as e:
            main.notify(f"--race: {e}", title="Race not started", severity="error",
                        timeout=12)
            return
        chosen(args)
        return
    main.app.push_screen(RaceForm(cfg, session.target_name, session.llm_spec),
                         callback=chosen)
