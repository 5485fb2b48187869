"""The status bar says when what an answer brings would run without a sandbox."""

from __future__ import annotations

import pytest

from verifybot_tui.targets.sandbox.bubblewrap import NO_SANDBOX

pytestmark = pytest.mark.usefixtures("tui_env")


@pytest.mark.parametrize("keys, env, said", [
    ({}, {}, ""),
    ({"sandbox": "off"}, {}, "sandbox off"),
    ({}, {NO_SANDBOX: "1"}, "no sandbox"),
], ids=["sandboxed", "off", "none here"])
async def test_the_status_bar_names_a_missing_sandbox(tui, monkeypatch, keys, env,
                                                      said) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    app = tui.make_app(tui.ws, data={"targets": {"local": {"kind": "local", **keys}}})
    async with app.run_test(size=tui.SIZE) as pilot:
        main = tui.main(app)
        await tui.wait_for(pilot, lambda: main.is_mounted and main.target_state == "connected")
        bar = main.status_bar
        assert bar.sandbox == said
        shown = str(bar.render())
        assert (f"({said})" in shown) if said else ("sandbox" not in shown), shown


async def test_the_app_says_at_start_which_file_and_key_turned_the_sandbox_off(tui) -> None:
    app = tui.make_app(tui.ws, data={"targets": {"local": {"kind": "local",
                                                           "sandbox": "off"}}})
    async with app.run_test(size=tui.SIZE) as pilot:
        main = tui.main(app)
        await tui.wait_for(pilot, lambda: main.is_mounted and main.target_state == "connected")
        said = [n.message for n in app._notifications
                if "the sandbox is OFF" in n.message]
        assert len(said) == 1, said
        assert '[targets.local] sandbox = "off"' in said[0]
