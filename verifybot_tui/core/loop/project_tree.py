"""A conversation's project tree: the files attempt N runs with, made from attempt
N-1's files and what answer N does to them.

A follow-up rarely resends the whole project: it sends the files it changed, edits
(SEARCH/REPLACE, diffs, one function) and sentences ("delete `old.py`"). The tree
keeps the files as they last ran (the user's hand edits included); the answer's
changes (``tree_changes.plan_update``) apply to it; a file goes only when the
answer says so. Each file of the result says how it was made, for the transcript,
the code pane and F4. A new chat starts an empty tree (DESIGN.md, "A conversation's
project tree").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from verifybot_tui.core.answers.extract import CodeBlock, Extraction
from verifybot_tui.core.answers.languages import language_for_filename, language_named
from verifybot_tui.core.answers.programs import program_files, without_clashes
from verifybot_tui.core.answers.tree_changes import EditProblem, TreeUpdate, plan_update
from verifybot_tui.core.base.ports import ProgramFile

CARRIED = "carried"
_ENTRY_STEMS = ("main", "app", "run", "program", "index", "server")


@dataclass
class ProjectTree:
    """The files the conversation's last run ran with, and every path it ever held
    (a module that was a file of the project is never a package to install)."""

    files: list[ProgramFile] = field(default_factory=list)
    entry: str = ""
    ever: set[str] = field(default_factory=set)

    def ran(self, files: list[ProgramFile], entry: str) -> None:
        """The files as they ran (after the user's edits): the next answer's base."""
        self.files, self.entry = list(files), entry
        self.ever.update(f.name for f in files)

    def texts(self) -> dict[str, str]:
        return {f.name: f.content for f in self.files}


@dataclass
class Planned:
    """An answer applied to the tree: the new tree, its entry, how each file was made."""

    files: list[ProgramFile]
    entry: str
    how: dict[str, str]  # path -> "carried", "whole", "search-replace", ..., "renamed"
    renamed: dict[str, str]  # new path -> old path
    removed: list[str]
    problems: tuple[EditProblem, ...] = ()
    before: frozenset[str] = frozenset()  # the last run's files: a whole file not among them is new

    @property
    def changed(self) -> bool:
        return any(h != CARRIED for h in self.how.values()) or bool(self.removed)

    def lines(self) -> list[str]:
        """Each file as the transcript lists it: carried, whole (new, when added to a tree),
        edited (how), renamed, removed."""
        out = []
        for f in self.files:
            how = self.how.get(f.name, CARRIED)
            if how == "renamed":
                how = f"renamed from {self.renamed.get(f.name, '?')}"
            elif how == "whole" and self.before and f.name not in self.before:
                how = "whole (new)"
            elif how not in (CARRIED, "whole"):
                how = f"edited ({how})"
            out.append(f"- {f.name}: {how}" + (" (runs)" if f.name == self.entry else ""))
        out += [f"- {name}: removed" for name in self.removed]
        return out


def apply_answer(tree: ProjectTree, answer: str, ex: Extraction, slug: str,
                 max_files: int) -> Planned:
    """The tree answer ``answer`` makes of ``tree``; with problems, nothing of it runs."""
    update = plan_update(tree.texts(), answer, ex)
    ex.notes.extend(n for n in update.notes if n not in ex.notes)
    if update.problems:
        return Planned(list(tree.files), tree.entry, {}, {}, [], update.problems)
    files = {f.name: f for f in tree.files}
    files_before = set(files)
    how = {f.name: CARRIED for f in tree.files}
    renamed, removed = _apply_changes(update, files, how, ex)
    used = {c.line for c in update.changes if c.line}
    unnamed, unnamed_entry = _unnamed_files(ex, used, slug, max_files)
    for f in unnamed:
        files[f.name] = f
        how[f.name] = "whole"
    kept = without_clashes(list(files.values()), ex.notes)
    how = {f.name: how[f.name] for f in kept}
    entry = ""
    if removed or renamed or any(h != CARRIED for h in how.values()):
        entry = _entry(kept, how, tree.entry, renamed, unnamed_entry)
    return Planned(kept, entry, how, renamed, removed, before=frozenset(files_before))


def _apply_changes(update: TreeUpdate, files: dict[str, ProgramFile], how: dict[str, str],
                   ex: Extraction) -> tuple[dict[str, str], list[str]]:
    """The answer's named files and edits, its removals and renames, made in order."""
    renamed: dict[str, str] = {}
    removed: list[str] = []
    blocks = {b.line: b for b in ex.blocks}
    for c in update.changes:
        old = files.pop(c.renamed_from, None) if c.renamed_from else None
        how.pop(c.renamed_from, None)
        if c.text is None:
            if files.pop(c.path, None) is not None:
                removed.append(c.path)
            how.pop(c.path, None)
            continue
        base = files.get(c.path) or old
        block = blocks.get(c.line)
        if block is not None and c.how == "whole" and not block.runnable:
            ex.notes.append(f"{c.path} (the block at line {block.line}) is saved as a file "
                            f"to lay out, not run: {block.reason}")
        language = _language(c.path, block, base)
        files[c.path] = ProgramFile(c.path, c.path, c.text, language)
        how[c.path] = c.how
        if c.renamed_from:
            renamed[c.path] = renamed.pop(c.renamed_from, c.renamed_from)
    return renamed, removed


def _language(path: str, block: CodeBlock | None, base: ProgramFile | None) -> str:
    by_name = language_for_filename(path)
    if by_name is not None:
        return by_name.name
    if block is not None and block.language:
        return block.language
    return base.language if base is not None else "text"


def _unnamed_files(ex: Extraction, used: set[int], slug: str,
                   max_files: int) -> tuple[list[ProgramFile], str]:
    """The whole files the answer does not name: named as before (``slug.py``), the
    way a person saves a lone program; named blocks, edits and the unnamed blocks the
    update gave to a file of the tree (``used``, by line) are the update's."""
    whole = [b for b in ex.blocks if b.how == "whole" and not b.filename
             and b.line not in used]
    if not whole:
        return [], ""
    return program_files(replace(ex, blocks=whole), slug, max_files)


def _runnable(f: ProgramFile) -> bool:
    return (language_named(f.language) or language_for_filename(f.name)) is not None


def _entry(files: list[ProgramFile], how: dict[str, str], previous: str,
           renamed: dict[str, str], unnamed_entry: str) -> str:
    """The file to run: a new program the answer brings as a whole (an entry-like name,
    or an unnamed block) wins; else the file that ran before (under its new name if
    renamed); else the answer's first program; else the tree's. "" when no file of
    the tree runs."""
    names = {f.name for f in files}
    runnable = [f for f in files if _runnable(f)]
    sent = [f for f in runnable if how.get(f.name) == "whole"]
    stem = [f for f in sent if PurePosixPath(f.name).stem.lower() in _ENTRY_STEMS]
    if stem:
        return stem[0].name
    if unnamed_entry in names:
        return unnamed_entry
    previous = next((new for new, old in renamed.items() if old == previous), previous)
    if previous in names:
        return previous
    if sent:
        return sent[0].name
    stem = [f for f in runnable if PurePosixPath(f.name).stem.lower() in _ENTRY_STEMS]
    return (stem or runnable or [ProgramFile("", "", "", "")])[0].name


def tree_from_history(root: Path, attempts: list[dict[str, Any]]) -> ProjectTree:
    """A resumed session's tree, read back from programs/: the files of its last attempt
    that ran (its entry the same), and every path any attempt held."""
    tree = ProjectTree()
    ran = [a for a in attempts if a.get("output_file")]
    for a in attempts:
        tree.ever.update(unversioned(rel, a.get("version") or 0) for rel in a["files"])
    if not ran:
        return tree
    last = ran[-1]
    files = []
    for rel in last["files"]:
        saved = rel.removeprefix("programs/")
        name = unversioned(rel, last.get("version") or 0)
        try:
            content = (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeError):
            continue  # a file removed by hand: the next answer may bring it again
        lang = language_for_filename(name)
        files.append(ProgramFile(name, saved, content, lang.name if lang else "text"))
    tree.files, tree.entry = files, last.get("entry") or ""
    return tree


def unversioned(rel: str, version: int) -> str:
    """'programs/pkg/core_2.py', 2 -> 'pkg/core.py' (workspace.versioned, undone)."""
    p = PurePosixPath(rel.removeprefix("programs/"))
    tail = f"_{version}"
    if p.stem.endswith(tail):
        return str(p.with_name(p.stem[: -len(tail)] + p.suffix))
    if p.name.endswith(tail):
        return str(p.with_name(p.name[: -len(tail)]))
    return str(p)
