"""Open a task recipe in the app: its criteria and judge become the session's, and its
prompt is sent as a new chat, with the usual approvals: a recipe's ``auto_accept`` turns
the app's auto-accept on or off (ctrl+o still toggles it); without the key the app's
setting holds."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from verifybot_tui.core.errors import ConfigError
from verifybot_tui.core.recipe import Recipe, load_recipe


class RecipeScreen(ModalScreen[Recipe | None]):
    CSS_PATH = "dialogs.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def compose(self):
        with Vertical(id="dialog"):
            yield Label("Open a recipe", id="dialog-title")
            yield Label("The path of a recipe TOML file (see examples/rocket.toml):",
                        id="dialog-question")
            yield Input(placeholder="examples/rocket.toml", id="recipe-path")
            yield Static("", id="criteria-error", markup=False)
            with Horizontal(id="dialog-buttons"):
                yield Button("Open", id="open", variant="success")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#recipe-path", Input).focus()

    @on(Input.Submitted, "#recipe-path")
    @on(Button.Pressed, "#open")
    def _open(self) -> None:
        text = self.query_one("#recipe-path", Input).value.strip()
        try:
            recipe = load_recipe(Path(text).expanduser())
        except ConfigError as e:
            self.query_one("#criteria-error", Static).update(str(e))
            return
        self.dismiss(recipe)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
