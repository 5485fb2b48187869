"""The command palette: one Quit, our own Theme, no Keys beside F1, key hints, and search
over the commands' descriptions too."""

from __future__ import annotations

import pytest
from textual.command import CommandPalette
from textual.widgets import OptionList

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(120)]


async def listed(tui, pilot, app, query: str = "") -> list[str]:  # noqa: ANN001
    await pilot.press("ctrl+p")
    await tui.wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), what="palette")
    if query:
        await pilot.press(*query)
    options = app.screen.query_one("CommandList", OptionList)

    def prompts() -> list[str]:
        return [str(options.get_option_at_index(i).prompt)
                for i in range(options.option_count)]

    # every provider's entries (ours, Textual's) are in once the list stops growing
    await tui.wait_for(pilot, lambda: len(prompts()) >= (1 if query else 15), what="the list")
    await pilot.pause()
    return prompts()


async def test_one_quit_our_theme_no_keys_and_key_hints(tui, app_messages) -> None:
    app = tui.app_answering("print('x')")
    async with tui.running(app, app_messages) as pilot:
        shown = await listed(tui, pilot, app)
    titles = [p.splitlines()[0] for p in shown]
    assert sum(t.startswith("Quit") for t in titles) == 1, titles
    assert not any(t == "Theme" or t.startswith("Keys") for t in titles), titles
    assert any(t.startswith("Change theme") and "(F9)" in t for t in titles), "\n".join(titles)
    assert any(t.startswith("Help: list the keys") and "(F1 / ?)" in t for t in titles), titles
    assert any(t.startswith("New chat") and "(Ctrl+N)" in t for t in titles), titles


async def test_search_finds_a_command_by_its_description(tui, app_messages) -> None:
    app = tui.app_answering("print('x')")
    async with tui.running(app, app_messages) as pilot:
        shown = await listed(tui, pilot, app, "connects in the background")
    assert any(p.startswith("Switch to the next target") for p in shown), shown
