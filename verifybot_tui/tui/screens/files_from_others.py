"""The app's question about files from others: a board file or a recipe that makes
VerifyBot run commands, run the answers it brings without a sandbox, or read files
outside its folder, and that nobody approved yet.

Shown before anything of the file runs (before the target is even built from it):
each file's path and each finding, its key, its value and what it does. "Run it"
approves this exact content (remembered by its hash, core.settings.trust); "Don't
run" (the focus, n, Escape) starts nothing and keeps nothing. The CLI asks the same
in the terminal (cli/approval.py).
"""

from __future__ import annotations

from textual import events
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Label, Static

from verifybot_tui.core.settings.trust import FileToTrust
from verifybot_tui.tui.screens.dialogs import ConfirmScreen
from verifybot_tui.tui.widgets.notices import NoticeLine


def findings_text(f: FileToTrust) -> str:
    """One file's findings as the dialog shows them: the key and value, then what it does."""
    return "\n".join(f"• {x.key} = {x.value}\n    {x.why}" for x in f.findings)


def refused_text(files: list[FileToTrust]) -> str:
    """The notice after "Don't run": what was refused, and how to run it later."""
    names = ", ".join(str(f.path) for f in files)
    keys = ", ".join(sorted({x.key for f in files for x in f.findings}))
    return (f"Not run: {names} (it sets {keys}). Nothing of it ran and nothing was "
            "approved. The next run that needs it asks again; starting the app with "
            "verifybot --trust approves it unasked.")


def trusted_text(files: list[FileToTrust]) -> str:
    """The notice when --trust said yes in the user's place."""
    return "--trust: running what " + "; ".join(f.describe() for f in files)


# The dialog's rows around its list of findings: border, padding, title, question, the
# note and the buttons. The list scrolls in what the terminal leaves (80x24 included).
AROUND_FINDINGS = 15


class FilesFromOthersScreen(ConfirmScreen):
    """Yes (y, "Run it") or no (n, Escape, "Don't run": the focus) for ``files``."""

    def __init__(self, files: list[FileToTrust]) -> None:
        one = len(files) == 1
        super().__init__("This file from others widens what VerifyBot runs:" if one else
                         f"These {len(files)} files from others widen what VerifyBot runs:",
                         "Run what a file you did not write asks for?")
        self.files = files

    def compose(self):
        with Vertical(id="dialog", classes="files-from-others"):
            yield Label(self.title_text, id="dialog-title")
            yield Label(self.question, id="dialog-question", markup=False)
            with VerticalScroll(id="trust-files"):
                for f in self.files:
                    yield Static(str(f.path), classes="trust-path", markup=False)
                    yield Static(findings_text(f), classes="trust-findings", markup=False)
            yield Static("Nothing of it has run yet. A yes is kept for this exact content: "
                         "a changed file is asked about again. --yes does not answer this.",
                         id="trust-note", markup=False)
            yield NoticeLine(id="notices")
            with Horizontal(id="dialog-buttons"):
                yield Button("Run it (asked once for this content) \\[y]", id="yes",
                             variant="warning")
                yield Button("Don't run \\[n]", id="no", variant="primary")

    def on_mount(self) -> None:
        super().on_mount()
        self._fit(self.app.size.height)

    def on_resize(self, event: events.Resize) -> None:
        self._fit(event.size.height)

    def _fit(self, height: int) -> None:
        self.query_one("#trust-files").styles.max_height = max(3, height - AROUND_FINDINGS)
