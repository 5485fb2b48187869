"""One past attempt: its code, its output, the verdict and the prompt behind it.

Read back from the workspace (programs/, outputs/) and history.db, so it shows
exactly what ran, even for sessions from earlier runs of the app. A huge output
file is read from its tail: the pane keeps the last lines anyway.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual import on
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Static, TabbedContent, TabPane

from verifybot_tui.core.ansi import one_line
from verifybot_tui.core.languages import language_for_filename
from verifybot_tui.core.ports import ProgramFile
from verifybot_tui.tui.output_buffer import OutputBuffer
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.history import mark
from verifybot_tui.tui.widgets.output import OutputPane

TAIL_BYTES = 512 * 1024
STDERR_MARK = "stderr| "


def read_output_file(path: Path, buffer: OutputBuffer) -> None:
    """An outputs/ file into the buffer, stderr lines (marked ``stderr| ``) apart."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - TAIL_BYTES))
            data = f.read().decode("utf-8", errors="replace")
    except OSError as e:
        buffer.note(f"cannot read {path}: {e.strerror}")
        return
    if size > TAIL_BYTES:
        data = data.split("\n", 1)[-1]
        buffer.note(f"… showing the last {TAIL_BYTES // 1024} KB of {size // 1024} KB")
    for line in data.splitlines():
        if line.startswith(STDERR_MARK):
            buffer.add("stderr", line[len(STDERR_MARK):] + "\n")
        elif line.startswith("# "):
            buffer.note(line[2:])
        else:
            buffer.add("stdout", line + "\n")


class AttemptScreen(ModalScreen[int | None]):
    """Dismissed with the session id when the user asks to resume it."""

    CSS_PATH = "attempt.tcss"
    BINDINGS = [("escape,q", "dismiss(None)", "Close"), ("r", "resume", "Resume session")]

    def __init__(self, session: dict[str, Any], attempt: dict[str, Any], workspace: Path) -> None:
        super().__init__()
        self.session_row = session
        self.attempt = attempt
        self.workspace = workspace
        self.buffer = OutputBuffer()

    def compose(self):
        s, a = self.session_row, self.attempt
        with Vertical(id="attempt"):
            yield Label(f"{mark(a.get('status'))} Session #{s['id']} {s.get('slug', '')}, "
                        f"attempt {a.get('n')} on {a.get('target') or s.get('target')}",
                        id="attempt-title", markup=False)
            verdict = a.get("verdict") or a.get("status") or "-"
            # history.db written before issue 11 may hold a program's raw escapes
            yield Static(f"Verdict: {verdict} — {one_line(a.get('reason') or '')}\n"
                         f"Exit status: {a.get('exit_code')}   Decision: {a.get('decision')}"
                         f"   Output: {a.get('output_file') or '-'}",
                         id="attempt-verdict", markup=False)
            with TabbedContent(id="attempt-tabs"):
                with TabPane("Code", id="tab-code"):
                    yield CodePane(id="attempt-code")
                with TabPane("Output", id="tab-output"):
                    yield OutputPane(self.buffer, id="attempt-output")
                with TabPane("Prompt", id="tab-prompt"):
                    with VerticalScroll():
                        yield Static(a.get("prompt") or s.get("prompt") or "(no prompt kept)",
                                     markup=False, id="attempt-prompt")
                with TabPane("Session", id="tab-session"):
                    yield Static(self._session_text(), markup=False, id="attempt-session")
            with Horizontal(id="attempt-buttons"):
                yield Button("Resume this session \\[r]", id="resume", variant="primary")
                yield Button("Close \\[esc]", id="close")
        yield Footer()

    def _session_text(self) -> str:
        s = self.session_row
        return "\n".join(f"{k}: {s.get(k)}" for k in (
            "prompt", "status", "target", "llm", "conversation_url", "transcript"))

    async def on_mount(self) -> None:
        files = []
        for rel in self.attempt.get("files") or []:
            path = Path(rel) if Path(rel).is_absolute() else self.workspace / rel
            try:
                content = path.read_text(encoding="utf-8", errors="replace")
            except OSError as e:
                content = f"(cannot read {path}: {e.strerror})"
            lang = language_for_filename(path.name)
            files.append(ProgramFile(path.name, path.name, content, lang.name if lang else ""))
        await self.query_one(CodePane).show_files(files)
        out = self.attempt.get("output_file")
        if out:
            read_output_file(self.workspace / out, self.buffer)
        else:
            self.buffer.note("This attempt was not run.")
        self.query_one(OutputPane).finish()

    @on(Button.Pressed, "#close")
    def _close(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#resume")
    def action_resume(self) -> None:
        self.dismiss(int(self.session_row["id"]))
