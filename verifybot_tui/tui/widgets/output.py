"""The execution pane: live program output, bounded, colours kept, escapes removed.

A line-API widget (like Textual's Log) so only the visible lines are ever
rendered: a program writing a million lines costs a split and a deque append
per line, and the screen redraws at most once per flush.
"""

from __future__ import annotations

from collections import deque

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from verifybot_tui.tui.ansi import render_line, sanitize_line, strip_sgr
from verifybot_tui.tui.output_buffer import OutputBuffer

FLUSH_INTERVAL = 1 / 20


class OutputPane(ScrollView, can_focus=True):
    """Shows what the buffer holds; the loop's worker fills the buffer."""

    COMPONENT_CLASSES = {
        "output-pane--stderr",
        "output-pane--rule",
        "output-pane--note",
        "output-pane--dropped",
    }

    DEFAULT_CSS = """
    OutputPane {
        background: $surface;
        & > .output-pane--stderr { color: $error; }
        & > .output-pane--rule { color: $accent; text-style: bold; }
        & > .output-pane--note { color: $text-muted; text-style: italic; }
        & > .output-pane--dropped { color: $text-muted; text-style: italic; }
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
        self._cache: LRUCache[tuple[int, int], Strip] = LRUCache(1024)
        self._styles: dict[str, Style] = {}

    def on_mount(self) -> None:
        self.set_interval(FLUSH_INTERVAL, self.flush, name="output-flush")

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._cache.clear()

    @property
    def lines(self) -> list[str]:
        """The visible text of every kept line (tests and copying)."""
        kept = [strip_sgr(text) for _, text in self._lines]
        kept.extend(strip_sgr(sanitize_line(p)) for p in self._partial.values() if p)
        return kept

    def clear(self) -> None:
        self.buffer.drain()
        self._lines.clear()
        self._partial.clear()
        self.dropped = self.total_lines = self._width = 0
        self._cache.clear()
        self.virtual_size = Size(0, 0)
        self.refresh()

    def flush(self) -> None:
        """Move everything pending in the buffer onto the screen, once."""
        ops = self.buffer.drain()
        if not ops:
            return
        at_end = self.is_vertical_scroll_end or self.max_scroll_y == 0
        new: list[tuple[str, str]] = []
        for kind, text in ops:
            if kind in ("rule", "note"):
                self._end_partials(new)
                new.append((kind, text))
                continue
            pieces = (self._partial.pop(kind, "") + text).split("\n")
            self._partial[kind] = pieces.pop()
            new.extend((kind, line) for line in pieces)
        self._add(new)
        self.virtual_size = Size(self._width, self._line_count)
        if at_end:
            self.scroll_end(animate=False, immediate=True, x_axis=False)
        self.refresh()

    def finish(self) -> None:
        """The run ended: a last line without a newline becomes a line."""
        self.flush()
        new: list[tuple[str, str]] = []
        self._end_partials(new)
        if new:
            self._add(new)
            self.virtual_size = Size(self._width, self._line_count)
            self.refresh()

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
            line = raw if kind in ("rule", "note") else sanitize_line(raw)
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
            if kind in ("stderr", "rule", "note", "dropped"):
                # Not partial: a muted colour is an alpha, blended over the background.
                style = self.get_component_rich_style(f"output-pane--{kind}")
            else:
                style = Style()
            self._styles[kind] = style
        return style

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self.rich_style
        index = scroll_y + y
        if self.dropped:
            if index == 0:
                text = Text(f"… {self.dropped:,} earlier lines not shown; the full output "
                            "is saved under outputs/", end="")
                text.stylize(self._style("dropped"))
                return self._strip(text, base, scroll_x, width)
            index -= 1
        if index < len(self._lines):
            key = (self.dropped + index, scroll_x)
            strip = self._cache.get(key)
            if strip is None:
                kind, line = self._lines[index]
                strip = self._strip(self._text(kind, line), base, scroll_x, width)
                self._cache[key] = strip
            return strip
        partials = [(k, p) for k, p in self._partial.items() if p]
        index -= len(self._lines)
        if index < len(partials):
            kind, raw = partials[index]
            return self._strip(self._text(kind, sanitize_line(raw)), base, scroll_x, width)
        return Strip.blank(width, base)

    def _text(self, kind: str, line: str) -> Text:
        if kind in ("rule", "note"):
            text = Text(f"── {line} ──" if kind == "rule" else line, end="")
            text.stylize(self._style(kind))
            return text
        return render_line(line, self._style(kind) if kind == "stderr" else "")

    def _strip(self, text: Text, base: Style, scroll_x: int, width: int) -> Strip:
        segments = list(text.render(self.app.console))
        strip = Strip(segments).apply_style(base) if segments else Strip([Segment("")])
        return strip.crop_extend(scroll_x, scroll_x + width, base)
