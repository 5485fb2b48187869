"""Race LLMs in the app (issue 32): the contenders as they go, the first VERIFIED wins,
the loser is stopped within 2 s with its transcript and history row kept, and the main
panes then show the winner's session. ``verifybot PROMPT --race A,B`` opens the same view.

The real app under Pilot, two replay LLMs, real local programs.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_runs import answers, python_answer
from textual.command import CommandPalette
from textual.widgets import Input

from verifybot_tui.core.store.history import History
from verifybot_tui.tui.screens.race import RaceForm, RaceScreen
from verifybot_tui.tui.widgets.code import CodePane

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]


def _sleepers(marker: str) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                cmd = Path(f"/proc/{d}/cmdline").read_bytes() + b" " + Path(
                    f"/proc/{d}/environ").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmd and int(d) != os.getpid():
                out.append(int(d))
    return out


def contenders(tmp_path: Path) -> tuple[str, str]:
    """slow: a program that works for two minutes; fast: right in about 1.5 s."""
    slow, fast = tmp_path / "slow.md", tmp_path / "fast.md"
    slow.write_text(answers(python_answer(
        'import time\nprint("working", flush=True)\ntime.sleep(120)\nprint("RESULT=42")')))
    fast.write_text(answers(python_answer(
        'import time\ntime.sleep(1.5)\nprint("RESULT=42")')))
    return f"replay:{slow}", f"replay:{fast}"


async def watch_race(tui, pilot, screen: RaceScreen, slow: str) -> list[str]:
    seen: list[str] = []

    def ended() -> bool:
        state = screen.states.get(slow, "")
        if state and (not seen or seen[-1] != state):
            seen.append(state)
        return not screen.running
    await tui.wait_for(pilot, ended, timeout=120, what="the race to end")
    return seen


async def test_race_in_the_app_stops_the_loser_and_keeps_both(tui, tmp_path: Path) -> None:
    slow, fast = contenders(tmp_path)
    app = tui.make_app(tui.ws)
    async with tui.running(app, size=(80, 24)) as pilot:
        await pilot.press("ctrl+p")
        await tui.wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"Race LLMs")
        await tui.wait_for(pilot, lambda: app.screen.query("CommandList").first().option_count)
        await pilot.press("enter")
        form = await tui.wait_screen(pilot, RaceForm, what="the race form")
        await pilot.press(*"print RESULT=42")
        form.query_one("#race-llms", Input).value = f"{slow}, {fast}"
        form.query_one("#race-expect", Input).value = "contains:RESULT=42"
        await pilot.press("enter")
        screen = await tui.wait_screen(pilot, RaceScreen, what="the race view")
        seen = await watch_race(tui, pilot, screen, slow)
        assert "running attempt 1" in seen, seen  # the loser was seen as it went
        assert screen.state_of(fast) == "VERIFIED (winner)"
        assert screen.state_of(slow) == "stopped (lost)"
        rows = {r["llm"]: r for r in screen.rows}
        assert rows[slow]["stopped_after_win"] is not None
        assert rows[slow]["stopped_after_win"] <= 2.0, rows
        for r in rows.values():  # each keeps its transcript
            assert r["transcript"] and (tui.ws / r["transcript"]).is_file(), r
        status = str(screen.query_one("#race-status").render())
        assert "won (VERIFIED" in status and "the others stopped within " in status, status
        assert _sleepers(str(tui.ws)) == []
        await pilot.press("escape")
        main = tui.main(app)
        code = main.query_one(CodePane)

        def winner_shown() -> bool:
            shown = code.active_file()
            return shown is not None and "time.sleep(1.5)" in shown.content
        await tui.wait_for(pilot, winner_shown, what="the winner's code in the main panes")
    history = History(tui.ws)
    try:
        statuses = sorted((s["llm"], s["status"]) for s in history.sessions())
    finally:
        history.close()
    assert statuses == sorted([(fast, "VERIFIED"), (slow, "STOPPED")]), statuses


async def test_race_flag_opens_the_view_at_start(tui, tmp_path: Path) -> None:
    """``verifybot "PROMPT" --race A,B`` (cli.entry sets initial_race): no form; with no
    criteria the first PASSED wins."""
    slow, fast = contenders(tmp_path)
    app = tui.make_app(tui.ws)
    app.initial_race = ("print RESULT=42", f"{slow},{fast}")
    async with tui.running(app) as pilot:
        screen = await tui.wait_screen(pilot, RaceScreen, what="the race view")
        await watch_race(tui, pilot, screen, slow)
        assert screen.state_of(fast) == "PASSED (winner)"
        assert screen.state_of(slow) == "stopped (lost)"
