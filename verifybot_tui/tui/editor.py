"""Editing a program in the user's own editor from the app (core.answers.editor does the files).

posting's way: hand the terminal to the editor with ``App.suspend()`` while it
runs. A save to the program file under programs/ by an editor outside
VerifyBot is caught too, by a watchfiles worker that the main screen's loop
controller runs while an approval is pending.
"""

from __future__ import annotations

import subprocess
from typing import Any

from textual.app import App, SuspendNotSupported

from verifybot_tui.core.answers.editor import edit_files


def edit_text(app: App[Any], text: str, name: str) -> str | None:
    """The text of file ``name`` after the user edited it; None when no editor is set.

    Raises OSError when the editor cannot be started (a typo in $EDITOR).
    """
    def run(argv: list[str]) -> None:
        try:
            with app.suspend():
                subprocess.call(argv)
        except SuspendNotSupported:
            # No terminal to lend (a headless test run): the editor runs without one.
            subprocess.call(argv, stdin=subprocess.DEVNULL)

    edited = edit_files({name: text}, run)
    return None if edited is None else edited[name]
