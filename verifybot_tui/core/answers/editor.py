"""Editing files in the user's own editor ($VISUAL, then $EDITOR): one way for both front ends.

The files are written to a temporary folder under their own names (so the
editor picks the right highlighting), the editor runs on them, and they are
read back. How the editor gets the terminal is the front end's business: the
CLI just runs it, the TUI suspends itself first (``run``).
"""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Callable
from pathlib import Path

NO_EDITOR = "No editor set: export VISUAL or EDITOR (e.g. EDITOR=nano)"


def cannot_start(error: OSError) -> str:
    """What to say when the editor named in $VISUAL/$EDITOR does not start (a typo)."""
    return f"Could not start the editor: {error}. Check $VISUAL/$EDITOR."


def editor_command() -> list[str] | None:
    """The editor the user asked for, split like a shell would; None if unset."""
    for var in ("VISUAL", "EDITOR"):
        value = os.environ.get(var, "").strip()
        if value:
            try:
                return shlex.split(value)
            except ValueError:
                return [value]
    return None


def edit_files(files: dict[str, str],
               run: Callable[[list[str]], object]) -> dict[str, str] | None:
    """The files after the user edited them; None when no editor is set.

    ``run(argv)`` runs the editor and returns when it exits; an OSError from it
    (a typo in $EDITOR) goes to the caller.
    """
    command = editor_command()
    if command is None:
        return None
    with tempfile.TemporaryDirectory(prefix="verifybot-edit-") as tmp:
        paths = {}
        for name, content in files.items():
            path = Path(tmp) / Path(name).name  # names stay inside the folder
            path.write_text(content, encoding="utf-8")
            paths[name] = path
        run([*command, *map(str, paths.values())])
        return {name: p.read_text(encoding="utf-8", errors="replace")
                for name, p in paths.items()}
