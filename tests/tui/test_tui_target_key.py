"""Ctrl+T moves on past a target it cannot reach, and with one target says how to add one.

config.toml.example's three targets (local, pi, stm32) with no Pi on the network:
the first press says in one notice that pi could not be reached and that the next
press tries stm32, and the second press reaches it. From the key and from the
command palette's "Switch to the next target" alike.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest
from textual.command import CommandPalette
from textual.widgets import OptionList

from verifybot_tui.tui.commands import VerifyBotCommands

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]


def closed_port() -> int:
    """A loopback port nobody listens on (the Pi that is not on the network)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def three_targets() -> dict[str, Any]:
    return {"targets": {
        "local": {"kind": "local"},
        "pi": {"kind": "ssh", "host": "127.0.0.1", "port": closed_port(), "user": "pi"},
        "stm32": {"kind": "mcu", "board": "netduinoplus2", "backend": "qemu"}}}


async def palette_switch(tui, pilot, app) -> None:  # noqa: ANN001
    """The palette's "Switch to the next target", typed and chosen as a user would."""
    await pilot.press("ctrl+p")
    await tui.wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
    await pilot.press(*"switch to the next target")
    palette = app.screen
    options = palette.query_one("CommandList", OptionList)
    await tui.wait_for(pilot, lambda: options.option_count and "next target" in str(
        options.get_option_at_index(0).prompt), what="the command listed first")
    await pilot.press("enter")
    await tui.wait_for(pilot, lambda: not isinstance(app.screen, CommandPalette),
                       what="the palette to close")


@pytest.mark.parametrize("how", ["key", "palette"])
async def test_an_unreachable_target_is_passed_and_the_next_press_reaches_the_one_after(
        tui, app_messages, how: str) -> None:
    app = tui.make_app(tui.ws, data=three_targets())
    notices = app_messages.notices
    async with tui.running(app, app_messages) as pilot:
        main = tui.main(app)
        await tui.wait_for(pilot, lambda: "local" in app.session.targets, timeout=60,
                           what="local connected")
        before = len(notices)
        if how == "key":
            await pilot.press("ctrl+t")
        else:
            await palette_switch(tui, pilot, app)
        await tui.wait_for(
            pilot, lambda: len(notices) > before and main.target_switch.switching is None,
            timeout=60, what="the notice about pi")
        said = [f"{n.message}" for n in notices[before:]]
        assert len(said) == 1, said  # one notice, not "connecting" then "could not"
        assert said[0].startswith("Could not switch to pi:"), said
        assert "Still on local. ctrl+t again tries stm32." in said[0].replace("^t", "ctrl+t"), said
        assert app.session.target_name == "local"
        if how == "key":
            await pilot.press("ctrl+t")
        else:
            await palette_switch(tui, pilot, app)
        await tui.wait_for(pilot, lambda: app.session.target_name == "stm32", timeout=60,
                           what="the second press to reach stm32")
        assert "Target is now stm32" in notices[-1].message


@pytest.mark.parametrize("how", ["key", "palette"])
async def test_with_one_target_the_key_and_the_palette_say_how_to_add_one(
        tui, app_messages, how: str) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages) as pilot:
        titles = [hit.text async for hit in VerifyBotCommands(tui.main(app)).search("target")]
        assert "Switch to the next target  (Ctrl+T)" in titles
        if how == "key":
            await pilot.press("ctrl+t")
        else:
            await palette_switch(tui, pilot, app)
        await tui.wait_for(pilot, lambda: any("Only one target" in n.message
                                              for n in app_messages.notices), what="the notice")
    text = "\n".join(n.message for n in app_messages.notices)
    assert "Only one target is configured (local)" in text and "[targets.pi]" in text
    # the file to add it to, by its full path, as the first start names it
    from verifybot_tui.tui.session import config_file

    assert str(config_file(app.session.config)) in text
