"""The history side pane: past sessions and their attempts, with status marks.

It only lists and reports selections; showing an attempt and resuming a
session are the screen's business, so the pane stays a plain view of rows
handed to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.markup import escape
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from verifybot_tui.core.store.history import kept_success, unanswered
from verifybot_tui.tui.keys import HISTORY_BINDINGS
from verifybot_tui.tui.widget_message import WidgetMessage
from verifybot_tui.tui.widgets.compare_table import short

MARKS = {
    "VERIFIED": "✔", "PASSED": "✔", "SUCCESS": "✔", "FAILED": "✘", "STOPPED": "■",
    "RUNNING": "●", "PENDING": "…", "LLM_ERROR": "⚠", "TARGET_ERROR": "⚠", "ERROR": "⚠",
    "INTERRUPTED": "◌", "REJECTED": "↺",
}
# What a status reads as in the pane, where the bare word would mislead.
WORDS = {"STOPPED": "stopped by you", "REJECTED": "rejected"}


def mark(status: str | None) -> str:
    return MARKS.get((status or "").upper(), "·")


def word(status: str | None) -> str:
    status = (status or "").upper()
    return WORDS.get(status, status.lower().replace("_", " "))


def _first_line(text: str | None, width: int = 50) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[:width - 1] + "…"


@dataclass
class Row:
    session: dict[str, Any]
    attempt: dict[str, Any] | None = None
    prompt: dict[str, Any] | None = None  # a follow-up the user typed in this session


class HistoryPane(Tree[Row]):
    """Sessions newest first; expand one to see its attempts and follow-ups.

    ``/`` filters the sessions by text (prompt, follow-ups, reject notes),
    status and target, typed straight into the pane as in less or vim:
    Enter keeps the filter, Esc clears it. ``compare:ID`` shows one comparison's
    cells instead (each ran in its own workspace, so they are rows of their own).
    """

    BINDINGS: list[Binding] = HISTORY_BINDINGS

    @dataclass
    class Picked(WidgetMessage["HistoryPane"]):
        """A session or an attempt was chosen (enter or click)."""

        row: Row

    @dataclass
    class ResumeRequested(WidgetMessage["HistoryPane"]):
        """Go on with the session under the cursor (the resume key)."""

        session: dict[str, Any]

    MIN_WIDTH = 20
    STEP = 4  # columns per + or -
    KEEP_FOR_WORK = 40  # columns the panes beside it keep, however wide it is dragged

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(Text("History"), id=id, classes=classes)  # Text: no markup to parse
        self._dragging = False
        self._dragged = False  # the click that ends a drag selects nothing
        self.show_root = False
        self.guide_depth = 2
        self.filter_text = ""
        self.filtering = False  # keys go into the filter
        self._sessions: list[dict[str, Any]] = []
        self._attempts: dict[int, list[dict[str, Any]]] = {}
        self._prompts: dict[int, list[dict[str, Any]]] = {}
        self._comparisons: dict[int, dict[str, Any]] = {}

    def show_sessions(self, sessions: list[dict[str, Any]],
                      attempts: dict[int, list[dict[str, Any]]],
                      prompts: dict[int, list[dict[str, Any]]] | None = None) -> None:
        """Keep the rows and show those the filter lets through."""
        self._sessions = list(sessions)
        self._attempts = dict(attempts)
        self._prompts = dict(prompts or {})
        self._rebuild()

    def show_comparisons(self, rows: list[dict[str, Any]]) -> None:
        """The comparisons history.db keeps (``History.comparisons``), for ``compare:ID``."""
        self._comparisons = {int(r["id"]): r for r in rows}
        if compare_filter(self.filter_text) is not None:
            self._rebuild()

    @property
    def comparison_ids(self) -> list[int]:
        return sorted(self._comparisons, reverse=True)

    def matches(self, s: dict[str, Any]) -> bool:
        """Every word of the filter is in the session's text, status or target."""
        words = self.filter_text.lower().split()
        if not words:
            return True
        parts = [str(s.get(k) or "") for k in ("slug", "prompt", "status", "target", "llm")]
        parts.append(word(s.get("status")))
        parts.append(f"{kept_success(s)} {unanswered(s)}")
        parts.extend(f"{p.get('text') or ''}" for p in self._prompts.get(s["id"], []))
        for a in self._attempts.get(s["id"], []):
            parts.extend(str(a.get(k) or "") for k in ("note", "status", "decision", "reason"))
        hay = "\n".join(parts).lower()
        return all(w in hay for w in words)

    def _rebuild(self) -> None:
        """Rebuild the tree; sessions expanded before stay expanded."""
        open_ids = {n.data.session["id"] for n in self.root.children
                    if n.data is not None and n.is_expanded}
        cursor = self.cursor_node.data if self.cursor_node is not None else None
        self.clear()
        wanted = compare_filter(self.filter_text)
        if wanted is not None:
            self._show_comparison(wanted)
            return
        shown = [s for s in self._sessions if self.matches(s)]
        self._show_filter(len(shown))
        if not self._sessions:
            self.root.add_leaf(Text("No sessions yet"))
            return
        if not shown:
            self.root.add_leaf(Text(f"No session matches {self.filter_text!r} (Esc clears)"))
            return
        for s in shown:
            # Text, not a markup string: slugs and target names are outside text.
            label = Text(f"{mark(s.get('status'))} #{s['id']} {s.get('slug') or ''} ")
            label.append(f"({s.get('target')}, {_tries(s.get('attempts') or 0)})", style="dim")
            status = (s.get("status") or "").upper()
            kept, why = kept_success(s), unanswered(s)
            if status == "STOPPED":
                label.append(" stopped by you", style="dim")
            elif why:
                # Nothing reached the LLM (the target or the LLM was down): not a failure.
                label.append(f" {why}", style="dim")
            if kept:
                # A success stays a success: a later follow-up that failed does not hide it.
                label.append(f" ✔ {kept.lower()}, then follow-up {word(status)}",
                             style="green")
            node = self.root.add(label, data=Row(s), expand=s["id"] in open_ids)
            self._add_children(node, s)
        if cursor is not None:
            self._restore_cursor(cursor)

    def _show_comparison(self, wanted: str) -> None:
        """``compare:ID``: that comparison, and under it its cells (recipe x LLM, verdict,
        the session in the cell's own workspace)."""
        row = self._comparisons.get(int(wanted)) if wanted.isdigit() else None
        cells = row["cell_rows"] if row is not None else []
        self._show_filter(len(cells), f"{len(cells)} cell(s)")
        if row is None:
            known = ", ".join(str(i) for i in self.comparison_ids) or "none yet"
            self.root.add_leaf(Text(f"No comparison {wanted!r}; known: {known} (Esc clears)"))
            return
        note = ", interrupted" if row.get("interrupted") else ""
        head = Text(f"compare {row['id']} {row.get('started') or ''} ")
        head.append(f"({row['verified']} of {row['cells']} verified{note})", style="dim")
        node = self.root.add(head, expand=True)
        for c in cells:
            at = f" at {c['verified_at']}" if c.get("verified_at") else ""
            label = Text(f"{mark(c.get('status'))} {c['recipe']} x {short(c['llm'], 24)} "
                         f"#{c['run']}: "
                         f"{c.get('status')}{at} ")
            label.append(f"(session {c.get('session')} in {c.get('workspace')})", style="dim")
            node.add_leaf(label)
        self.root.add_leaf(Text(f"report: {row.get('out_dir')}", style="dim"))

    def render_label(self, node: TreeNode[Row], base_style: Style, style: Style) -> Text:
        """A row longer than the pane ends in an ellipsis, not mid-word at the edge
        ("(local, 2 tri" at 80 columns)."""
        text = super().render_label(node, base_style, style)
        depth = 0
        parent = node.parent
        while parent is not None and parent is not self.root:
            depth, parent = depth + 1, parent.parent
        room = self.scrollable_content_region.width - (depth + 1) * self.guide_depth
        if room > 8 and text.cell_len > room:
            text.truncate(room, overflow="ellipsis")
        return text

    def _add_children(self, node: TreeNode[Row], s: dict[str, Any]) -> None:
        """Attempts in order, each follow-up prompt before the attempts it led to."""
        items: list[tuple[float, int, dict[str, Any], bool]] = []
        for a in self._attempts.get(s["id"], []):
            key = a.get("prompt_id")
            items.append((float(key) if key is not None else float("inf"), a.get("n") or 0,
                          a, False))
        for p in self._prompts.get(s["id"], []):
            if p.get("kind") == "free":
                items.append((p["id"] - 0.5, 0, p, True))
        for _, _, item, is_prompt in sorted(items, key=lambda t: (t[0], t[1])):
            if is_prompt:
                node.add_leaf(Text(f"» follow-up: {_first_line(item.get('text'))}",
                                   style="italic"), data=Row(s, prompt=item))
            else:
                self._add_attempt(node, s, item)

    def _add_attempt(self, node: TreeNode[Row], s: dict[str, Any], a: dict[str, Any]) -> None:
        status = a.get("status") or ""
        code = a.get("exit_code")
        extra = f" exit {code}" if code is not None else ""
        decision = a.get("decision") or ""
        what = word(status)
        if decision == "reject":  # the note the LLM was given, in the entry itself
            note = _first_line(a.get("note"), 60)
            what = f"rejected, note: {note}" if note else "rejected (no note)"
        elif decision == "edit":
            extra += " (your edit)"
        elif decision and decision not in ("accept", "stop"):
            extra += f" {decision}"
        label = Text(f"{mark(status)} attempt {a.get('n')}: {what}{extra}")
        node.add_leaf(label, data=Row(s, a))

    def _restore_cursor(self, row: Row) -> None:
        def key(r: Row) -> tuple[Any, ...]:
            return (r.session["id"], r.attempt["id"] if r.attempt else None,
                    r.prompt["id"] if r.prompt else None)

        want = key(row)

        def visit(node: TreeNode[Row]) -> bool:
            d = node.data
            if d is not None and key(d) == want:
                self.move_cursor(node)
                return True
            return any(visit(c) for c in node.children)

        visit(self.root)

    # -- the filter ---------------------------------------------------------------------

    def _show_filter(self, shown: int, count: str = "") -> None:
        """The filter, as typed, on the pane's bottom border."""
        if self.filtering or self.filter_text:
            cursor = "▏" if self.filtering else ""
            self.border_subtitle = escape(f"/{self.filter_text}{cursor} "
                                          f"{count or f'{shown} of {len(self._sessions)}'}")
        else:
            self.border_subtitle = "/ filters"

    def action_filter(self) -> None:
        """Start a new filter (as / starts a new search in less)."""
        self.filtering = True
        self.set_filter("")

    def set_filter(self, text: str) -> None:
        self.filter_text = text
        self._rebuild()

    async def _on_key(self, event: events.Key) -> None:
        if self.filtering:
            # Typing a filter: every key is text, not a tree command, until Enter or Esc.
            event.prevent_default()
            event.stop()
            if event.key == "escape":
                self.filtering = False
                self.set_filter("")
            elif event.key == "enter":
                self.filtering = False
                self._rebuild()
            elif event.key == "backspace":
                self.set_filter(self.filter_text[:-1])
            elif event.is_printable and event.character:
                self.set_filter(self.filter_text + event.character)
            return
        if event.key == "escape" and self.filter_text:
            event.prevent_default()
            event.stop()
            self.set_filter("")
            return
        await super()._on_key(event)

    # -- its width: + and -, or a drag of the right edge; kept in the UI state file --------

    def on_mount(self) -> None:
        width = getattr(self.app, "ui_state", {}).get("history_width")
        if isinstance(width, int) and not isinstance(width, bool):
            self.set_width(width, remember=False)

    def set_width(self, width: int, *, remember: bool = True) -> int:
        """Make the pane ``width`` columns wide (within bounds); remember it if asked."""
        # Beside the panes it leaves them KEEP_FOR_WORK columns; as the overlay of small
        # screens (drawn over them) it may cover all but a few.
        keep = 4 if self.styles.layer == "overlay" else self.KEEP_FOR_WORK
        room = self.screen.size.width - keep if self.is_mounted else width
        width = max(self.MIN_WIDTH, min(width, max(room, self.MIN_WIDTH)))
        self.styles.width = width
        if remember:
            save = getattr(self.app, "save_ui_choice", None)  # VerifyBotApp's state file
            if save is not None:
                save("history_width", width)
        return width

    def action_wider(self) -> None:
        self.set_width(self.outer_size.width + self.STEP)

    def action_narrower(self) -> None:
        self.set_width(self.outer_size.width - self.STEP)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if event.x >= self.outer_size.width - 1:  # the right border: start a drag
            self._dragging = True
            self._dragged = False
            self.capture_mouse()
            event.stop()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self._dragging and not event.button:
            # No button held: the release went elsewhere (a whole drag read at once is
            # routed before this pane has taken the mouse). End it, or the pane would
            # follow a mouse that only hovers.
            self._dragging = False
            self.capture_mouse(False)
            event.stop()
            return
        if self._dragging:
            self._dragged = True
            self.set_width(event.screen_x - self.region.x + 1, remember=False)
            event.stop()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        if self._dragging:
            self._dragging = False
            self.capture_mouse(False)
            if self._dragged:  # where the edge was let go: the last move's layout may be
                # still to come, so the pane's own size can be a move behind
                self.set_width(event.screen_x - self.region.x + 1)
            event.stop()

    async def _on_click(self, event: events.Click) -> None:
        if self._dragged or event.x >= self.outer_size.width - 1:
            self._dragged = False
            event.prevent_default()
            event.stop()
            return
        await super()._on_click(event)

    def on_tree_node_selected(self, event: Tree.NodeSelected[Row]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.Picked(self, event.node.data))

    def action_resume(self) -> None:
        node = self.cursor_node
        if node is not None and node.data is not None:
            self.post_message(self.ResumeRequested(self, node.data.session))
        else:
            self.notify("No session is selected: pick one with the arrow keys or a click, "
                        "then r resumes it." if self._sessions else
                        "No session to resume yet: send a prompt first.", severity="warning")


def compare_filter(text: str) -> str | None:
    """The ID of a ``compare:ID`` filter (as typed so far), or None for a text filter."""
    text = text.strip()
    return text[8:].strip() if text.lower().startswith("compare:") else None


def _tries(n: int) -> str:
    return "1 try" if n == 1 else f"{n} tries"
