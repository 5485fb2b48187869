"""Themes, keys, the help screen, the command palette and switching targets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import OptionList

from verifybot_tui.core.loop.events import RunStarted
from verifybot_tui.core.settings.config import user_config_dir
from verifybot_tui.core.settings.ui_state import load_ui_state, save_ui_choice, state_path
from verifybot_tui.tui.commands import VerifyBotCommands
from verifybot_tui.tui.messages import LoopEvent
from verifybot_tui.tui.screens.help import HelpScreen
from verifybot_tui.tui.themes import ThemeFileError, load_theme_file, load_themes
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = pytest.mark.usefixtures("tui_env")
TWO_TARGETS = {"targets": {"other": {"kind": "local"}}}


def test_builtin_theme_files_load() -> None:
    themes, problems = load_themes()
    names = {t.name for t in themes}
    assert {"verifybot-dark", "verifybot-light"} <= names
    assert not problems
    light = next(t for t in themes if t.name == "verifybot-light")
    assert light.dark is False


@pytest.mark.parametrize("text, fragment", [
    ('name = "x"\nprimary = "#123456"\ncolour = "red"\n', "unknown key"),
    ('primary = "#123456"\n', "'name' is required"),
    ('name = "x"\nprimary = "not-a-colour"\n', "is not a colour"),
    ('name = "x"\nprimary = "#123456"\ndark = "yes"\n', "true or false"),
    ('name = "x"\nprimary = \n', "not valid TOML"),
])
def test_broken_theme_files_say_what_is_wrong(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "t.toml"
    path.write_text(text)
    with pytest.raises(ThemeFileError, match=fragment):
        load_theme_file(path)


async def test_user_themes_load_broken_ones_notify_and_choice_is_saved(
        tui, tmp_path: Path, app_messages, notices) -> None:
    themes_dir = user_config_dir() / "themes"
    themes_dir.mkdir(parents=True)
    (themes_dir / "mine.toml").write_text('name = "mine"\nprimary = "#aa3377"\ndark = true\n')
    (themes_dir / "broken.toml").write_text('name = "broken"\nprimary = "nope"\n')
    config = tmp_path / "config.toml"
    original = (b'# my own notes, [ui] kept as I wrote them\n[ui]\n'
                b'theme   =  "verifybot-light"   # light at work\n')
    config.write_bytes(original)
    app = tui.make_app(tui.ws, config_path=config,
                       data={"ui": {"theme": "verifybot-light"}})
    async with app.run_test(size=tui.SIZE, message_hook=app_messages.hook) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        assert app.theme == "verifybot-light"
        assert "mine" in app.available_themes and "broken" not in app.available_themes
        assert any("broken.toml" in n.message and "is not a colour" in n.message
                   for n in notices)
        await pilot.press("f9")
        await tui.wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="picker")
        await pilot.press(*"mine", "enter")
        await tui.wait_for(pilot, lambda: app.theme == "mine", what="the theme to change")
        await pilot.pause()
    assert config.read_bytes() == original, "config.toml is the user's: never rewritten"
    assert load_ui_state() == {"theme": "mine"}
    assert state_path().is_relative_to(os.environ["XDG_STATE_HOME"])
    # The next start shows the chosen theme, config.toml notwithstanding.
    again = tui.make_app(tui.ws, config_path=config,
                         data={"ui": {"theme": "verifybot-light"}})
    async with again.run_test(size=tui.SIZE) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(again).is_mounted)
        assert again.theme == "mine"
    assert config.read_bytes() == original


async def test_keys_remap_from_config_and_help_lists_them(tui, tmp_path: Path, app_messages,
                                                          notices) -> None:
    app = tui.make_app(tui.ws, data={
        **TWO_TARGETS, "ui": {"keys": {"switch_target": "f10", "no_such_id": "f6"}}})
    async with app.run_test(size=tui.SIZE, message_hook=app_messages.hook) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        status = tui.main(app).query_one(StatusBar)
        assert any("'no_such_id' is not a key id" in n.message for n in notices)
        await pilot.press("ctrl+t")
        # A switch shows at once (the screen names the target it connects to): none began.
        assert (tui.main(app).target, tui.main(app).target_switch.switching) == ("local", None), \
            "the old key no longer switches"
        await pilot.press("f10")  # (f5 is toggle_top's: such a remap is refused now)
        await tui.wait_for(pilot, lambda: app.session.target_name == "other", what="the switch")
        await tui.wait_for(pilot, lambda: status.target == "other"
                           and status.target_state == "connected", what="status")
        await pilot.press("f1")
        help_screen = await tui.wait_screen(pilot, HelpScreen, what="help")
        table = help_screen.query_one("#help-table")
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert any(r[0] == "F10" and r[1] == "switch_target" for r in rows)
        assert any(r[1] == "approval.accept" for r in rows)
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: app.screen is tui.main(app), what="help to close")


async def test_command_palette_runs_the_apps_actions(tui, tmp_path: Path) -> None:
    app = tui.make_app(tui.ws, data=TWO_TARGETS)
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        provider = VerifyBotCommands(tui.main(app))
        titles = [hit.text async for hit in provider.search("target")]
        assert "Switch to the next target  (Ctrl+T)" in titles and "Target: other" in titles
        await pilot.press("ctrl+p")
        await tui.wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
        await pilot.press(*"toggle auto-accept")
        palette = app.screen
        await tui.wait_for(pilot, lambda: any("auto-accept" in str(palette.query_one(
            "CommandList", OptionList).get_option_at_index(i).prompt).lower()
            for i in range(palette.query_one("CommandList", OptionList).option_count)),
            what="the command in the list")
        await pilot.press("enter")
        await tui.wait_for(pilot, lambda: app.session.auto_accept, what="auto-accept on")
        assert tui.main(app).query_one(StatusBar).auto_accept


async def test_switch_target_while_code_waits_runs_it_there(tui, tmp_path: Path) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "import os\nprint('cwd', os.getcwd())")
    app = tui.make_app(ws, transcript, data=TWO_TARGETS)
    started: list[RunStarted] = []

    def hook(message: object) -> None:
        if isinstance(message, LoopEvent) and isinstance(message.event, RunStarted):
            started.append(message.event)

    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "where am i")
        await tui.wait_approval(pilot, timeout=60)
        await pilot.press("ctrl+t")
        await tui.wait_for(pilot, lambda: app.session.target_name == "other", timeout=60,
                           what="the switch")
        assert app.session.loop.target.name == "other"
        # each step waits for what the app does next (the bar back in focus, the run
        # started), so a loaded machine only makes it slower
        await tui.wait_approval(pilot, timeout=60, what="the version still waiting")
        await pilot.press("a")
        await tui.wait_for(pilot, lambda: started, timeout=60, what="the run to start")
        await tui.wait_idle(pilot, timeout=90)
    assert [s.target for s in started] == ["other"]
    assert os.path.isfile(ws / "context" / "other.md"), "the new target was probed"


def test_ui_state_file_is_atomic_tolerant_and_keeps_other_choices(tmp_path: Path) -> None:
    assert load_ui_state() == {}, "no file: no choices"
    save_ui_choice("theme", "verifybot-light")
    save_ui_choice("wrap_output", True)
    assert load_ui_state() == {"theme": "verifybot-light", "wrap_output": True}
    assert [p.name for p in state_path().parent.iterdir()] == ["state.toml"], "no temp left"
    state_path().write_text("[ui\nbroken")
    assert load_ui_state() == {}, "a broken state file is no reason to stop"
    save_ui_choice("theme", "mine")
    assert load_ui_state() == {"theme": "mine"}
