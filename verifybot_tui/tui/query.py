"""Typed getters for a screen's panes: ``status_bar = Child("#status", StatusBar)``.

A property per pane (``return self.query_one("#status", StatusBar)``) said the same
thing eight times; this descriptor says it once and keeps the type for the checker.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, overload

from textual.dom import DOMNode
from textual.widget import Widget

W = TypeVar("W", bound=Widget)


class Child(Generic[W]):
    """Reads as the one widget of ``kind`` that ``selector`` matches below the node."""

    def __init__(self, selector: str, kind: type[W]) -> None:
        self.selector = selector
        self.kind = kind

    @overload
    def __get__(self, node: None, owner: Any) -> Child[W]: ...

    @overload
    def __get__(self, node: DOMNode, owner: Any) -> W: ...

    def __get__(self, node: DOMNode | None, owner: Any) -> Child[W] | W:
        if node is None:
            return self
        return node.query_one(self.selector, self.kind)
