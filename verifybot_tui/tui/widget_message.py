"""The base of the messages our widgets post about themselves.

Textual routes ``@on(Kind.Message, "#id")`` by the message's ``control``; each widget
message used to declare its own field and ``control`` property for that. One generic
base keeps it to the fields that differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from textual.message import Message
from textual.widget import Widget

W = TypeVar("W", bound=Widget)


@dataclass
class WidgetMessage(Message, Generic[W]):
    """A message about ``widget``, which is also its ``control``."""

    widget: W

    @property
    def control(self) -> W:
        return self.widget
