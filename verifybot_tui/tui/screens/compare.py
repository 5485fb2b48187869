"""Compare LLMs in the app: the form that asks what to compare, and the screen whose
table fills in as the cells finish.

The cells run through the same engine as ``verifybot compare`` (verifybot_tui.batch: each
recipe with each LLM, each cell its own chat and workspace folder, one browser profile
one cell at a time), in a worker; the engine's progress hook becomes a message, and
the table shows it. The report (compare.json, compare.md, index.html) is written
after every cell as the CLI writes it, so Escape (or Ctrl+C) stops the running cells
and the finished ones stay in the report; the compare is recorded in history.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from textual import on, work
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, DataTable, Input, Label, Static

from verifybot_tui.batch.cells import Plan
from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.verify.compare.matrix import Cell, Matrix
from verifybot_tui.core.verify.recipe import Recipe
from verifybot_tui.tui.screens.dialogs import FormDialog
from verifybot_tui.tui.widgets.compare_table import CompareTable
from verifybot_tui.tui.widgets.notices import NoticeLine


@dataclass
class CompareRequest:
    """What the form read: recipes found and checked, each LLM with a spec per recipe."""

    recipes: list[Recipe]
    llms: list[tuple[str, list[str]]]
    parallel: int
    repeat: int = 1


def check_request(cfg: Config, paths: str, names: str, parallel: str,
                  repeat: str = "1", app_llm: str = "") -> CompareRequest:
    """The form's fields as the CLI's arguments would be read (the same checks, the same
    messages); files from others that set commands must be approved already, and no
    LLM may need the browser profile the app's own chat (``app_llm``) has open."""
    from verifybot_tui.batch.cells import check_profile_free
    from verifybot_tui.batch.compare import check_compare, find_recipes
    from verifybot_tui.batch.headless import files_to_trust
    from verifybot_tui.core.settings import trust

    if not paths.split():
        raise ConfigError("name a recipe file or a folder of them")
    llms = [n.strip() for n in names.replace(",", " ").split() if n.strip()]
    if not llms:
        raise ConfigError("name the LLMs to compare: an [llm.NAME], replay:PATH or replay:DIR/")
    try:
        at_once, runs = int(parallel or "1"), int(repeat or "1")
    except ValueError:
        raise ConfigError("cells at once and runs must be whole numbers") from None
    if at_once < 1 or runs < 1:
        raise ConfigError("cells at once and runs must be 1 or more")
    recipes = find_recipes(paths.split())
    todo = files_to_trust(cfg, recipes, llms)
    if todo:
        raise trust.UntrustedFile(todo, "verifybot compare --trust")
    checked = check_compare(cfg, recipes, llms)
    if app_llm:
        check_profile_free(cfg, checked, app_llm)
    return CompareRequest(recipes, checked, at_once, runs)


FORM_KEYS = ("recipes", "llms", "parallel", "repeat")


def last_form(app_llm: str) -> dict[str, str]:
    """The form as the user last sent it (the UI state file), else sensible firsts: the
    LLM the app's chat uses, two cells at once, one run. Not every configured LLM: the
    browser ones would each open a browser."""
    from verifybot_tui.core.settings.ui_state import load_ui_state

    saved = load_ui_state().get("compare_form")
    saved = saved if isinstance(saved, dict) else {}
    first = {"recipes": "", "llms": app_llm, "parallel": "2", "repeat": "1"}
    return {k: str(saved.get(k, first[k])) for k in FORM_KEYS}


class CompareForm(FormDialog[CompareRequest]):
    """Recipes, LLMs, how many cells at once, runs of each: as last sent."""

    FIELD = "#compare-recipes"
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]
    CSS_PATH = ["dialogs.tcss", "compare.tcss"]  # compact: the form fits 80x24

    def __init__(self, config: Config, app_llm: str = "") -> None:
        super().__init__(classes="dialog")
        self.config = config
        self.app_llm = app_llm
        self.last = last_form(app_llm)

    def compose(self):
        with Vertical(id="dialog"):
            yield Label("Compare LLMs", id="dialog-title")
            yield Label("Recipe files or folders (space between):", id="dialog-question")
            yield Input(self.last["recipes"], placeholder="benchmarks/embedded",
                        id="compare-recipes")
            yield Label("LLMs ([llm.NAME], replay:PATH, replay:DIR/; comma between):")
            yield Input(self.last["llms"], id="compare-llms")
            yield Label("Cells at once, runs of each:")
            with Horizontal(id="compare-numbers"):
                yield Input(self.last["parallel"], id="compare-parallel", type="integer")
                yield Input(self.last["repeat"], id="compare-repeat", type="integer")
            yield from self.form_end("Compare", "compare-start")

    def read(self) -> CompareRequest:
        from verifybot_tui.core.settings.ui_state import save_ui_choice

        value = {i: self.query_one(f"#compare-{i}", Input).value.strip() for i in FORM_KEYS}
        request = check_request(self.config, value["recipes"], value["llms"],
                                value["parallel"], value["repeat"], self.app_llm)
        try:
            save_ui_choice("compare_form", value)  # the next form opens with these
        except OSError as e:
            self.notify(f"the form's values are not kept: {e}", severity="warning")
        return request

    @on(Input.Submitted)
    @on(Button.Pressed, "#compare-start")
    def _start(self) -> None:
        self.action_submit()


class CellChanged(Message):
    """The engine's progress hook, carried to the screen: a cell's new state."""

    def __init__(self, plan: Plan, state: str, cell: Cell | None) -> None:
        super().__init__()
        self.plan, self.state, self.cell = plan, state, cell


class CompareDone(Message):
    def __init__(self, matrix: Matrix, out: Path, compare_id: int | None) -> None:
        super().__init__()
        self.matrix, self.out, self.compare_id = matrix, out, compare_id


class CompareScreen(Screen[None]):
    """The table, a line that says where the report is, and how to stop."""

    CSS_PATH = "compare.tcss"
    BINDINGS = [Binding("escape", "stop_or_close", "Stop / close"),
                Binding("ctrl+c", "stop_or_close", "Stop / close", show=False,
                        priority=True),
                Binding("enter", "open_cell", "Open the cell", show=False)]

    def __init__(self, config: Config, request: CompareRequest) -> None:
        super().__init__()
        self.config = config
        self.request = request
        self.stops: Any = None
        self.cells: list[Cell] = []  # as the table has shown them
        self.finished: list[Cell] = []  # as the engine has finished them
        self.states: dict[tuple[str, int, str], str] = {}
        self.out: Path | None = None
        self.matrix: Matrix | None = None
        self.running = False

    def compose(self):
        r = self.request
        yield Label(f"Compare: {len(r.recipes)} recipe(s) x {len(r.llms)} LLM(s)"
                    f" x {r.repeat}, {r.parallel} at once", id="compare-title")
        yield CompareTable(id="compare-table")
        yield Static("Starting…", id="compare-status", markup=False)
        yield NoticeLine(id="notices")
        yield Static("Arrows: a cell · Enter: its transcript and output · Esc: stop the "
                     "running cells (finished ones kept), again: close", id="compare-keys")

    @property
    def table(self) -> CompareTable:
        return self.query_one(CompareTable)

    def on_mount(self) -> None:
        r = self.request
        self.table.setup([x.name for x in r.recipes], [n for n, _ in r.llms], r.repeat)
        self.table.fit(self.size.width)
        self.table.focus()
        self.running = True
        self._run()

    @work(group="compare", exclusive=True, exit_on_error=False)
    async def _run(self) -> None:
        from verifybot_tui.batch.compare import out_folder, record, run_matrix
        from verifybot_tui.batch.headless import Stops

        r = self.request
        self.stops = Stops()
        self.out = out_folder(self.config, None)
        self.query_one("#compare-status", Static).update(f"Report: {self.out}")
        m = await run_matrix(self.config, r.recipes, r.llms, repeat=r.repeat,
                             parallel=r.parallel, out=self.out, stops=self.stops,
                             progress=self._heard)
        self.running = False
        self.post_message(CompareDone(m, self.out, record(self.config, m, self.out)))

    def _heard(self, plan: Plan, state: str, cell: Cell | None) -> None:
        """The engine's hook (in the worker): kept, and told to the table by a message."""
        if cell is not None:
            self.finished.append(cell)
        self.post_message(CellChanged(plan, state, cell))

    def on_unmount(self) -> None:
        """The app quits mid-compare (Ctrl+Q, a hangup): the running cells are stopped,
        and the report and history keep the finished ones, as Esc would have."""
        if not self.running or self.out is None or self.stops is None:
            return
        import json

        from verifybot_tui.batch.compare import record, write_report
        from verifybot_tui.core.base.outcome import Status
        from verifybot_tui.core.verify.compare.matrix import from_json

        self.running = False
        self.stops(Status.INTERRUPTED)
        r = self.request
        m = from_json(json.loads((self.out / "compare.json").read_text(encoding="utf-8")))
        m.cells, m.interrupted = list(self.finished), True
        m.not_run = len(r.recipes) * len(r.llms) * r.repeat - len(m.cells)
        write_report(m, self.out)
        record(self.config, m, self.out)

    def on_resize(self) -> None:
        self.table.fit(self.size.width)

    def action_open_cell(self) -> None:
        """Enter on a finished cell: its transcript and output; on any other, why not."""
        from verifybot_tui.tui.screens.compare_cell import CellScreen

        where = self.table.cell_at_cursor()
        if where is None:
            self.notify("Move to a cell of an LLM's column (arrows) to open it")
            return
        recipe, run, llm = where
        cell = next((c for c in reversed(self.finished)
                     if (c.recipe, c.run, c.llm) == (recipe, run, llm)), None)
        if cell is None or self.out is None:
            state = self.states.get((recipe, run, llm), "queued")
            self.notify(f"{recipe} x {llm}: {state}, not finished yet: nothing to open")
            return
        self.app.push_screen(CellScreen(cell, self.out))

    @on(DataTable.CellSelected)
    def _cell_selected(self) -> None:
        self.action_open_cell()  # the table has the focus, so it hears Enter first

    @on(CellChanged)
    def _cell_changed(self, message: CellChanged) -> None:
        p = message.plan
        self.states[(p.recipe.name, p.run, p.llm)] = message.state
        self.table.show_state(p.recipe.name, p.run, p.llm, message.state, message.cell)
        if message.cell is not None:
            self.cells.append(message.cell)
            m = Matrix(started="", recipes=[x.name for x in self.request.recipes],
                       llms=[n for n, _ in self.request.llms], cells=self.cells)
            self.table.show_summary(m.summary())

    @on(CompareDone)
    def _done(self, message: CompareDone) -> None:
        self.running = False
        self.matrix = m = message.matrix
        self.table.show_summary(m.summary())
        verified = sum(1 for c in m.cells if c.verified)
        how = "Stopped" if m.interrupted else "Done"
        cid = f", compare {message.compare_id} in history" if message.compare_id else ""
        text = (f"{how}: {verified} of {len(m.cells)} cell(s) verified"
                + (f", {m.not_run} not run" if m.not_run else "")
                + f". Report: {message.out / 'index.html'}{cid}")
        self.query_one("#compare-status", Static).update(text)
        self.query_one("#compare-keys", Static).update(
            "Enter: a cell's transcript and output · Esc: close (the history pane's "
            f"/compare:{message.compare_id} shows it again)")

    def action_stop_or_close(self) -> None:
        from verifybot_tui.core.base.outcome import Status

        if self.running and self.stops is not None:
            if self.stops.status is None:
                self.stops(Status.INTERRUPTED)
                self.query_one("#compare-status", Static).update(
                    "Stopping the running cells; the finished ones stay in the report…")
            return
        if not self.running:
            self.dismiss(None)


def open_compare(main: Any) -> None:
    """The palette's "Compare LLMs…": the form, then the table."""
    session = main.session
    cfg = session.config
    cfg = replace(cfg, run=replace(cfg.run, workspace=str(session.workspace)))

    def chosen(request: CompareRequest | None) -> None:
        if request is not None:
            main.app.push_screen(CompareScreen(cfg, request),
                                 callback=lambda _: main.refresh_history())

    main.app.push_screen(CompareForm(cfg, session.llm_spec), callback=chosen)
