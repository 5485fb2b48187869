"""What one answer does to a conversation's project tree: the files it replaces, adds,
edits, removes and renames, and the edits it could not apply.

A follow-up rarely resends the whole program: it sends the files it changed, edits
(SEARCH/REPLACE, diffs, one function, a block with "rest unchanged") and sentences
("delete `old.py`"). A careful person applies each to the files of the previous
attempt; so does :func:`plan_update`, and when an edit does not apply unambiguously
it says why instead of guessing (nothing may run then: the loop asks for the file).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from verifybot_tui.core.answers.edits.tree_edits import apply_blocks
from verifybot_tui.core.answers.edits.tree_sentences import removals_and_renames
from verifybot_tui.core.answers.extract import Extraction, extract
from verifybot_tui.core.answers.file_changes import EditProblem, FileChange
from verifybot_tui.core.answers.hints import confine_name

__all__ = ["EditProblem", "FileChange", "TreeUpdate", "plan_update"]


@dataclass(frozen=True)
class TreeUpdate:
    """The answer's changes to the tree; with problems, nothing of it may run."""

    changes: tuple[FileChange, ...]
    problems: tuple[EditProblem, ...]  # non-empty: nothing may run; ask for the whole file
    notes: tuple[str, ...]

    def apply(self, tree: Mapping[str, str]) -> dict[str, str]:
        """The new whole tree: ``tree`` with the changes made, in their order."""
        out = dict(tree)
        for change in self.changes:
            if change.renamed_from:
                out.pop(change.renamed_from, None)
            if change.text is None:
                out.pop(change.path, None)
            else:
                out[change.path] = change.text
        return out

    def changed(self, path: str) -> FileChange | None:
        """The last change made to ``path``, if any."""
        return next((c for c in reversed(self.changes) if c.path == path), None)


def plan_update(tree: Mapping[str, str], answer: str,
                ex: Extraction | None = None) -> TreeUpdate:
    """The changes ``answer`` makes to ``tree`` (the previous attempt's files, path ->
    text; empty for a new chat), as a careful person makes them.

    Named blocks replace, create or edit their files (edits applied to the file as
    it stands after the answer's earlier blocks, so two edits of one file compose);
    an unnamed block is in ``changes`` only when it edits or replaces a file of the
    tree that it names by its content (the only file with that function, say): an
    unnamed new program is named by whoever saves it (``program_files``). Files go
    only when the answer's prose says so ("delete `old.py`", "rename `a.py` to
    `b.py`").

    The blocks of ``ex`` are brought in line with the update: an unnamed block spliced
    into a tree file gets that file's name and ``how`` "function"; an unnamed elided
    block on an empty tree (nothing to merge it with) is "whole", saved as written.
    """
    ex = ex if ex is not None else extract(answer)
    tree = {_clean(p): t for p, t in tree.items()}
    changes, problems, notes = apply_blocks(tree, answer, ex)
    current = dict(tree)
    for change in changes:
        if change.text is not None:
            current[change.path] = change.text
    for kind, path, target, line in removals_and_renames(answer, current):
        if kind == "removed":
            if any(c.path == path and c.how != "removed" for c in changes):
                notes.append(f"{path} is both sent and said to be deleted; the file sent is kept")
                continue
            changes.append(FileChange(path, "removed", None, line=line))
            current.pop(path, None)
        else:
            safe, why = confine_name(target)
            if safe is None:
                notes.append(f"{path} is not renamed to {target}: {why}")
                continue
            target = safe
            text = current.pop(path)
            sent = next((c for c in changes if c.path == target), None)
            changes.append(FileChange(target, "renamed", sent.text if sent else text,
                                      renamed_from=path, line=line))
            current[target] = sent.text if sent and sent.text is not None else text
    return TreeUpdate(tuple(changes), tuple(problems), tuple(notes))


def _clean(path: str) -> str:
    safe, _ = confine_name(path)
    return safe or path
