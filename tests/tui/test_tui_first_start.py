"""The first start anywhere (the real app through Pilot, the real Chromium).

With no config the default LLM is a chat site in a visible browser. Where no window
can open, the app says so calmly and starts nothing; where Chromium is started and
fails, what it made of a new profile is gone once the app ends, so `doctor` never
takes it for a used one. The tmux test of the same start is in tests/e2e/test_tmux.py.
"""

from __future__ import annotations

import pytest
from browser_fixtures import CHROMIUM

from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.llm.browser.chromium import profile_dir
from verifybot_tui.llm.browser.first_start import LOGIN_STAMP, profile_state
from verifybot_tui.tui.app import VerifyBotApp

pytestmark = pytest.mark.usefixtures("tui_env")


def default_app(tui, **llm) -> VerifyBotApp:
    """The app as `verifybot` starts it with no config file (the defaults), on ``tui.ws``."""
    data = {"run": {"workspace": str(tui.ws)}}
    if llm:
        data["llm"] = {"chatgpt": llm}
    return VerifyBotApp(config=parse_config(data, "<defaults>"), target="local")


def said(app_messages) -> str:
    return "\n".join(f"{n.title}: {n.message}" for n in app_messages.notices)


async def test_no_display_names_the_llm_and_the_fixes_and_starts_nothing(
        tui, app_messages, monkeypatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    app = default_app(tui)
    profile = profile_dir(app.config.llm["chatgpt"])
    async with tui.running(app, app_messages, size=(80, 24)) as pilot:
        screen = tui.main(app)
        await tui.wait_for(pilot, lambda: "cannot start here" in said(app_messages),
                           what="the notice")
        assert screen.llm_state == "no_display"
        text = said(app_messages)
        assert "chatgpt cannot start here" in text
        assert "headless = true under [llm.chatgpt]" in text
        assert "verifybot/config.toml" in text and "--llm replay:" in text
        assert all(n.severity != "error" for n in app_messages.notices), text
        # ...and what to do stays in the conversation, once, after the notice has gone
        guide = [n for n in screen.conversation.query(".notice")]
        assert len(guide) == 1 and "headless = true" in str(guide[0].render()), guide
        await tui.type_prompt(pilot, "count words")
        await tui.wait_for(pilot, lambda: "your prompt is kept" in said(app_messages),
                           what="the prompt refused calmly")
        assert screen.prompt_box.value == "count words"
        assert len(screen.conversation.query(".notice")) == 1, "said once, not per prompt"
        llm = app.session.llm
        assert llm is None or llm.state == "stopped", "no browser was started"
        assert not profile.exists()
    assert not profile.exists()


async def test_a_failed_chromium_start_leaves_no_profile(tui, app_messages, monkeypatch) -> None:
    """A display that does not answer: Chromium starts, fails, and leaves its lock files
    and a few of its own in the new profile; once the app ends they are gone."""
    monkeypatch.setenv("DISPLAY", ":97")  # no X server there
    app = default_app(tui, url="http://127.0.0.1:9/")
    profile = profile_dir(app.config.llm["chatgpt"])
    async with tui.running(app, app_messages, size=(120, 40)) as pilot:
        screen = tui.main(app)
        await tui.wait_for(pilot, lambda: "LLM not ready" in said(app_messages), timeout=60,
                           what="the start to fail")
        assert screen.llm_state == "error"
        assert profile_state(profile) in ("unused", "used"), "Chromium made the profile"
    assert not profile.exists(), list(profile.rglob("*"))


async def test_a_profile_that_was_there_before_is_kept(tui, app_messages, monkeypatch) -> None:
    monkeypatch.setenv("DISPLAY", ":97")
    app = default_app(tui, url="http://127.0.0.1:9/")
    profile = profile_dir(app.config.llm["chatgpt"])
    profile.mkdir(parents=True)
    (profile / LOGIN_STAMP).write_text("2026-11-01 10:00:00\n")
    async with tui.running(app, app_messages, size=(120, 40)) as pilot:
        await tui.wait_for(pilot, lambda: "LLM not ready" in said(app_messages), timeout=60,
                           what="the start to fail")
    assert profile_state(profile) == "logged_in"


@pytest.mark.browser
@pytest.mark.timeout(180)
async def test_a_logged_out_site_is_a_calm_notice_with_the_login_command(
        tui, chatsite, tmp_path, app_messages, monkeypatch) -> None:
    """The local chat site showing its login page: not an error dump, the command."""
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    chatsite.reset()
    chatsite.configure("login_buttons")
    table = {"kind": "browser", "site": "chatgpt", "url": chatsite.url, "headless": True,
             "browser_path": CHROMIUM, "profile_dir": str(tmp_path / "profile")}
    app = tui.make_app(tui.ws, llm="site", data={"llm": {"site": table}})
    async with tui.running(app, app_messages, size=(80, 24)) as pilot:
        await tui.wait_for(pilot, lambda: "log in first" in said(app_messages), timeout=60,
                           what="the login notice")
        notice = next(n for n in app_messages.notices if "log in first" in n.title)
        assert notice.severity == "warning"
        assert "login --llm site` where there is a display" in notice.message
        assert "--llm replay:" in notice.message
        assert tui.main(app).llm_state == "logged_out"
