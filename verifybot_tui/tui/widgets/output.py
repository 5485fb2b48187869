"""The execution pane: live program output, bounded, colours kept, escapes removed.

A line-API widget (like Textual's Log) so only the visible lines are ever
rendered: a program writing a million lines costs a split and a deque append
per line, and the screen redraws at most once per flush.

It follows the end while output arrives, as a terminal does, unless the user
scrolled up to read: then it stays put, counts what arrived meanwhile on its
last row ("N new lines - End to follow"), and End or scrolling back to the
bottom follows again. Following is a state of its own, not "is the view at
the end now", because a flush that grows the content moves the end away from
the view before the next check could see it.
"""

from __future__ import annotations

import bisect
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.markup import escape
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip

from verifybot_tui.core.base.ansi import PROGRAM_MARK, imitates_verifybot
from verifybot_tui.tui.ansi import render_line, sanitize_line, strip_sgr
from verifybot_tui.tui.keys import OUTPUT_BINDINGS
from verifybot_tui.tui.output_buffer import OutputBuffer

FLUSH_INTERVAL = 1 / 20
TITLE = "Output"


class OutputPane(ScrollView, can_focus=True):
    """Shows what the buffer holds; the loop's worker fills the buffer."""

    COMPONENT_CLASSES = {
        "output-pane--stderr",
        "output-pane--rule",
        "output-pane--note",
        "output-pane--dropped",
        "output-pane--marker",
    }

    BINDINGS: list[Binding] = OUTPUT_BINDINGS
    running: var[bool] = var(False, toggle_class="-running")  # a program's run is under way

    DEFAULT_CSS = """
    OutputPane {
        background: $surface;
        & > .output-pane--stderr { color: $error; }
        & > .output-pane--rule { color: $accent; text-style: bold; }
        & > .output-pane--note { color: $text-muted; text-style: italic; }
        & > .output-pane--dropped { color: $text-muted; text-style: italic; }
        & > .output-pane--marker { background: $warning; color: $text; text-style: bold; }
    }
    """

    def __init__(self, buffer: OutputBuffer, *, max_lines: int = 5000,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.buffer = buffer
        self.max_lines = max_lines
        # (kind, sanitized text): kind is stdout, stderr, rule or note.
        self._lines: deque[tuple[str, str]] = deque(maxlen=max_lines)
        self._partial: dict[str, str] = {}  # raw text after a stream's last newline
        self.dropped = 0  # lines pushed out by max_lines (all of them are in outputs/)
        self.total_lines = 0
        self._width = 0
        self._cache: LRUCache[tuple[int, int, int], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] = {}
        self.following = True  # keep the last line in view as output arrives
        self.unseen = 0  # lines that arrived while the user read further up
        self._scrolling = False  # a scroll of ours, not the user's
        self.wrap = False
        # With wrap on: the first screen row of each kept line (a running sum),
        # rebuilt when the width or the kept lines change.
        self._rows: list[int] = []
        self._rows_width = 0

    def on_mount(self) -> None:
        self.border_title = TITLE
        if getattr(self.app, "ui_state", {}).get("wrap_output") is True:
            self.set_wrap(True)
        self.set_interval(FLUSH_INTERVAL, self.flush, name="output-flush")

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    @property
    def lines(self) -> list[str]:
        """The visible text of every kept line (tests and copying)."""
        kept = [strip_sgr(text) for _, text in self._lines]
        kept.extend(strip_sgr(_program_line(k, p)[1]) for k, p in self._partial.items() if p)
        return kept

    def clear(self) -> None:
        self.buffer.drain()
        self._lines.clear()
        self._partial.clear()
        self.dropped = self.total_lines = self._width = 0
        self._cache.clear()
        self._rows = []
        self.unseen = 0
        self.following = True
        self.border_title = TITLE
        self.border_subtitle = ""
        self._set_virtual_size()
        self._scroll_to_end()
        self.refresh()

    def flush(self) -> None:
        """Move everything pending in the buffer onto the screen, once."""
        ops = self.buffer.drain()
        if not ops:
            return
        new: list[tuple[str, str]] = []
        for kind, text in ops:
            if kind in ("rule", "note"):
                self._end_partials(new)
                new.append((kind, text))
                if kind == "rule":  # a run starts: the pane names the run it shows
                    self.border_title = escape(f"{TITLE} — {text}")  # titles are markup
                continue
            pieces = (self._partial.pop(kind, "") + text).split("\n")
            self._partial[kind] = pieces.pop()
            new.extend((kind, line) for line in pieces)
        self._show(new)

    def finish(self) -> None:
        """The run ended: a last line without a newline becomes a line."""
        self.flush()
        new: list[tuple[str, str]] = []
        self._end_partials(new)
        if new:
            self._show(new)

    def _show(self, new: list[tuple[str, str]]) -> None:
        before = self.total_lines
        dropped = self.dropped
        self._add(new)
        self._set_virtual_size()
        if self.following:
            self._scroll_to_end()
            # A first long line brings a horizontal scrollbar with the next layout, which
            # takes a row from the view: scroll again once it is there.
            self.call_after_refresh(self._follow_after_layout)
        else:
            # Keep the lines being read where they are: the ones pushed out of the
            # top moved everything up by that many rows.
            shift = self.dropped - dropped
            if shift and not self.wrap:
                self._scroll_y(max(0, self.scroll_y - shift))
            self.unseen += self.total_lines - before
        self.refresh()

    def _set_virtual_size(self) -> None:
        if self.wrap:
            self._build_rows()
            self.virtual_size = Size(0, self._rows[-1] if self._rows else 0)
        else:
            self.virtual_size = Size(self._width, self._line_count)

    @contextmanager
    def _own_scroll(self) -> Iterator[None]:
        """Marks a scroll as ours, so watch_scroll_y does not take it for the user's."""
        self._scrolling = True
        try:
            yield
        finally:
            self._scrolling = False

    def _scroll_y(self, y: float) -> None:
        with self._own_scroll():
            self.scroll_to(y=y, animate=False, immediate=True)

    def _scroll_to_end(self) -> None:
        with self._own_scroll():
            self.scroll_end(animate=False, immediate=True, x_axis=False)

    def _follow_after_layout(self) -> None:
        if self.following and self.scroll_y < self.max_scroll_y:
            self._scroll_to_end()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._scrolling:
            return
        # The user moved: reading further up pauses following; the bottom resumes it.
        at_end = new_value >= self.max_scroll_y
        if at_end != self.following:
            self.following = at_end
            if at_end:
                self.unseen = 0
            self.refresh()

    def on_resize(self) -> None:
        if self.wrap:
            self._set_virtual_size()
        if self.following:
            self.call_after_refresh(self._scroll_to_end)

    def action_scroll_end(self) -> None:
        """End: back to the last line, and follow from here on."""
        self.follow()

    def follow(self) -> None:
        self.following = True
        self.unseen = 0
        self._scroll_to_end()
        self.refresh()

    def action_toggle_wrap(self) -> None:
        self.set_wrap(not self.wrap)
        remember = getattr(self.app, "save_ui_choice", None)  # VerifyBotApp's state file
        if remember is not None:
            remember("wrap_output", self.wrap)
        self.notify("Output lines wrap." if self.wrap else "Output lines run on; scroll "
                    "sideways to read them.")

    def set_wrap(self, wrap: bool) -> None:
        if wrap == self.wrap:
            return
        self.wrap = wrap
        self._cache.clear()
        self._rows = []
        self.scroll_to(x=0, animate=False, immediate=True)
        self._set_virtual_size()
        if self.following:
            self._scroll_to_end()
        self.refresh()

    def action_copy(self) -> None:
        """y: the kept output, as plain text, to the clipboard (OSC 52 in a terminal)."""
        text = "\n".join(self.lines)
        self.app.copy_to_clipboard(text)
        self.notify(f"Copied {len(self.lines):,} output lines.")

    def _build_rows(self) -> None:
        """Screen rows per kept line when wrapping: one per started width of cells."""
        width = max(1, self.scrollable_content_region.width or self.size.width or 80)
        rows = [0]
        total = 0
        items: list[str] = []
        if self.dropped:
            items.append(self._dropped_text())
        items.extend(strip_sgr(text) if kind not in ("rule",) else f"── {text} ──"
                     for kind, text in self._lines)
        items.extend(strip_sgr(_program_line(k, p)[1]) for k, p in self._partial.items() if p)
        for visible in items:
            cells = len(visible) if visible.isascii() else cell_len(visible)
            total += max(1, -(-cells // width))
            rows.append(total)
        self._rows = rows
        self._rows_width = width

    def _end_partials(self, new: list[tuple[str, str]]) -> None:
        for kind, text in self._partial.items():
            if text:
                new.append((kind, text))
        self._partial.clear()

    def _add(self, new: list[tuple[str, str]]) -> None:
        self.total_lines += len(new)
        if len(new) > self.max_lines:
            # They would scroll out of the deque at once: skip sanitizing them.
            self.dropped += len(new) - self.max_lines
            new = new[-self.max_lines:]
        overflow = len(self._lines) + len(new) - self.max_lines
        if overflow > 0:
            self.dropped += overflow
            self._cache.clear()
        width = self._width
        for kind, raw in new:
            kind, line = (kind, raw) if kind in ("rule", "note") else _program_line(kind, raw)
            self._lines.append((kind, line))
            visible = strip_sgr(line) if "\x1b" in line else line
            w = len(visible) if visible.isascii() else cell_len(visible)
            if w > width:
                width = w
        self._width = width

    @property
    def _line_count(self) -> int:
        extra = sum(1 for p in self._partial.values() if p)
        return len(self._lines) + extra + (1 if self.dropped else 0)

    def _style(self, kind: str) -> Style:
        style = self._styles.get(kind)
        if style is None:
            if kind in ("stderr", "rule", "note", "dropped", "marker"):
                # Not partial: a muted colour is an alpha, blended over the background.
                style = self.get_component_rich_style(f"output-pane--{kind}")
            else:
                style = Style()
            self._styles[kind] = style
        return style

    def _dropped_text(self) -> str:
        return (f"… {self.dropped:,} earlier lines not shown; the full output is saved "
                "under outputs/")

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self.rich_style
        if not self.following and self.unseen and y == self.size.height - 1:
            text = Text(f" ▼ {self.unseen:,} new lines - End to follow ", end="")
            text.stylize(self._style("marker"))
            return self._strip(text, base, 0, width)
        row = scroll_y + y
        if self.wrap:
            if not self._rows or row >= self._rows[-1]:
                return Strip.blank(width, base)
            index = bisect.bisect_right(self._rows, row) - 1
            part = row - self._rows[index]
            wrap_width = self._rows_width
            strip = self._line_strip(index, base, 0, wrap_width * (part + 1))
            return strip.crop_extend(wrap_width * part, wrap_width * (part + 1), base) \
                .crop_extend(0, width, base)
        return self._line_strip(row, base, scroll_x, width)

    def _line_strip(self, index: int, base: Style, scroll_x: int, width: int) -> Strip:
        """Line ``index`` of the kept lines (the dropped note first, if any), cropped."""
        if self.dropped:
            if index == 0:
                text = Text(self._dropped_text(), end="")
                text.stylize(self._style("dropped"))
                return self._strip(text, base, scroll_x, width)
            index -= 1
        if index < len(self._lines):
            key = (self.dropped + index, scroll_x, width)
            strip = self._cache.get(key)
            if strip is None:
                kind, line = self._lines[index]
                strip = self._strip(self._text(kind, line), base, scroll_x, width)
                self._cache[key] = strip
            return strip
        partials = [(k, p) for k, p in self._partial.items() if p]
        index -= len(self._lines)
        if 0 <= index < len(partials):
            kind, line = _program_line(*partials[index])
            return self._strip(self._text(kind, line), base, scroll_x, width)
        return Strip.blank(width, base)

    def _text(self, kind: str, line: str) -> Text:
        if kind == "imitation":  # the program's line, marked as such (see _program_line)
            text = Text(line, end="")
            text.stylize(self._style("marker"), 0, len(PROGRAM_MARK))
            return text
        if kind in ("rule", "note"):
            text = Text(f"── {line} ──" if kind == "rule" else line, end="")
            text.stylize(self._style(kind))
            return text
        return render_line(line, self._style(kind) if kind == "stderr" else "")

    def _strip(self, text: Text, base: Style, scroll_x: int, width: int) -> Strip:
        segments = list(text.render(self.app.console))
        strip = Strip(segments).apply_style(base) if segments else Strip([Segment("")])
        return strip.crop_extend(scroll_x, scroll_x + width, base)


def _program_line(kind: str, raw: str) -> tuple[str, str]:
    """A program's line as shown: sanitized; one that starts like VerifyBot's own lines
    (``[verifybot] VERIFIED``, a ``──`` rule) becomes kind "imitation", its colours
    dropped and ``[program]`` before it in the marker style, so it cannot pass for ours."""
    line = sanitize_line(raw)
    if imitates_verifybot(line):
        return "imitation", PROGRAM_MARK + strip_sgr(line)
    return kind, line
