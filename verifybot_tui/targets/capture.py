"""Bounded capture of a program's output, shared by the local and SSH targets.

The full output still streams to the loop (and from there to ``outputs/``);
what a target keeps in memory for the ``RunResult`` is only a head and a tail,
so a program that floods its output cannot exhaust memory.
"""

from __future__ import annotations


class OutputCapture:
    """Keeps the head and tail of a stream so a flood cannot exhaust memory.

    The full output still reaches the caller through the callback (and from
    there ``outputs/``); this is what the verdict and the feedback prompt read.
    """

    def __init__(self, limit: int = 256 * 1024) -> None:
        self.limit = limit
        self.head: list[str] = []
        self.head_len = 0
        self.tail: list[str] = []
        self.tail_len = 0
        self.total = 0

    def add(self, text: str) -> None:
        self.total += len(text)
        if self.head_len < self.limit:
            room = self.limit - self.head_len
            self.head.append(text[:room])
            self.head_len += len(text[:room])
            text = text[room:]
            if not text:
                return
        self.tail.append(text)
        self.tail_len += len(text)
        while self.tail_len > self.limit and len(self.tail) > 1:
            self.tail_len -= len(self.tail.pop(0))

    @property
    def text(self) -> str:
        head = "".join(self.head)
        tail = "".join(self.tail)
        kept = len(head) + len(tail)
        if kept >= self.total:
            return head + tail
        cut = self.total - kept
        return f"{head}\n[... {cut} characters cut ...]\n{tail}"
