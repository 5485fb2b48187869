"""An answer's code as versioned program files: which to keep, which to run, where saved.

Versions are never overwritten (programs/<slug>_<n>.<ext>, ARCHITECTURE.md), and two
versions with the same files are the same program, which is how the loop
notices an LLM that answers with the code it already gave.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from verifybot_tui.core.answers.extract import Extraction
from verifybot_tui.core.answers.languages import extension_for, language_named
from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.core.store.workspace import Workspace, versioned

_ENTRY_STEMS = ("main", "app", "run", "program")


def program_files(ex: Extraction, slug: str) -> tuple[list[ProgramFile], str]:
    """The answer's files (programs, and named data files) and the one to run ("" if none)."""
    files: list[ProgramFile] = []
    runnable: list[ProgramFile] = []
    names: set[str] = set()
    unnamed = 0
    for b in ex.blocks:
        if not b.runnable and not b.filename:
            continue
        name = b.filename
        if not name or name in names:
            unnamed += 1
            base = slug if unnamed == 1 and not name else f"{slug}_part{unnamed}"
            name = base + extension_for(b.language)
        names.add(name)
        f = ProgramFile(name=name, saved_name=name, content=b.code,
                        language=b.language or "text")
        files.append(f)
        if b.runnable and language_named(b.language):
            runnable.append(f)
    files = _without_clashes(files, ex)
    runnable = [f for f in runnable if f in files]
    if not runnable:
        return files, ""
    for f in runnable:
        if Path(f.name).stem.lower() in _ENTRY_STEMS:
            return files, f.name
    return files, runnable[0].name


def _without_clashes(files: list[ProgramFile], ex: Extraction) -> list[ProgramFile]:
    """A file named like another file's folder (main.py beside main.py/helper.py)
    cannot exist on disk: the later one is left out, with a note."""
    kept: list[ProgramFile] = []
    for f in files:
        clash = next((k.name for k in kept if f.name.startswith(k.name + "/")
                      or k.name.startswith(f.name + "/")), None)
        if clash is None:
            kept.append(f)
        else:
            ex.notes.append(f"{f.name} is left out: {clash} already uses that path for a "
                            "file or a folder (a file and a folder cannot share a name)")
    return kept


def digest(files: list[ProgramFile]) -> str:
    """Same names and same stripped contents: the same program."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.name):
        h.update(f.name.encode() + b"\0" + f.content.strip().encode() + b"\0")
    return h.hexdigest()


def save_version(workspace: Workspace, files: list[ProgramFile], slug: str,
                 start: int) -> tuple[int, list[ProgramFile]]:
    """Save the files as the first free version from ``start``; return it and the files."""
    while True:
        n = workspace.versioned_names([f.name for f in files], slug, start)
        try:
            workspace.claim_version(slug, n)
            for f in files:
                workspace.save_program(f.name, n, f.content)
        except FileExistsError:  # another session took it meanwhile
            start = n + 1
            continue
        return n, [replace(f, saved_name=versioned(f.name, n)) for f in files]
