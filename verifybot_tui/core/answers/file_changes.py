"""The value types of a change to a conversation's project tree (tree_changes).

Kept apart so that the readers of each edit form (tree_edits and the modules it
calls) and :mod:`tree_changes` share them without importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileChange:
    """One file the answer changes, with its whole new text."""

    path: str  # posix relative path in the project tree
    how: str  # "whole" | "search-replace" | "diff" | "function" | "elided" | "removed" | "renamed"
    text: str | None  # the file's full new text; None when removed
    renamed_from: str = ""
    line: int = 0  # the answer line of the (last) block or sentence that made it, 0 if none


@dataclass(frozen=True)
class EditProblem:
    """An edit that could not be applied unambiguously, told in one sentence."""

    path: str
    message: str  # one sentence for the LLM, e.g. "its SEARCH part is not in main.py"
    line: int = 0  # the answer line of the block
