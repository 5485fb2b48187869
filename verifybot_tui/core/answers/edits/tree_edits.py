"""An answer's blocks applied to a project tree, one after the other, as a person
applies them: a whole file replaces, an edit changes the file as it stands so far.

Each edit form has its own reader (search_replace, udiff, splice, elisions); this
module picks the file each block means and keeps what was made and what failed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial

from verifybot_tui.core.answers.edits.elisions import elision_lines, merge
from verifybot_tui.core.answers.edits.loose_edits import loose_edits
from verifybot_tui.core.answers.edits.search_replace import (
    SearchReplace,
    apply_edit,
    parse_edits,
)
from verifybot_tui.core.answers.edits.splice import definition_count, definition_name, splice
from verifybot_tui.core.answers.edits.udiff import NULL, FilePatch, apply_patch, parse_patches
from verifybot_tui.core.answers.extract import CodeBlock, Extraction
from verifybot_tui.core.answers.file_changes import EditProblem, FileChange
from verifybot_tui.core.answers.hints import confine_name, data_language

Applied = tuple[list[FileChange], list[EditProblem], list[str]]


class _Work:
    """The tree as the answer's blocks so far leave it, and what they made."""

    def __init__(self, tree: Mapping[str, str]) -> None:
        self.tree = tree
        self.current: dict[str, str] = dict(tree)
        self.changes: list[FileChange] = []
        self.problems: list[EditProblem] = []
        self.notes: list[str] = []

    def confined(self, path: str) -> bool:
        """Whether ``path`` stays in the project; one that leaves it (a diff's ``+++
        b/../x``, ``/etc/x``) is said in a note and changes nothing."""
        safe, why = confine_name(path)
        if safe is None:
            self.notes.append(f"{path}: not saved, {why}")
        return safe is not None

    def put(self, path: str, how: str, text: str, line: int) -> None:
        """Record a change; a second edit of one file composes with the first (the
        change keeps the first one's form unless a whole file replaces it). A path
        that leads out of the project (a diff's ``+++ b/../x``) changes nothing."""
        if not self.confined(path):
            return
        earlier = next((i for i, c in enumerate(self.changes) if c.path == path), None)
        if earlier is not None:
            first = self.changes.pop(earlier)
            if how != "whole" and first.how not in ("removed", "renamed"):
                how = first.how  # sent whole then edited: whole; two edits: the first's form
        self.changes.append(FileChange(path, how, text, line=line))
        self.current[path] = text

    def problem(self, path: str, message: str, line: int) -> None:
        self.problems.append(EditProblem(path, message, line))


def apply_blocks(tree: Mapping[str, str], answer: str, ex: Extraction) -> Applied:
    """The changes the answer's blocks make to ``tree``, the problems, and notes."""
    work = _Work(tree)
    loose = [CodeBlock(code=text, language="", info="", filename=None, runnable=False,
                       reason="", line=line,
                       how="diff" if text.startswith("--- ") else "search-replace")
             for line, text in loose_edits(answer)]
    if loose:
        work.notes.append(f"{len(loose)} edit(s) outside any code block (SEARCH/REPLACE or "
                          "diff) applied as written")
    for block in sorted([*ex.blocks, *loose], key=lambda b: b.line):
        if block.how == "search-replace":
            _search_replace(work, block)
        elif block.how == "diff":
            _diff(work, block)
        elif block.how in ("elided", "function"):
            _partial(work, block)
        elif block.how == "whole":
            _whole(work, block)
    return work.changes, work.problems, work.notes


def _language(block: CodeBlock, path: str) -> str:
    return data_language(path) if path and data_language(path) else block.language


def _resolve(work: _Work, name: str) -> str:
    """The tree's file a name means: itself, or the only file with that base name
    ("main.py" for src/main.py); else the name as written."""
    safe, _ = confine_name(name)
    name = safe or name
    if name in work.current or "/" in name:
        return name
    same = [p for p in work.current if p.rsplit("/", 1)[-1] == name]
    return same[0] if len(same) == 1 else name


def _whole(work: _Work, block: CodeBlock) -> None:
    """A whole file replaces or adds; one that holds only a definition of a longer
    file of the tree replaces that definition (a person does not drop the rest)."""
    code = block.content if block.content is not None else block.code
    if not block.filename:
        _unnamed(work, block, code)
        return
    path = _resolve(work, block.filename)
    if path != block.filename:
        work.notes.append(f"{block.filename} (block at line {block.line}) is the project's "
                          f"{path}, the only file of that name")
    old = work.current.get(path)
    language = _language(block, path)
    name = definition_name(code, language) if old is not None else None
    if old is not None and name and definition_count(old, name, language) >= 1:
        new, why = splice(old, code, language, path)
        if new is None:
            work.problem(path, why, block.line)
            return
        if new.strip() != code.strip():
            work.notes.append(f"the block at line {block.line} holds only `{name}`: it "
                              f"replaces `{name}` in {path}, the rest of {path} stays")
            work.put(path, "function", _ending(new), block.line)
            return
    work.put(path, "whole", code, block.line)


def _unnamed(work: _Work, block: CodeBlock, code: str) -> None:
    """An unnamed block that is one definition of exactly one file of the tree."""
    name = definition_name(code, block.language)
    if not name:
        return
    homes = [p for p, t in work.current.items() if _language(block, p) == block.language
             and definition_count(t, name, block.language) == 1]
    if len(homes) != 1:
        return
    new, _why = splice(work.current[homes[0]], code, block.language, homes[0])
    if new is not None and new.strip() != code.strip():
        work.notes.append(f"the unnamed block at line {block.line} replaces `{name}` in "
                          f"{homes[0]}, the only file that defines it")
        work.put(homes[0], "function", _ending(new), block.line)
        block.filename, block.how = homes[0], "function"  # no file of its own to save


def _ending(text: str) -> str:
    return text.rstrip("\n") + "\n" if text.strip() else ""


def _target(work: _Work, block: CodeBlock, named: str,
            fits: Callable[[str, str], bool]) -> str | None:
    """The file an edit is for: named by the edit or the block, the tree's only file,
    or the only file it applies to; None (and a problem) if none is."""
    if named or block.filename:
        return _resolve(work, named or block.filename or "")
    if len(work.current) == 1:
        return next(iter(work.current))
    homes = [p for p, t in work.current.items() if fits(t, p)]
    if len(homes) == 1:
        return homes[0]
    work.problem("", "the edit does not say which file it changes", block.line)
    return None


def _edit_fits(edit: SearchReplace, text: str, path: str) -> bool:
    return bool(edit.search.strip()) and apply_edit(text, edit, path)[0] is not None


def _patch_fits(patch: FilePatch, text: str, path: str) -> bool:
    return apply_patch(text, patch, path)[0] is not None


def _search_replace(work: _Work, block: CodeBlock) -> None:
    edits, _outside = parse_edits(block.code)
    for edit in edits:
        path = _target(work, block, edit.path, partial(_edit_fits, edit))
        if path is None:
            continue
        new, why = apply_edit(work.current.get(path), edit, path)
        if new is None:
            work.problem(path, why, block.line)
        else:
            work.put(path, "search-replace", new, block.line)


def _diff(work: _Work, block: CodeBlock) -> None:
    for patch in parse_patches(block.code):
        if patch.removes:
            gone = _resolve(work, patch.old_path)
            if gone in work.current:
                work.changes.append(FileChange(gone, "removed", None, line=block.line))
                work.current.pop(gone)
            continue
        old_name = patch.old_path if patch.old_path not in ("", NULL) else ""
        path = _target(work, block, patch.path or old_name, partial(_patch_fits, patch))
        if path is None or not work.confined(path):
            continue
        source = _resolve(work, old_name) if old_name else path
        new, why = apply_patch(work.current.get(source), patch, path)
        if new is None:
            work.problem(path, why, block.line)
            continue
        if source != path and source in work.current:
            work.changes.append(FileChange(path, "renamed", new, renamed_from=source,
                                           line=block.line))
            work.current.pop(source)
            work.current[path] = new
        else:
            work.put(path, "diff", new, block.line)


def _partial(work: _Work, block: CodeBlock) -> None:
    """A block with elisions merged by its anchors, or one definition spliced in."""
    lines = block.code.rstrip("\n").split("\n")
    bare = "\n".join(ln for ln, elided in zip(lines, elision_lines(block.code, block.language),
                                             strict=True) if not elided)
    if block.filename:
        path = _resolve(work, block.filename)
    elif not work.current:
        block.how = "whole"  # a new chat: nothing to merge with; saved as written, unnamed
        return
    else:
        found = _home(work, block, bare)
        if found is None:
            return
        path = found
    old = work.current.get(path)
    if old is None and block.how == "elided":
        work.notes.append(f"{path} (block at line {block.line}) has `...` lines, but the "
                          "project has no earlier file to merge it with: saved as written")
        work.put(path, "whole", block.code, block.line)
        return
    if old is None:
        work.problem(path, f"it replaces a function of {path}, which is not in the project",
                     block.line)
        return
    first, _, rest = block.code.partition("\n")
    if (first.strip() not in old and first.lstrip()[:1] in "#/<-;"
            and path.rsplit("/", 1)[-1] in first):
        block = replace(block, code=rest)  # "// server.js" names the file; it is not in it
    new, why, how = _merged(old, block, bare, path)
    if new is None and block.how == "elided" and block.code.count("\n") >= old.count("\n"):
        work.notes.append(f"{path} (block at line {block.line}) has a `...` line that matches "
                          f"nothing, and is as long as {path} was: taken as the whole file")
        work.put(path, "whole", block.code, block.line)
    elif new is None:
        work.problem(path, why, block.line)
    else:
        work.put(path, how, _ending(new), block.line)


def _merged(old: str, block: CodeBlock, bare: str, path: str) -> tuple[str | None, str, str]:
    language = _language(block, path)
    new, why = (merge(old, block.code, language, path) if block.how == "elided"
                else (None, ""))
    if new is not None:
        return new, "", "elided"
    if definition_name(bare, language):
        new, spliced_why = splice(old, bare, language, path)
        return new, why or spliced_why, "function"
    return None, why, block.how


def _home(work: _Work, block: CodeBlock, bare: str) -> str | None:
    """The one file of the tree an unnamed partial block merges into; None (with a
    problem when the tree has files it could be for) otherwise."""
    homes = [p for p, t in work.current.items()
             if _language(block, p) == block.language and _merged(t, block, bare, p)[0]]
    if len(homes) == 1:
        return homes[0]
    if homes:
        work.problem("", f"the block at line {block.line} fits {len(homes)} files "
                     f"({', '.join(sorted(homes))}), so it is not clear which it changes",
                     block.line)
    elif any(_language(block, p) == block.language for p in work.current):
        said = ("leaves parts out, and its lines match no file of the project"
                if block.how == "elided" else
                "replaces a function that no file of the project defines")
        work.problem("", f"the block at line {block.line} {said}", block.line)
    else:
        block.how = "whole"  # no file in its language to change: a new program, as written
    return None
