"""The targets' Prompter in the TUI: questions become modal dialogs.

The question may come from the loop's own task (not a Textual worker), so
instead of ``push_screen_wait`` the dialog resolves a future the asker awaits.
"""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.screen import Screen


class DialogPrompter:
    def __init__(self, app: App) -> None:
        self.app = app

    async def confirm(self, question: str) -> bool:
        from verifybot_tui.tui.screens.dialogs import ConfirmScreen  # loaded when first asked

        return bool(await self._ask(ConfirmScreen(question, "Please confirm")))

    async def secret(self, question: str) -> str | None:
        from verifybot_tui.tui.screens.dialogs import SecretScreen

        return await self._ask(SecretScreen(question))

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
