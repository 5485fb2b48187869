"""The code pane: the current version's files, a tab each, highlighted by Pygments.

Three views of the same files: the code, a unified diff against the previous
version (what the model changed is what the user must judge), and an inline
editor. The pane only displays and collects edits; deciding what an edit
means is the loop's job.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from textual.containers import VerticalScroll
from textual.content import Content
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from verifybot_tui.core.base.ansi import one_line, visible
from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.tui.keys import CODE_BINDINGS, EDIT_BINDINGS
from verifybot_tui.tui.widget_message import WidgetMessage


def unified_diff(old: list[ProgramFile], new: list[ProgramFile]) -> str:
    """One unified diff over every file, matched by name; empty if nothing changed."""
    before = {f.name: f for f in old}
    parts: list[str] = []
    for f in new:
        prev = before.pop(f.name, None)
        a = prev.content.splitlines(keepends=True) if prev else []
        parts.extend(difflib.unified_diff(
            a, f.content.splitlines(keepends=True),
            fromfile=prev.saved_name if prev else "/dev/null", tofile=f.saved_name))
    for prev in before.values():
        parts.extend(difflib.unified_diff(prev.content.splitlines(keepends=True), [],
                                          fromfile=prev.saved_name, tofile="/dev/null"))
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts)


def tree_mark(how: str) -> str:
    """A tab's note on how the answer made its file: unchanged (carried from the last
    run) or the edit form; nothing for a whole file."""
    if how == "carried":
        return " (unchanged)"
    return f" ({how})" if how and how != "whole" else ""


def shown_code(code: str) -> str:
    """Code as the pane shows it: an answer's code may hold raw escapes (OSC 52, a screen
    clear, a title) that a terminal would act on, so every control but tab and newline
    is shown escaped, as everywhere else in the app. A CRLF line end is a line end."""
    return visible(code.replace("\r\n", "\n"))


def _highlighted(code: str, language: str, path: str) -> Static:
    from textual.highlight import highlight  # Pygments: loaded with the first code shown

    code = shown_code(code)  # before the lexer, so the plain fallback is escaped too
    try:
        content = highlight(code, language=language or None, path=path)
    except Exception:  # an unknown lexer: plain text is still readable
        content = code
    return Static(content, markup=False, classes="code-text", expand=True)


class CodePane(Widget):
    """Tabs of files; ``mode`` is "code", "diff" or "edit"."""

    BINDINGS = EDIT_BINDINGS + CODE_BINDINGS
    wrap: var[bool] = var(False, toggle_class="-wrap")  # code reads best unwrapped; w wraps it

    @dataclass
    class EditEnded(WidgetMessage["CodePane"]):
        """The inline editor closed: ``kept`` says whether its changes stay."""

        kept: bool

    DEFAULT_CSS = """
    CodePane {
        height: 1fr;
        & TabbedContent { height: 1fr; }
        & TabPane { padding: 0; height: 1fr; }
        & VerticalScroll { height: 1fr; }
        & .code-text { width: auto; min-width: 100%; padding: 0 1; text-wrap: nowrap; }
        &.-wrap .code-text { width: 100%; text-wrap: wrap; }
        & TextArea, & TextArea:focus { height: 1fr; border: none; }
        & #code-empty { color: $text-muted; padding: 1 2; }
    }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.files: list[ProgramFile] = []
        self.previous: list[ProgramFile] = []
        self.entry = ""
        self.mode = "code"
        self.edits: dict[str, str] = {}  # file name -> content changed by the user
        # How the answer made each file of the project tree ("carried": unchanged).
        self.how: dict[str, str] = {}

    def compose(self):
        if not self.files:
            yield Static("No code yet. Type a prompt below and press Enter.", id="code-empty")
            return
        # Imported when there is code to show: the first frame does without them.
        from textual.widgets import TabbedContent, TabPane, TextArea

        if self.mode == "diff":
            # After an edit: the LLM's version against the edit; else the previous version.
            before = self.files if self.edits else self.previous
            diff = unified_diff(before, self.current_files()) if before else ""
            carried = [f.name for f in self.files if self.how.get(f.name) == "carried"]
            with VerticalScroll(id="code-diff"):
                if carried and not self.edits:
                    yield Static(Content("Unchanged, carried from the last run: "
                                         + ", ".join(one_line(n) for n in carried)),
                                 id="code-diff-carried")
                if diff and self.edits:
                    yield Static("Your edit against the LLM's version:", id="code-diff-what")
                    yield _highlighted(diff, "diff", "changes.diff")
                elif diff:
                    yield _highlighted(diff, "diff", "changes.diff")
                elif self.previous:
                    yield Static("No changes from the previous version.", id="code-empty")
                else:
                    yield Static("There is no previous version to compare with.",
                                 id="code-empty")
            return
        with TabbedContent(id="code-tabs"):
            for i, f in enumerate(self.current_files()):
                mark = "▶ " if f.name == self.entry else ""
                edited = " *" if f.name in self.edits else ""
                # A file name comes from the LLM: plain text, escapes shown, never markup.
                title = Content(f"{mark}{one_line(f.saved_name)}{edited}"
                                f"{tree_mark(self.how.get(f.name, ''))}")
                with TabPane(title, id=f"file-{i}"):
                    if self.mode == "edit":
                        yield TextArea(shown_code(f.content), id=f"edit-{i}",
                                       show_line_numbers=True, soft_wrap=self.wrap,
                                       tab_behavior="indent", classes="code-editor")
                    else:
                        with VerticalScroll():
                            yield _highlighted(f.content, f.language, f.name)

    def current_files(self) -> list[ProgramFile]:
        """The files with the user's edits applied."""
        return [ProgramFile(f.name, f.saved_name, self.edits.get(f.name, f.content), f.language)
                for f in self.files]

    async def show_files(self, files: list[ProgramFile], entry: str = "",
                         previous: list[ProgramFile] | None = None,
                         how: dict[str, str] | None = None) -> None:
        self.files = list(files)
        self.entry = entry
        self.previous = list(previous or [])
        self.how = dict(how or {})
        self.edits = {}
        self.mode = "code"
        await self.recompose()

    async def set_mode(self, mode: str) -> None:
        if self.mode == "edit" and mode != "edit":
            self.collect_edits()
        self.mode = mode
        await self.recompose()
        if mode == "edit":
            areas = self.query(".code-editor")
            if areas:
                areas.first().focus()

    async def toggle_diff(self) -> None:
        await self.set_mode("code" if self.mode == "diff" else "diff")

    def collect_edits(self) -> dict[str, str]:
        """Read the editors back into ``edits``; return every changed file."""
        if self.mode == "edit":
            for i, f in enumerate(self.current_files()):
                area = self.query(f"#edit-{i}")
                # An editor left as shown changes nothing (its escapes stay what they were).
                if area and (text := area.first().text) != shown_code(f.content):
                    if text != self.files[i].content:
                        self.edits[f.name] = text
                    else:
                        self.edits.pop(f.name, None)
        return dict(self.edits)

    async def set_content(self, name: str, content: str) -> bool:
        """A file changed outside (an editor): keep it as an edit; False if unknown."""
        for f in self.files:
            if f.name == name:
                if content == f.content:
                    self.edits.pop(name, None)
                else:
                    self.edits[name] = content
                await self.recompose()
                return True
        return False

    def active_file(self) -> ProgramFile | None:
        """The file of the selected tab (the entry when there are no tabs)."""
        files = self.current_files()
        if not files:
            return None
        tabs = self.query("#code-tabs")
        if tabs and tabs.first().active:
            index = int(tabs.first().active.removeprefix("file-"))
            return files[index]
        return next((f for f in files if f.name == self.entry), files[0])

    def on_mount(self) -> None:
        if getattr(self.app, "ui_state", {}).get("wrap_code") is True:
            self.wrap = True

    def action_toggle_wrap(self) -> None:
        self.wrap = not self.wrap
        remember = getattr(self.app, "save_ui_choice", None)  # VerifyBotApp's state file
        if remember is not None:
            remember("wrap_code", self.wrap)

    def watch_wrap(self, wrap: bool) -> None:
        for area in self.query(".code-editor"):
            area.soft_wrap = wrap

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("save_edit", "cancel_edit", "editor_edge"):
            return self.mode == "edit"
        return True

    def action_editor_edge(self, edge: str, select: bool = False) -> None:
        """ctrl+home / ctrl+end in the inline editor (TextArea has no binding for them)."""
        from textual.widgets import TextArea

        area = self.screen.focused
        if not isinstance(area, TextArea) or not area.has_class("code-editor"):
            editors = self.query(".code-editor")
            if not editors:
                return
            area = editors.first()
        if not isinstance(area, TextArea):
            return
        where = (0, 0) if edge == "start" else area.document.end
        area.move_cursor(where, select=select)

    async def action_save_edit(self) -> None:
        await self.set_mode("code")
        self.post_message(self.EditEnded(self, kept=True))

    async def action_cancel_edit(self) -> None:
        self.mode = "code"  # leaving without collecting: the editors' text is dropped
        await self.recompose()
        self.post_message(self.EditEnded(self, kept=False))
