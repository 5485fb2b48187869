"""An answer's code as versioned program files: which to keep, which to run, where saved.

Versions are never overwritten (programs/<slug>_<n>.<ext>, ARCHITECTURE.md), and two
versions with the same files are the same program, which is how the loop
notices an LLM that answers with the code it already gave.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from verifybot_tui.core.answers.extract import CodeBlock, Extraction
from verifybot_tui.core.answers.languages import extension_for, language_named
from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.core.store.workspace import Workspace, versioned

_ENTRY_STEMS = ("main", "app", "run", "program")


MAX_FILES = 100  # [run] max_files: the files one answer may bring


def program_files(ex: Extraction, slug: str,
                  max_files: int = MAX_FILES) -> tuple[list[ProgramFile], str]:
    """The answer's files (programs, and named data files) and the one to run ("" if none).

    At most ``max_files`` of them: an answer of 80,000 named blocks is not 80,000 files.
    """
    files: list[ProgramFile] = []
    runnable: list[ProgramFile] = []
    names: set[str] = set()
    unnamed = 0
    wanted = [b for b in ex.blocks if b.runnable or b.filename or _unnamed_source(b)]
    if len(wanted) > max_files:
        ex.notes.append(f"the answer holds {len(wanted)} files; only the first {max_files} "
                        f"are kept, {len(wanted) - max_files} more are left out "
                        "([run] max_files)")
        wanted = wanted[:max_files]
    for b in wanted:
        name = b.filename
        if not name or name in names:
            unnamed += 1
            base = slug if unnamed == 1 and not name else f"{slug}_part{unnamed}"
            name = base + (_SOURCE_EXTENSIONS.get(b.language) or extension_for(b.language))
        names.add(name)
        if not b.runnable:
            ex.notes.append(f"{name} (the block at line {b.line}) is saved as a file to lay "
                            f"out, not run: {b.reason}")
        f = ProgramFile(name=name, saved_name=name, content=b.code,
                        language=b.language or "text")
        files.append(f)
        if b.runnable and language_named(b.language):
            runnable.append(f)
    files = without_clashes(files, ex.notes)
    kept = {id(f) for f in files}
    runnable = [f for f in runnable if id(f) in kept]
    return files, pick_entry(runnable)


def pick_entry(runnable: list[ProgramFile]) -> str:
    """The file to run of these: main, app, run or program by its stem, else the first
    ("" when there is none)."""
    for f in runnable:
        if Path(f.name).stem.lower() in _ENTRY_STEMS:
            return f.name
    return runnable[0].name if runnable else ""


# Source files of languages VerifyBot does not run: an unnamed ```go block is still the
# program a person would save (as answer.go), beside the ones it runs.
_SOURCE_EXTENSIONS = {
    "go": ".go", "rust": ".rs", "java": ".java", "kotlin": ".kt", "swift": ".swift",
    "csharp": ".cs", "ruby": ".rb", "php": ".php", "typescript": ".ts", "tsx": ".tsx",
    "jsx": ".jsx", "lua": ".lua", "scala": ".scala", "dart": ".dart",
}


def _unnamed_source(b: CodeBlock) -> bool:
    """An unnamed block of source code in a language we know the extension of."""
    return b.language in _SOURCE_EXTENSIONS and b.reason.endswith("not a language VerifyBot runs")


def without_clashes(files: list[ProgramFile], notes: list[str],
                    path: Callable[[ProgramFile], str] = lambda f: f.name,
                    ) -> list[ProgramFile]:
    """A file named like another file's folder (main.py beside main.py/helper.py), or like
    another file, cannot exist on disk: the later one is left out, with a note. Files that
    share a folder (tally/counting.py, tally/report/text.py) do not clash.

    Linear in the length of the names: every kept path and every folder above one are
    kept in sets, so 80,000 names cost 80,000 look-ups, not 80,000 squared.
    """
    kept: list[ProgramFile] = []
    file_at: dict[str, str] = {}  # a kept file's path -> its name
    folder_of: dict[str, str] = {}  # a folder above a kept file -> the first such file's name
    for f in files:
        p = path(f)
        parents = [str(q) for q in PurePosixPath(p).parents if str(q) != "."]
        clash = (file_at.get(p) or folder_of.get(p)
                 or next((file_at[q] for q in parents if q in file_at), None))
        if clash is None:
            kept.append(f)
            file_at[p] = f.name
            for q in parents:
                folder_of.setdefault(q, f.name)
        else:
            notes.append(f"{f.name} is left out: {clash} already uses that path for a "
                         "file or a folder (a file and a folder cannot share a name)")
    return kept


def digest(files: list[ProgramFile]) -> str:
    """Same names and same stripped contents: the same program."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.name):
        h.update(f.name.encode() + b"\0" + f.content.strip().encode() + b"\0")
    return h.hexdigest()


def save_version(workspace: Workspace, files: list[ProgramFile], slug: str,
                 start: int, *, notes: list[str]) -> tuple[int, list[ProgramFile]]:
    """Save the files as the first free version from ``start``; return it and the files kept.

    Names that become one once numbered (``b.py`` beside ``b_1.py/x.py``) are found
    before anything is written; a file that still cannot be saved (its name taken on
    disk) gets one retry under a flat name, then it is left out with a note. Nothing
    here loops on a name: only another session taking the number first moves it on.
    """
    while True:
        n = workspace.versioned_names([f.name for f in files], slug, start)
        try:
            workspace.claim_version(slug, n)
        except FileExistsError:  # another session took it meanwhile
            start = n + 1
            continue
        break
    kept = without_clashes(files, notes, lambda f: versioned(f.name, n))
    saved = [s for f in kept if (s := _save_one(workspace, f, n, notes)) is not None]
    return n, saved


def _save_one(workspace: Workspace, f: ProgramFile, n: int,
              notes: list[str]) -> ProgramFile | None:
    """One file of version ``n``, with one retry under a flat name; None if refused."""
    tried = []
    for name in dict.fromkeys([f.name, f.name.replace("/", "_")]):
        try:
            workspace.save_program(name, n, f.content)
            return replace(f, saved_name=versioned(name, n))
        except OSError as e:
            tried.append(f"programs/{versioned(name, n)} ({e.strerror or e})")
    notes.append(f"{f.name} is left out: it cannot be saved as " + " nor as ".join(tried))
    return None
