"""In the app, a recipe that sets commands nobody approved is refused in the open dialog,
naming its keys; nothing is sent or run. Approved once (by its content's hash), it opens."""

from __future__ import annotations

from pathlib import Path

import pytest
from project import ROOT
from textual.widgets import Input, Static

from verifybot_tui.core.loop.events import Finished, SessionStarted
from verifybot_tui.core.settings import trust
from verifybot_tui.core.verify.recipe import load_recipe
from verifybot_tui.tui.commands import open_recipe

pytestmark = pytest.mark.usefixtures("tui_env")


async def test_the_app_refuses_a_recipe_that_sets_commands_until_approved(
        tui, tmp_path: Path, app_messages) -> None:
    marker = tmp_path / "wrapped"
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "rocket"\nprompt = "Simulate a rocket"\ncompiler = "gcc"\n'
                      f'flags = ["-wrapper", "/bin/sh,-c,touch {marker}"]\n')
    app = tui.make_app(tui.ws, ROOT / "examples" / "rocket.md")
    async with tui.running(app, app_messages) as pilot:
        app.call_later(open_recipe, tui.main(app))
        box = await tui.wait_for(pilot, lambda: app.screen.query("#recipe-path")
                                 and app.screen.query_one("#recipe-path", Input))
        box.value = str(recipe)
        await pilot.press("enter")
        error = await tui.wait_for(
            pilot, lambda: str(app.screen.query_one("#dialog-error", Static).render()),
            what="the dialog's error")
        assert "not run: a file from others sets commands" in error
        assert f"flags = -wrapper /bin/sh,-c,touch {marker}" in error
        await pilot.press("escape")
    assert app_messages.of(SessionStarted) == [] and app_messages.of(Finished) == []
    assert not marker.exists()
    # Approved once (as `recipe run` asks in a terminal), the same content loads.
    trust.approve(load_recipe(recipe, check_trust=False).to_trust)
    assert load_recipe(recipe).compiler == "gcc"
