"""The compare table: recipes (x run) down, LLMs across, each cell's state as it goes,
and a summary (pass@1, median seconds per LLM) at the bottom.

It only shows what it is given (the compare screen's worker tells it); names are cut
short so two LLMs and their verdicts fit 80 columns, and the table scrolls beyond.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.widgets import DataTable

NAME_WIDTH = 14  # a recipe's or an LLM's name in the table, at most
SHORT_KIND = {"compile": "compile", "fault": "fault", "timeout": "timeout",
              "output": "output", "judge": "judge", "no_code": "no code",
              "infrastructure": "infra"}
STYLE = {"VERIFIED": "bold green", "PASSED": "green", "FAILED": "bold red",
         "ERROR": "red", "LLM_ERROR": "red", "TARGET_ERROR": "red", "running": "yellow",
         "stopped": "magenta", "not run": "dim", "queued": "dim"}


def short(name: str, width: int = NAME_WIDTH) -> str:
    """A name that fits a column: ``replay:/x/team_a/`` is ``team_a``; long ones end in …"""
    if name.startswith("replay:"):
        name = Path(name.removeprefix("replay:").rstrip("/")).stem or name
    return name if len(name) <= width else name[:width - 1] + "…"


COMPACT = {"VERIFIED": "V", "FAILED": "F", "LLM_ERROR": "E", "TARGET_ERROR": "E",
           "ERROR": "E", "STOPPED": "S", "INTERRUPTED": "S", "PASSED": "P"}


def compact_text(state: str, cell: Any = None) -> Text:
    """The cell in five columns or fewer, for a narrow terminal: V3 (verified at answer
    3), F out, I (the infrastructure's), L2 (waiting on answer 2), R2 (running it)."""
    full = cell_text(state, cell)
    if cell is not None:
        if cell.infrastructure:
            return Text("I", style=full.style)
        if cell.verified_at is not None:
            return Text(f"V{cell.verified_at}", style=full.style)
        kind = cell.failures[-1][:3] if cell.failures else ""
        return Text(f"{COMPACT.get(str(cell.status), '?')} {kind}".strip(), style=full.style)
    word, _, n = state.partition(" ")
    if word in ("asking", "running") and n:
        return Text(f"{'L' if word == 'asking' else 'R'}{n}", style=full.style)
    return Text({"queued": "·", "stopped": "S", "not run": "-"}.get(state, state[:5]),
                style=full.style)


def cell_text(state: str, cell: Any = None) -> Text:
    """What one cell says: queued, LLM #n (waiting on answer n), run #n (its program
    runs), VERIFIED@k (at answer k), FAILED kind, or infra (not the model's doing)."""
    if cell is not None:
        if cell.infrastructure:
            return Text(f"{cell.status} infra", style="magenta")
        if cell.verified_at is not None:
            return Text(f"VERIFIED@{cell.verified_at}", style=STYLE["VERIFIED"])
        kind = SHORT_KIND.get(cell.failures[-1], "") if cell.failures else ""
        status = str(cell.status)
        return Text(f"{status} {kind}".strip(), style=STYLE.get(status, "red"))
    word, _, n = state.partition(" ")
    if word == "asking" and n:
        return Text(f"LLM #{n}", style="cyan")
    if word == "running" and n:
        return Text(f"run #{n}", style=STYLE["running"])
    return Text(state, style=STYLE.get(state, ""))


def row_key(recipe: str, run: int) -> str:
    return f"{recipe}\x00{run}"


class CompareTable(DataTable[Any]):
    """One row per (recipe, run), one column per LLM; two summary rows under them."""

    compact = False
    _states: dict[tuple[str, str], tuple[str, Any]]
    _llms: list[str]

    def setup(self, recipes: list[str], llms: list[str], repeat: int) -> None:
        self.cursor_type = "cell"  # arrows reach each cell; Enter opens it (the screen)
        self.zebra_stripes = True
        self._states, self._llms = {}, list(llms)
        self.add_column("recipe", key="recipe")
        for llm in llms:
            self.add_column(short(llm), key=llm)
        for run in range(1, repeat + 1):
            for recipe in recipes:
                label = short(recipe) + (f" #{run}" if repeat > 1 else "")
                self.add_row(label, *(cell_text("queued") for _ in llms),
                             key=row_key(recipe, run))
        self.add_row(Text("pass@1", style="bold"), *("-" for _ in llms), key="pass@1")
        self.add_row(Text("pass@k", style="bold"), *("-" for _ in llms), key="pass@k")
        self.add_row(Text("median s", style="bold"), *("-" for _ in llms), key="median")

    def fit(self, width: int) -> None:
        """Full words when every column fits ``width``, else the compact letters: a row
        is never cut at the screen's edge while it can be read whole."""
        full = NAME_WIDTH + 3 + len(self._llms) * (len("VERIFIED@3") + 3)
        compact = width < full
        if compact == self.compact:
            return
        self.compact = compact
        for (row, llm), (state, cell) in self._states.items():
            self.update_cell(row, llm, self._text(state, cell), update_width=True)
        for llm in self._llms:
            self.columns[llm].label = Text(short(llm, 8 if compact else NAME_WIDTH))
        self.refresh()

    def _text(self, state: str, cell: Any) -> Text:
        return compact_text(state, cell) if self.compact else cell_text(state, cell)

    def cell_at_cursor(self) -> tuple[str, int, str] | None:
        """(recipe, run, llm) under the cursor; None on the recipe column or a summary."""
        try:
            row, column = self.coordinate_to_cell_key(self.cursor_coordinate)
        except Exception:  # noqa: BLE001 - an empty table has no cell
            return None
        name = str(row.value or "")
        if "\x00" not in name or column.value == "recipe":
            return None
        recipe, run = name.split("\x00")
        return recipe, int(run), str(column.value)

    def show_state(self, recipe: str, run: int, llm: str, state: str, cell: Any = None) -> None:
        self._states[(row_key(recipe, run), llm)] = (state, cell)
        self.update_cell(row_key(recipe, run), llm, self._text(state, cell),
                         update_width=True)

    def show_summary(self, summary: list[dict[str, Any]]) -> None:
        """The matrix's summary rows: pass@1 and pass@k (k: the most answers a cell
        may take) as shares of the cells that count, the median wall time."""
        for row in summary:
            if not row["cells"]:
                continue
            p1 = row["pass_at"].get("1")
            self.update_cell("pass@1", row["llm"],
                             f"{p1 * 100:.0f}% of {row['cells']}" if p1 is not None else "-")
            if row["pass_at"]:
                k = max(row["pass_at"], key=int)
                self.update_cell("pass@k", row["llm"],
                                 f"@{k} {row['pass_at'][k] * 100:.0f}%", update_width=True)
            med = row["median_seconds"]
            self.update_cell("median", row["llm"], f"{med:.1f}" if med is not None else "-")

    def text_of(self, recipe: str, run: int, llm: str) -> str:
        """The cell's words as shown (tests and the screen's status read them)."""
        value = self.get_cell(row_key(recipe, run), llm)
        return value.plain if isinstance(value, Text) else str(value)
