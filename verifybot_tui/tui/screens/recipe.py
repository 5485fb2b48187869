"""Open a task recipe in the app: its LLM, target, criteria and judge become the session's
(``tui.commands.apply_recipe``), and its
prompt is sent as a new chat, with the usual approvals: a recipe's ``auto_accept`` turns
the app's auto-accept on or off (ctrl+o still toggles it); without the key the app's
setting holds."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.containers import Vertical
from textual.widgets import Button, Input, Label

from verifybot_tui.core.verify.recipe import Recipe, load_recipe
from verifybot_tui.tui.screens.dialogs import FormDialog


class RecipeScreen(FormDialog[Recipe]):
    FIELD = "#recipe-path"

    def compose(self):
        with Vertical(id="dialog"):
            yield Label("Open a recipe", id="dialog-title")
            yield Label("The path of a recipe TOML file (see examples/rocket.toml):",
                        id="dialog-question")
            yield Input(placeholder="examples/rocket.toml", id="recipe-path")
            yield from self.form_end("Open", "open")

    def read(self) -> Recipe:
        text = self.query_one("#recipe-path", Input).value.strip()
        # One that sets commands is asked about when it is applied (tui.commands).
        return load_recipe(Path(text).expanduser(), check_trust=False)

    @on(Input.Submitted, "#recipe-path")
    @on(Button.Pressed, "#open")
    def _open(self) -> None:
        self.action_submit()
