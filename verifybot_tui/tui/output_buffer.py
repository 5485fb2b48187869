"""Where a run's output waits between the loop's worker and the output pane.

A flood of output must not become a flood of Messages: the worker appends
chunks here (a plain list append, no widget touched) and the pane drains the
whole backlog on a short timer, so the cost per frame stays bounded however
fast the program writes.
"""

from __future__ import annotations


class OutputBuffer:
    """Pending output operations, in order: run headers and (stream, text) chunks."""

    def __init__(self) -> None:
        self._ops: list[tuple[str, str]] = []
        self.chunks = 0

    def run_started(self, title: str) -> None:
        """A header line that separates one run's output from the last."""
        self._ops.append(("rule", title))

    def note(self, text: str) -> None:
        """A line from VerifyBot itself (exit status, timeout), styled apart."""
        self._ops.append(("note", text))

    def add(self, stream: str, text: str) -> None:
        if text:
            self._ops.append((stream, text))
            self.chunks += 1

    def drain(self) -> list[tuple[str, str]]:
        ops, self._ops = self._ops, []
        return ops

    def __len__(self) -> int:
        return len(self._ops)
