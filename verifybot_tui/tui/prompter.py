"""The targets' Prompter in the TUI: questions become modal dialogs (host keys,
passwords, and files from others that set commands).

The question may come from the loop's own task (not a Textual worker), so
instead of ``push_screen_wait`` the dialog resolves a future the asker awaits.
"""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.screen import Screen

from verifybot_tui.core.settings.trust import FileToTrust


class DialogPrompter:
    def __init__(self, app: App, *, trust_all: bool = False) -> None:
        self.app = app
        self.trust_all = trust_all  # --trust: files from others are approved unasked

    async def confirm(self, question: str) -> bool:
        from verifybot_tui.tui.screens.dialogs import ConfirmScreen  # loaded when first asked

        return bool(await self._ask(ConfirmScreen(question, "Please confirm")))

    async def secret(self, question: str) -> str | None:
        from verifybot_tui.tui.screens.dialogs import SecretScreen

        return await self._ask(SecretScreen(question))

    async def approve_files(self, files: list[FileToTrust]) -> bool:
        """Files from others that set commands: True runs them (the session approves
        this content). A no is told here, once per question, whoever waited on it."""
        from verifybot_tui.tui.screens.files_from_others import (
            FilesFromOthersScreen,
            refused_text,
            trusted_text,
        )

        if self.trust_all:
            self.app.notify(trusted_text(files), title="--trust", severity="warning",
                            timeout=12)
            return True
        yes = bool(await self._ask(FilesFromOthersScreen(files)))
        if not yes:
            self.app.notify(refused_text(files), title="Not run", severity="warning",
                            timeout=20)
        return yes

    async def _ask(self, screen: Screen):
        answer: asyncio.Future = asyncio.get_running_loop().create_future()

        def done(result: object) -> None:
            if not answer.done():
                answer.set_result(result)

        self.app.push_screen(screen, callback=done)
        try:
            return await answer
        except asyncio.CancelledError:
            if screen.is_current:
                screen.dismiss(None)
            raise
