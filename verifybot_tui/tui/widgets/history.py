"""The history side pane: past sessions and their attempts, with status marks.

It only lists and reports selections; showing an attempt and resuming a
session are the screen's business, so the pane stays a plain view of rows
handed to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from textual.binding import Binding
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from verifybot_tui.tui.keys import HISTORY_BINDINGS

MARKS = {
    "VERIFIED": "✔", "PASSED": "✔", "FAILED": "✘", "STOPPED": "■", "RUNNING": "●",
    "PENDING": "…", "LLM_ERROR": "⚠", "TARGET_ERROR": "⚠", "INTERRUPTED": "◌", "REJECTED": "↺",
}


def mark(status: str | None) -> str:
    return MARKS.get((status or "").upper(), "·")


@dataclass
class Row:
    session: dict[str, Any]
    attempt: dict[str, Any] | None = None


class HistoryPane(Tree[Row]):
    """Sessions newest first; expand one to see its attempts."""

    BINDINGS: list[Binding] = HISTORY_BINDINGS

    class Picked(Message):
        """A session or an attempt was chosen (enter or click)."""

        def __init__(self, pane: HistoryPane, row: Row) -> None:
            super().__init__()
            self.pane = pane
            self.row = row

        @property
        def control(self) -> HistoryPane:
            return self.pane

    class ResumeRequested(Message):
        def __init__(self, pane: HistoryPane, session: dict[str, Any]) -> None:
            super().__init__()
            self.pane = pane
            self.session = session

        @property
        def control(self) -> HistoryPane:
            return self.pane

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("History", id=id, classes=classes)
        self.show_root = False
        self.guide_depth = 2

    def show_sessions(self, sessions: list[dict[str, Any]],
                      attempts: dict[int, list[dict[str, Any]]]) -> None:
        """Rebuild the tree; sessions expanded before stay expanded."""
        open_ids = {n.data.session["id"] for n in self.root.children
                    if n.data is not None and n.is_expanded}
        cursor = self.cursor_node.data if self.cursor_node is not None else None
        self.clear()
        if not sessions:
            self.root.add_leaf("No sessions yet")
            return
        for s in sessions:
            label = (f"{mark(s.get('status'))} #{s['id']} {s.get('slug') or ''} "
                     f"[dim]({s.get('target')}, {s.get('attempts', 0)} tries)[/]")
            node = self.root.add(label, data=Row(s), expand=s["id"] in open_ids)
            for a in attempts.get(s["id"], []):
                self._add_attempt(node, s, a)
        if cursor is not None:
            self._restore_cursor(cursor)

    def _add_attempt(self, node: TreeNode[Row], s: dict[str, Any], a: dict[str, Any]) -> None:
        status = a.get("status") or ""
        code = a.get("exit_code")
        extra = f" exit {code}" if code is not None else ""
        decision = a.get("decision") or ""
        extra += f" {decision}" if decision and decision != "accept" else ""
        node.add_leaf(f"{mark(status)} attempt {a.get('n')}: {status.lower()}{extra}",
                      data=Row(s, a))

    def _restore_cursor(self, row: Row) -> None:
        want = (row.session["id"], row.attempt["id"] if row.attempt else None)

        def visit(node: TreeNode[Row]) -> bool:
            d = node.data
            if d is not None and (d.session["id"], d.attempt["id"] if d.attempt else None) == want:
                self.move_cursor(node)
                return True
            return any(visit(c) for c in node.children)

        visit(self.root)

    def on_tree_node_selected(self, event: Tree.NodeSelected[Row]) -> None:
        event.stop()
        if event.node.data is not None:
            self.post_message(self.Picked(self, event.node.data))

    def action_resume(self) -> None:
        node = self.cursor_node
        if node is not None and node.data is not None:
            self.post_message(self.ResumeRequested(self, node.data.session))
