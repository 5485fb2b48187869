"""Editing a program in the user's own editor ($VISUAL, then $EDITOR).

posting's way: write the text to a temp file, hand the terminal to the editor
with ``App.suspend()``, read the file back. A save to the program file under
programs/ by an editor outside VerifyBot is caught too, by a watchfiles
worker that the main screen runs while an approval is pending.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from textual.app import App, SuspendNotSupported


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


def edit_text(app: App, text: str, suffix: str = ".txt") -> str | None:
    """The text after the user edited it; None when no editor is set.

    Raises OSError when the editor cannot be started (a typo in $EDITOR).
    """
    command = editor_command()
    if command is None:
        return None
    fd, name = tempfile.mkstemp(prefix="verifybot-", suffix=suffix)
    path = Path(name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            with app.suspend():
                subprocess.call([*command, str(path)])
        except SuspendNotSupported:
            # No terminal to lend (a headless test run): the editor runs without one.
            subprocess.call([*command, str(path)], stdin=subprocess.DEVNULL)
        return path.read_text(encoding="utf-8", errors="replace")
    finally:
        path.unlink(missing_ok=True)
