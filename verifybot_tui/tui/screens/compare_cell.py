"""One compare cell opened from the table (Enter): what it ended as and why, the
transcript of its chat, and what its programs printed.

A cell is its own workspace folder under the report (``cells/<recipe>/<llm>-<run>``):
the transcript is the one ``raw_md`` file the cell's session wrote, the outputs the
files of its ``outputs`` folder, newest last. Read-only: nothing here changes the
report.
"""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static, TabbedContent, TabPane, TextArea

from verifybot_tui.core.base.ansi import visible
from verifybot_tui.core.verify.compare.matrix import Cell
from verifybot_tui.tui.widgets.notices import NoticeLine

MAX_SHOWN = 200_000  # characters of one file shown; the rest is on disk


def _read(path: Path) -> str:
    """The file's start, up to MAX_SHOWN characters: read no further than that (a cell
    whose program flooded its output has a file of gigabytes, read on the UI thread)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SHOWN * 4 + 1)  # enough bytes for MAX_SHOWN characters
    except OSError as e:
        return f"(cannot read {path}: {e.strerror or e})"
    text = data.decode("utf-8", errors="replace")
    if len(text) > MAX_SHOWN or len(data) > MAX_SHOWN * 4:
        text = text[:MAX_SHOWN] + f"\n… cut here; the whole file is {path}"
    return visible(text)


def cell_files(cell: Cell, out: Path) -> tuple[Path | None, list[Path]]:
    """The cell's transcript and its output files (oldest first), as they are on disk."""
    folder = out / cell.workspace if cell.workspace else None
    transcript = Path(cell.transcript) if cell.transcript else None
    if transcript is not None and not transcript.is_absolute() and folder is not None:
        transcript = folder / transcript  # raw_md/<time>_<slug>.md in the cell's folder
    outputs: list[Path] = []
    if folder is not None and (folder / "outputs").is_dir():
        outputs = sorted((folder / "outputs").iterdir(), key=lambda p: p.stat().st_mtime)
    return transcript, outputs


def summary_line(cell: Cell) -> str:
    at = f" at answer {cell.verified_at}" if cell.verified_at else ""
    why = cell.infrastructure or ", ".join(cell.failures) or ""
    return (f"{cell.recipe} x {cell.llm} #{cell.run}: {cell.status}{at}, "
            f"{cell.attempts} answer(s), {cell.seconds:.1f} s"
            + (f" · {why}" if why else "") + (f" · model {cell.model}" if cell.model else ""))


class CellScreen(ModalScreen[None]):
    """The cell's verdict on one line, its message, then the transcript and outputs."""

    CSS_PATH = "compare.tcss"
    BINDINGS = [Binding("escape", "close", "Close"), Binding("q", "close", "Close",
                                                             show=False)]

    def __init__(self, cell: Cell, out: Path) -> None:
        super().__init__()
        self.cell, self.out = cell, out

    def compose(self):
        transcript, outputs = cell_files(self.cell, self.out)
        with Vertical(id="cell-dialog"):
            yield Label(visible(summary_line(self.cell)), id="cell-title", markup=False)
            yield Static(visible(self.cell.message or "-"), id="cell-message", markup=False)
            with TabbedContent(id="cell-tabs"):
                with TabPane("Transcript", id="cell-transcript"):
                    yield TextArea(_read(transcript) if transcript else "(no transcript)",
                                   read_only=True, language="markdown",
                                   id="cell-transcript-text")
                with TabPane(f"Output ({len(outputs)})", id="cell-output"):
                    text = "\n\n".join(f"── {p.name}\n{_read(p)}" for p in outputs)
                    yield TextArea(text or "(nothing ran)", read_only=True,
                                   id="cell-output-text")
            yield NoticeLine(id="notices")
            yield Static("Esc: back to the table · Tab: the other tab", id="cell-keys")

    def on_mount(self) -> None:
        self.query_one("#cell-transcript-text", TextArea).focus()

    def action_close(self) -> None:
        self.dismiss(None)
