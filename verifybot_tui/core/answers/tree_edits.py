"""An answer's blocks applied to a project tree, one after the other, as a person
applies them: a whole file replaces, an edit changes the file as it stands so far.

Each edit form has its own reader (search_replace, udiff, splice, elisions); this
module picks the file each block means and keeps what was made and what failed.
"""

from __future__ import annotations

from collections.abc import Mapping

from verifybot_tui.core.answers.extract import CodeBlock, Extraction
from verifybot_tui.core.answers.file_changes import EditProblem, FileChange

Applied = tuple[list[FileChange], list[EditProblem], list[str]]


class _Work:
    """The tree as the answer's blocks so far leave it, and what they made."""

    def __init__(self, tree: Mapping[str, str]) -> None:
        self.tree = tree
        self.current: dict[str, str] = dict(tree)
        self.changes: list[FileChange] = []
        self.problems: list[EditProblem] = []
        self.notes: list[str] = []

    def put(self, path: str, how: str, text: str, line: int) -> None:
        """Record a change; a second edit of one file composes with the first (the
        change keeps the first form's name unless a whole file replaced it)."""
        earlier = next((i for i, c in enumerate(self.changes) if c.path == path), None)
        if earlier is not None:
            first = self.changes.pop(earlier)
            if how != "whole" and first.how not in ("whole", how):
                how = first.how if first.how != "removed" else how
        self.changes.append(FileChange(path, how, text, line=line))
        self.current[path] = text

    def problem(self, path: str, message: str, line: int) -> None:
        self.problems.append(EditProblem(path, message, line))


def apply_blocks(tree: Mapping[str, str], answer: str, ex: Extraction) -> Applied:
    """The changes the answer's blocks make to ``tree``, the problems, and notes."""
    work = _Work(tree)
    for block in ex.blocks:
        _apply_block(work, block)
    return work.changes, work.problems, work.notes


def _apply_block(work: _Work, block: CodeBlock) -> None:
    how = getattr(block, "how", "whole")
    if how == "not-a-file":
        return
    if how == "whole":
        if block.filename:
            work.put(block.filename, "whole", block.code, block.line)
        return
