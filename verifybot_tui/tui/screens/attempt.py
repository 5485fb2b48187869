"""One past attempt: its code, its output, the verdict and the prompt behind it.

Read back from the workspace (programs/, outputs/) and history.db, so it shows
exactly what ran, even for sessions from earlier runs of the app. A huge output
file is read from its tail: the pane keeps the last lines anyway. The Diff tab
compares any two versions of the session (picked as "from" and "to", by default
the version before this one and this one), since the question in a history is
as often "what changed since the one that worked?" as "what changed last?".
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from textual import on
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer, Label, Select, Static, TabbedContent, TabPane

from verifybot_tui.core.answers.languages import language_for_filename
from verifybot_tui.core.base.ansi import one_line, visible
from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.tui.output_buffer import OutputBuffer
from verifybot_tui.tui.widgets.code import CodePane, unified_diff
from verifybot_tui.tui.widgets.history import mark, word
from verifybot_tui.tui.widgets.notices import NoticeLine
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


def _unversioned(rel: str, version: int) -> str:
    """'programs/main_3.py' of version 3 -> 'main.py': the name a file has in every version."""
    p = PurePosixPath(rel)
    name = re.sub(rf"_{version}$", "", p.stem) + p.suffix
    parts = p.parts[1:-1] if p.parts[:1] == ("programs",) else p.parts[:-1]
    return str(PurePosixPath(*parts, name))


DECISIONS = {"accept": "accepted", "edit": "edited by you, then run",
             "reject": "rejected by you", "stop": "stopped by you"}


def _version_word(a: dict[str, Any]) -> str:
    if a.get("is_original"):
        return "the LLM's original, edited by you"
    return "your edit, " + word(a.get("status")) if a.get("original") else word(a.get("status"))


def attempt_summary(a: dict[str, Any]) -> str:
    """The detail's first lines, in words: never "REJECTED —" or "Exit status: None"."""
    # history.db written before issue 11 may hold a program's raw escapes: one_line
    reason = one_line(a.get("reason") or "")
    verdict = a.get("verdict") or a.get("status") or ""
    if a.get("decision") == "reject":
        note = one_line(a.get("note") or "")
        first = f"Rejected by you. Note for the LLM: {note}" if note else \
            "Rejected by you, with no note for the LLM."
    elif reason:
        first = f"Verdict: {verdict}: {reason}"
    else:
        first = f"Verdict: {word(verdict) or 'none yet'}"
    code = a.get("exit_code")
    if code is not None:
        ran = f"exit status {code}"
    elif a.get("output_file"):
        ran = "no exit status (stopped, killed or timed out)"
    else:
        ran = "not run"
    decision = DECISIONS.get(a.get("decision") or "", a.get("decision") or "none")
    return (f"{first}\nRun: {ran}   Decision: {decision}   "
            f"Output: {a.get('output_file') or '-'}")


def read_version(workspace: Path, attempt: dict[str, Any]) -> list[ProgramFile]:
    """The files of the version an attempt ran (or showed), read from programs/."""
    files = []
    version = int(attempt.get("version") or 0)
    for rel in attempt.get("files") or []:
        path = Path(rel) if Path(rel).is_absolute() else workspace / rel
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            content = f"(cannot read {path}: {e.strerror})"
        lang = language_for_filename(path.name)
        files.append(ProgramFile(_unversioned(rel, version), str(rel), content,
                                 lang.name if lang else ""))
    return files


def attempt_files(workspace: Path, attempt: dict[str, Any] | None) -> list[ProgramFile]:
    """An attempt's version as the code pane shows it live: each file by the name it has
    in every version (so F4 matches it with the version before), its tab by the saved
    file's name; files no longer on disk are left out. None: no files."""
    if attempt is None:
        return []
    there = [rel for rel in attempt.get("files") or [] if (workspace / rel).is_file()]
    return [ProgramFile(f.name, PurePosixPath(f.saved_name).name, f.content, f.language)
            for f in read_version(workspace, {**attempt, "files": there})]


def entry_name(attempt: dict[str, Any] | None) -> str:
    """The entry file of an attempt by its name in every version (the code pane's mark)."""
    if attempt is None or not attempt.get("entry"):
        return ""
    version = int(attempt.get("version") or 0)
    return PurePosixPath(_unversioned(str(attempt["entry"]), version)).name


def version_diff(old: list[ProgramFile], new: list[ProgramFile]) -> str:
    """A unified diff of two versions: files matched by name, a lone file by itself
    (an answer that renamed its only file still diffs line by line)."""
    if len(old) == 1 and len(new) == 1 and old[0].name != new[0].name:
        old = [ProgramFile(new[0].name, old[0].saved_name, old[0].content, old[0].language)]
    return unified_diff(old, new)


class AttemptScreen(ModalScreen[int | None]):
    """Dismissed with the session id when the user asks to resume it."""

    CSS_PATH = "attempt.tcss"
    BINDINGS = [("escape,q", "dismiss(None)", "Close"), ("r", "resume", "Resume session"),
                ("d", "show_diff", "Diff versions")]

    def __init__(self, session: dict[str, Any], attempt: dict[str, Any], workspace: Path,
                 attempts: list[dict[str, Any]] | None = None) -> None:
        super().__init__()
        self.session_row = session
        self.attempt = attempt
        self.workspace = workspace
        self.buffer = OutputBuffer()
        self.diff_text = ""  # the diff shown in the Diff tab, as plain text
        # version -> the first attempt that holds it (its files are that version's files),
        # the LLM's originals of hand-edited attempts included (marked "original")
        self.versions: dict[int, dict[str, Any]] = {}
        for a in sorted(attempts or [attempt], key=lambda a: a.get("n") or 0):
            original = a.get("original")
            if isinstance(original, dict) and original.get("files"):
                self.versions.setdefault(int(original["version"]), {
                    **a, "version": original["version"], "files": original["files"],
                    "is_original": True})
            if a.get("files") and a.get("version") is not None:
                self.versions.setdefault(int(a["version"]), a)

    def _diff_choices(self) -> tuple[list[tuple[str, int]], int | None, int | None]:
        """The Select options, and the default from and to: an edited attempt's original
        and the edit, else the version before this one and this one."""
        options = [(f"v{v} (attempt {a.get('n')}: {_version_word(a)})", v)
                   for v, a in sorted(self.versions.items())]
        this = self.attempt.get("version")
        to = int(this) if this is not None and int(this) in self.versions else None
        original = self.attempt.get("original")
        if to is not None and isinstance(original, dict) and original.get("files"):
            return options, int(original["version"]), to
        earlier = [v for v in sorted(self.versions) if to is not None and v < to]
        if earlier:
            return options, earlier[-1], to
        # The first version: against the one after it (never against itself).
        later = [v for v in sorted(self.versions) if to is not None and v > to]
        return options, to, (later[0] if later else None)

    def compose(self):
        s, a = self.session_row, self.attempt
        with Vertical(id="attempt"):
            yield Label(f"{mark(a.get('status'))} Session #{s['id']} {s.get('slug', '')}, "
                        f"attempt {a.get('n')} on {a.get('target') or s.get('target')}",
                        id="attempt-title", markup=False)
            yield Static(attempt_summary(a), id="attempt-verdict", markup=False)
            with TabbedContent(id="attempt-tabs"):
                with TabPane("Code", id="tab-code"):
                    yield CodePane(id="attempt-code")
                with TabPane("Output", id="tab-output"):
                    yield OutputPane(self.buffer, id="attempt-output")
                with TabPane("Prompt", id="tab-prompt"):
                    with VerticalScroll():
                        yield Static(visible(a.get("prompt") or s.get("prompt")
                                             or "(no prompt kept)"),
                                     markup=False, id="attempt-prompt")
                with TabPane("Diff", id="tab-diff"):
                    options, start, end = self._diff_choices()
                    with Horizontal(id="diff-pick"):
                        yield Label("from ", classes="diff-label")
                        yield Select(options, value=start if start is not None else Select.NULL,
                                     prompt="version", id="diff-from")
                        yield Label(" to ", classes="diff-label")
                        yield Select(options, value=end if end is not None else Select.NULL,
                                     prompt="version", id="diff-to")
                    with VerticalScroll(id="diff-view"):
                        yield Static("", id="diff-text", markup=False)
                with TabPane("Session", id="tab-session"):
                    yield Static(visible(self._session_text()), markup=False,
                                 id="attempt-session")
            with Horizontal(id="attempt-buttons"):
                yield Button("Resume this session \\[r]", id="resume", variant="primary")
                yield Button("Close \\[esc]", id="close")
            yield NoticeLine(id="notices")
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
        self.show_diff()

    def show_diff(self) -> None:
        """The unified diff between the versions picked as "from" and "to"."""
        start = self.query_one("#diff-from", Select).value
        end = self.query_one("#diff-to", Select).value
        view = self.query_one("#diff-text", Static)
        self.diff_text = ""
        if not isinstance(start, int) or not isinstance(end, int):
            view.update("This session kept no version to compare." if not self.versions
                        else f"v{next(iter(self.versions))} is this session's only version: "
                             "nothing to compare." if len(self.versions) == 1
                        else "Pick a version to compare from and one to compare to.")
            return
        if start == end:
            view.update(f"v{start} is compared with itself: pick another \"from\" version."
                        if len(self.versions) > 1 else
                        f"v{start} is this session's only version: nothing to compare.")
            return
        old = read_version(self.workspace, self.versions[start])
        new = read_version(self.workspace, self.versions[end])
        self.diff_text = version_diff(old, new)
        if not self.diff_text:
            view.update(f"v{start} and v{end} are the same.")
            return
        from textual.highlight import highlight

        view.update(highlight(self.diff_text, language="diff", path="changes.diff"))

    @on(Select.Changed, "#diff-from, #diff-to")
    def _pick_changed(self) -> None:
        self.show_diff()

    def action_show_diff(self) -> None:
        self.query_one("#attempt-tabs", TabbedContent).active = "tab-diff"
        self.query_one("#diff-from", Select).focus()

    @on(Button.Pressed, "#close")
    def _close(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#resume")
    def action_resume(self) -> None:
        self.dismiss(int(self.session_row["id"]))
