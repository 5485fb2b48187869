"""In the app, a recipe that sets commands nobody approved is asked about when it is
opened, naming its keys: "Don't run" applies nothing, sends nothing and approves
nothing; "Run it" approves this content (by its hash) and the recipe's prompt is sent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from project import ROOT
from textual.widgets import Input

from verifybot_tui.core.loop.events import Finished, SessionStarted
from verifybot_tui.core.settings import trust
from verifybot_tui.tui.commands import open_recipe
from verifybot_tui.tui.screens.files_from_others import FilesFromOthersScreen

pytestmark = pytest.mark.usefixtures("tui_env")


def stored() -> str:
    path = Path(os.environ["XDG_STATE_HOME"]) / "verifybot" / "trusted-files"
    return path.read_text() if path.exists() else ""


async def open_it(tui, pilot, app, recipe: Path) -> FilesFromOthersScreen:  # noqa: ANN001
    app.call_later(open_recipe, tui.main(app))
    box = await tui.wait_for(pilot, lambda: app.screen.query("#recipe-path")
                             and app.screen.query_one("#recipe-path", Input))
    box.value = str(recipe)
    await pilot.press("enter")
    return await tui.wait_screen(pilot, FilesFromOthersScreen, what="the question")


async def test_the_app_asks_about_a_recipe_that_sets_commands(
        tui, tmp_path: Path, app_messages, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trust, "_SESSION", set())
    marker = tmp_path / "wrapped"
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "rocket"\nprompt = "Simulate a rocket"\ncompiler = "gcc"\n'
                      f'flags = ["-wrapper", "/bin/sh,-c,touch {marker}"]\n')
    digest = trust.digest(recipe.read_bytes())
    app = tui.make_app(tui.ws, ROOT / "examples" / "rocket.md")
    async with tui.running(app, app_messages) as pilot:
        screen = await open_it(tui, pilot, app, recipe)
        text = "\n".join(str(w.render()) for w in screen.query(".trust-path, .trust-findings"))
        assert str(recipe) in text
        assert f"flags = -wrapper /bin/sh,-c,touch {marker}" in text
        assert "makes the compiler run or read another program or file" in text
        await pilot.press("n")
        await tui.wait_for(pilot, lambda: any(n.title == "Not run" for n in app_messages.notices),
                           what="the notice")
        assert app.session.verification.flags == []  # nothing of the recipe applied
        assert app_messages.of(SessionStarted) == [] and app_messages.of(Finished) == []
        assert not marker.exists() and digest not in stored()
        # Asked again on the next open; "Run it" approves it and the prompt is sent.
        await open_it(tui, pilot, app, recipe)
        await pilot.press("y")
        await tui.wait_for(pilot, lambda: app_messages.of(SessionStarted), timeout=30,
                           what="the recipe's prompt sent")
        assert app.session.verification.flags == ["-wrapper", f"/bin/sh,-c,touch {marker}"]
        assert digest in stored()


async def test_the_app_asks_about_a_recipe_that_runs_its_answers_unsandboxed(
        tui, tmp_path: Path, app_messages, monkeypatch: pytest.MonkeyPatch) -> None:
    """target = a target with the sandbox off, llm = its own replay: asked, named."""
    monkeypatch.setattr(trust, "_SESSION", set())
    (tmp_path / "a.md").write_text((ROOT / "examples" / "rocket.md").read_text())
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "rocket"\nprompt = "Simulate a rocket"\nllm = "replay:a.md"\n'
                      'target = "open"\n')
    app = tui.make_app(tui.ws, ROOT / "examples" / "rocket.md",
                       data={"targets": {"open": {"kind": "local", "sandbox": "off"}}})
    async with tui.running(app, app_messages) as pilot:
        screen = await open_it(tui, pilot, app, recipe)
        text = "\n".join(str(w.render()) for w in screen.query(".trust-path, .trust-findings"))
        assert "target = open" in text
        assert 'runs the answers it brings (replay:a.md) here with sandbox = "off"' in text
        await pilot.press("n")
        await tui.wait_for(pilot, lambda: any(n.title == "Not run" for n in app_messages.notices),
                           what="the notice")
        assert app.session.target_name == "local"  # nothing of the recipe applied
        assert app_messages.of(SessionStarted) == []
