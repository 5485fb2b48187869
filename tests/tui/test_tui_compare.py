"""Compare LLMs in the app (issue 32): the palette's "Compare LLMs…", a table that fills
in as cells finish, Escape stops the running cells and keeps the finished ones in a
compare.json that validates, and history records the comparison.

The real app under Pilot, two replay LLMs with different answers, real local programs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest
from cli_runs import answers, python_answer
from textual.command import CommandPalette
from textual.coordinate import Coordinate
from textual.widgets import Input, TextArea

from verifybot_tui.core.store.history import History
from verifybot_tui.tui.screens.compare import CompareForm, CompareScreen
from verifybot_tui.tui.screens.compare_cell import CellScreen
from verifybot_tui.tui.widgets.history import HistoryPane

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]


def _recipe(folder: Path, name: str, expect: str, timeout: float = 20) -> None:
    (folder / f"{name}.toml").write_text(
        f'name = "{name}"\nprompt = "print {expect}"\ntarget = "local"\n'
        f'criteria = ["contains:{expect}"]\njudge = "off"\nmax_retries = 1\n'
        f"timeout = {timeout}\n", encoding="utf-8")


def setup_compare(tmp_path: Path, slow: str) -> tuple[Path, str]:
    """Two recipes (sum, and ``slow``'s program in team_a), two replays:
    team_a (one file per recipe) verifies both at attempt 1; b.md (one file for all)
    prints SUM=7 first, then everything: verified at 2."""
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    _recipe(recipes, "sum", "SUM=6")
    _recipe(recipes, "slow", "DONE")
    team = tmp_path / "team_a"
    team.mkdir()
    (team / "sum.md").write_text(answers(python_answer('print("SUM=6")')))
    (team / "slow.md").write_text(answers(python_answer(slow)))
    (tmp_path / "b.md").write_text(answers(python_answer('print("SUM=7")'),
                                           python_answer('print("SUM=6 DONE")')))
    return recipes, f"replay:{team}/, replay:{tmp_path / 'b.md'}"


async def palette(tui, pilot, entry: str) -> None:
    """Pick ``entry`` in the command palette as a user does: Ctrl+P, type, Enter."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await tui.wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
    await pilot.press(*entry)
    await tui.wait_for(pilot, lambda: app.screen.query("CommandList").first().option_count,
                       what=f"the entry {entry}")
    await pilot.press("enter")


async def start_compare(tui, pilot, recipes: Path, llms: str, parallel: str) -> CompareScreen:
    await palette(tui, pilot, "Compare LLMs")
    form = await tui.wait_screen(pilot, CompareForm, what="the compare form")
    await pilot.press(*str(recipes))
    form.query_one("#compare-llms", Input).value = llms
    form.query_one("#compare-parallel", Input).value = parallel
    await pilot.press("enter")
    return await tui.wait_screen(pilot, CompareScreen, what="the compare screen")


def schema_errors(out: Path) -> list[str]:
    schema = json.loads((tui_root() / "schemas" / "compare.schema.json").read_text())
    data = json.loads((out / "compare.json").read_text())
    return [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(data)]


def tui_root() -> Path:
    from project import ROOT

    return ROOT


async def test_the_table_fills_in_as_cells_finish(tui, tmp_path: Path) -> None:
    recipes, llms = setup_compare(tmp_path, 'import time\ntime.sleep(2)\nprint("DONE")')
    # b is wrong twice here: its cells end FAILED, the kind of failure shown
    (tmp_path / "b.md").write_text(answers(python_answer('print("SUM=7")'),
                                           python_answer('print("nothing")')))
    app = tui.make_app(tui.ws)
    async with tui.running(app, size=(80, 24)) as pilot:
        screen = await start_compare(tui, pilot, recipes, llms, "2")
        table = screen.table
        team = screen.request.llms[0][0]
        seen: list[str] = []

        def slow_done() -> bool:
            text = table.text_of("slow", 1, team)
            if not seen or seen[-1] != text:
                seen.append(text)
            return screen.matrix is not None
        await tui.wait_for(pilot, slow_done, timeout=120, what="the compare to end")
        # the cell was seen running, then its verdict came while the screen was open
        assert "run #1" in seen, seen
        assert seen[-1] == "VERIFIED@1" and seen.index("run #1") < len(seen) - 1, seen
        b = screen.request.llms[1][0]
        assert [table.text_of(r, 1, b) for r in ("sum", "slow")] == ["FAILED output"] * 2
        assert table.get_cell("pass@1", team) == "100% of 2"
        assert table.get_cell("pass@1", b) == "0% of 2"
        status = str(screen.query_one("#compare-status").render())
        assert "Done: 2 of 4 cell(s) verified" in status and "index.html" in status
        out = screen.out
        assert out is not None and schema_errors(out) == []
        data = json.loads((out / "compare.json").read_text())
        assert (len(data["cells"]), data["interrupted"]) == (4, False)
        # A cell opens with Enter: its verdict, its transcript and what its program printed.
        row = table.get_row_index("sum\x001")
        table.cursor_coordinate = Coordinate(row, table.get_column_index(b))
        await pilot.press("enter")
        cell = await tui.wait_screen(pilot, CellScreen, what="the cell's screen")
        title = str(cell.query_one("#cell-title").render())
        assert "sum x replay:" in title and "FAILED" in title and "2 answer(s)" in title
        assert "SUM=7" in cell.query_one("#cell-transcript-text", TextArea).text
        assert "SUM=7" in cell.query_one("#cell-output-text", TextArea).text
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: app.screen is screen, what="back to the table")
        # Narrow, the cells turn to letters rather than be cut; wide again, to words.
        await pilot.resize_terminal(34, 24)
        await tui.wait_for(pilot, lambda: table.compact, what="the compact table")
        assert table.text_of("slow", 1, team) == "V1"
        assert table.text_of("sum", 1, b) == "F out"
        await pilot.resize_terminal(80, 24)
        await tui.wait_for(pilot, lambda: not table.compact, what="the full table")
        assert table.text_of("slow", 1, team) == "VERIFIED@1"
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: not isinstance(app.screen, CompareScreen),
                           what="the screen closed")
    history = History(tui.ws)
    try:
        rows = history.comparisons()
    finally:
        history.close()
    assert [(r["cells"], r["verified"], r["out_dir"]) for r in rows] == [(4, 2, str(out))]
    # The form opens again with what was sent, not every configured LLM.
    app = tui.make_app(tui.ws)
    async with tui.running(app, size=(80, 24)) as pilot:
        await palette(tui, pilot, "Compare LLMs")
        form = await tui.wait_screen(pilot, CompareForm, what="the compare form again")
        assert form.query_one("#compare-recipes", Input).value == str(recipes)
        assert form.query_one("#compare-llms", Input).value == llms
        assert form.query_one("#compare-parallel", Input).value == "2"


def _processes_under(folder: Path) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue
        if cwd.startswith(str(folder)):
            found.append(int(pid))
    return found


async def test_escape_stops_running_cells_and_keeps_the_finished(tui, tmp_path: Path) -> None:
    recipes, llms = setup_compare(tmp_path, 'import time\ntime.sleep(120)\nprint("DONE")')
    app = tui.make_app(tui.ws)
    async with tui.running(app) as pilot:
        screen = await start_compare(tui, pilot, recipes, llms, "4")
        table = screen.table
        team, b = (name for name, _ in screen.request.llms)

        def finished_and_hanging() -> bool:
            return (table.text_of("sum", 1, team) == "VERIFIED@1"
                    and table.text_of("sum", 1, b) == "VERIFIED@2"
                    and table.text_of("slow", 1, b) == "VERIFIED@2"
                    and table.text_of("slow", 1, team) == "run #1"
                    and bool(_processes_under(screen.out or tmp_path)))
        await tui.wait_for(pilot, finished_and_hanging, timeout=90,
                           what="three verdicts and a hanging program")
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: screen.matrix is not None, timeout=30, what="the stop")
        assert table.text_of("slow", 1, team) == "stopped"
        out = screen.out
        assert out is not None and schema_errors(out) == []
        data = json.loads((out / "compare.json").read_text())
        kept = sorted((c["recipe"], c["verified_at"]) for c in data["cells"])
        assert kept == [("slow", 2), ("sum", 1), ("sum", 2)]
        assert (data["interrupted"], data["not_run"]) == (True, 1)
        assert (out / "index.html").is_file() and (out / "compare.md").is_file()
        assert "Stopped: 3 of 3 cell(s) verified, 1 not run" in str(
            screen.query_one("#compare-status").render())
        assert _processes_under(out) == []


def pane_labels(pane: HistoryPane) -> list[str]:
    out: list[str] = []

    def visit(node) -> None:  # noqa: ANN001
        for child in node.children:
            out.append(str(child.label))
            visit(child)

    visit(pane.root)
    return out


async def test_history_filter_shows_one_comparison(tui, tmp_path: Path) -> None:
    recipes, llms = setup_compare(tmp_path, 'print("DONE")')
    history = History(tui.ws)
    try:  # an earlier comparison (compare 1): not to be shown under compare:2
        history.add_comparison({"started": "earlier", "recipes": ["other"], "llms": ["zz"],
                                "cells": [{"recipe": "other", "llm": "zz", "run": 1,
                                           "status": "FAILED", "session": 9,
                                           "workspace": "cells/o"}]}, "/nowhere")
    finally:
        history.close()
    app = tui.app_answering('print("hi there")', data={"run": {"auto_accept": True}},
                            review_feedback=False)
    async with tui.running(app) as pilot:
        await tui.type_prompt(pilot, "say hi")
        await tui.wait_idle(pilot)
        screen = await start_compare(tui, pilot, recipes, llms, "2")
        await tui.wait_for(pilot, lambda: screen.matrix is not None, timeout=120,
                           what="the compare")
        await pilot.press("escape")
        main = tui.main(app)
        pane = main.query_one(HistoryPane)
        await tui.wait_for(pilot, lambda: pane.comparison_ids == [2, 1], what="two compares")
        assert any("say" in label for label in pane_labels(pane)), pane_labels(pane)
        await palette(tui, pilot, "Show a comparison: 2")
        await tui.wait_for(pilot, lambda: pane.filter_text == "compare:2", what="the filter")
        shown = pane_labels(pane)
        assert shown[0].startswith("compare 2 ") and "(4 of 4 verified)" in shown[0], shown
        cells = shown[1:5]
        assert sorted(c.split(":")[0] for c in cells) == sorted(
            f"✔ {r} x {n} #1" for r in ("sum", "slow") for n in ("team_a", "b"))
        assert len(shown) == 6 and shown[5].startswith("report: "), shown
        assert not any("say" in x or "other" in x for x in shown), shown
        assert "4 cell(s)" in str(pane.border_subtitle)
        # typed by hand: an unknown id says which are known; Esc restores every session
        pane.focus()
        await pilot.press("slash", *"compare:7")
        assert pane_labels(pane) == ["No comparison '7'; known: 2, 1 (Esc clears)"]
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: any("say" in x for x in pane_labels(pane)),
                           what="every session back")
        assert not any(x.startswith("compare ") for x in pane_labels(pane))


async def test_quitting_mid_compare_keeps_the_finished_cells(tui, tmp_path: Path) -> None:
    """Ctrl+Q while a cell runs: the app ends, the program with it, and the report and
    history keep the cells that finished (as Esc would have)."""
    recipes, llms = setup_compare(tmp_path, 'import time\ntime.sleep(120)\nprint("DONE")')
    app = tui.make_app(tui.ws)
    async with tui.running(app) as pilot:
        screen = await start_compare(tui, pilot, recipes, llms.split(",")[0], "2")
        team = screen.request.llms[0][0]
        await tui.wait_for(pilot, lambda: screen.table.text_of("sum", 1, team) == "VERIFIED@1"
                           and bool(_processes_under(screen.out or tmp_path)),
                           timeout=90, what="one verdict and a hanging program")
        await pilot.press("ctrl+q")
        await tui.wait_for(pilot, lambda: not app.is_running, what="the app to end")
    out = screen.out
    assert out is not None and schema_errors(out) == []
    data = json.loads((out / "compare.json").read_text())
    assert [c["recipe"] for c in data["cells"]] == ["sum"]
    assert (data["interrupted"], data["not_run"]) == (True, 1)
    history = History(tui.ws)
    try:
        assert [(r["cells"], r["interrupted"]) for r in history.comparisons()] == [(1, 1)]
    finally:
        history.close()
    assert _processes_under(out) == []


def test_an_llm_on_the_app_chats_browser_profile_is_refused_first(tmp_path: Path) -> None:
    """Chromium takes one browser per profile: a cell (or a contender) on the profile the
    app's own chat has open could only end LLM_ERROR, so the form says so instead."""
    from verifybot_tui.core.base.errors import ConfigError
    from verifybot_tui.core.settings.config import parse_config
    from verifybot_tui.tui.screens.compare import check_request
    from verifybot_tui.tui.screens.race import check_race, race_args

    recipes, llms = setup_compare(tmp_path, 'print("DONE")')
    cfg = parse_config({"run": {"workspace": str(tmp_path / "ws")}}, "<test>")
    assert cfg.llm["chatgpt"].kind == "browser"
    names = f"chatgpt, {llms.split(',')[1]}"
    with pytest.raises(ConfigError, match="chatgpt needs the browser profile the app's chat"):
        check_request(cfg, str(recipes), names, "2", app_llm="chatgpt")
    with pytest.raises(ConfigError, match="chatgpt needs the browser profile"):
        check_race(cfg, race_args("p", names, "local"), "chatgpt")
    # the app on another LLM (a replay, or claude's own profile): nothing held
    for app_llm in (llms.split(",")[0], "claude"):
        request = check_request(cfg, str(recipes), names, "2", app_llm=app_llm)
        assert [n for n, _ in request.llms] == ["chatgpt", llms.split(",")[1].strip()]
        check_race(cfg, race_args("p", names, "local"), app_llm)


def test_a_cell_whose_program_flooded_shows_the_start_of_its_output(tmp_path: Path) -> None:
    """A cell's files are read on the UI thread as its screen opens: a flooded output file
    is read only as far as is shown, and says where the rest is."""
    from verifybot_tui.tui.screens import compare_cell

    big = tmp_path / "flood_1.txt"
    with open(big, "w") as f:
        for i in range(400_000):  # about 6 MB
            f.write(f"line {i}\n")
    text = compare_cell._read(big)
    assert text.startswith("line 0\nline 1\n")
    assert len(text) < compare_cell.MAX_SHOWN + 200
    assert text.endswith(f"cut here; the whole file is {big}")
    small = tmp_path / "ok_1.txt"
    small.write_text("SUM=7\n")
    assert compare_cell._read(small) == "SUM=7\n"
