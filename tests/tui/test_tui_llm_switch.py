"""F8, the LLM switch: the judge default follows the new LLM, and an API provider is
tested at once (doctor's check) with the result in a notice and the status bar.

The real app under Pilot; the API provider is the loopback test server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from api_fixtures import KEY, KEY_ENV, closed_port
from apiserver import ApiServer

from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = pytest.mark.usefixtures("tui_env")


def criteria_line(tui, app) -> str:  # noqa: ANN001
    return str(tui.main(app).code_pane.border_subtitle)


async def press_f8_until(tui, pilot, app, name: str) -> None:  # noqa: ANN001
    """F8 until ``name`` is the LLM, as a user cycles; each switch is waited for."""
    for _ in app.session.llm_names:
        if app.session.llm_spec == name:
            return
        before = app.session.llm_spec
        await pilot.press("f8")
        await tui.wait_for(pilot, lambda before=before: app.session.llm_spec != before,
                           what="a switch")
    raise AssertionError(f"{name} is not in the F8 round {app.session.llm_names}")


async def test_f8_rebuilds_the_judge_default_for_the_new_llm(tui, tmp_path: Path) -> None:
    data = {"llm": {"chatgpt": {"kind": "browser"},
                    "api": {"kind": "openai", "model": "m", "api_key_env": "VB_UNSET_KEY",
                            "base_url": f"http://127.0.0.1:{closed_port()}/v1"}}}
    app = tui.make_app(tui.ws, data=data)  # starts on a replay: judge off
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        assert app.session.verification.judge == "off"
        assert "judge" not in criteria_line(tui, app)
        await press_f8_until(tui, pilot, app, "chatgpt")
        assert app.session.verification.judge == "same-chat", "a chat site judges its runs"
        assert "judge: same-chat" in criteria_line(tui, app)
        await press_f8_until(tui, pilot, app, "api")
        assert app.session.verification.judge == "off"
        await press_f8_until(tui, pilot, app, app.session.llm_names[0])  # back to the replay
        assert app.session.verification.judge == "off" and "judge" not in criteria_line(tui, app)
        await press_f8_until(tui, pilot, app, "chatgpt")
        assert app.session.ensure_loop().verification.judge == "same-chat", \
            "the loop built for the next prompt judges in the same chat"
        assert app.session.llm is not None and app.session.llm.name == "chatgpt"
        await app.session.use_llm(app.session.llm_names[0])  # closes the unstarted browser


async def test_f8_keeps_a_configured_judge(tui, tmp_path: Path) -> None:
    data = {"run": {"judge": "off"}, "llm": {"chatgpt": {"kind": "browser"}}}
    app = tui.make_app(tui.ws, data=data)
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        await press_f8_until(tui, pilot, app, "chatgpt")
        assert app.session.verification.judge == "off", "[run] judge = off is the user's"


async def test_f8_tests_an_api_provider_as_doctor_does(tui,
        api_server: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
        app_messages) -> None:  # noqa: ANN001
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("VB_TEST_WRONG_KEY", "not-the-key")
    data = {"llm": {
        "good": {"kind": "openai", "base_url": api_server.url, "model": "coder",
                 "api_key_env": KEY_ENV},
        "badkey": {"kind": "anthropic", "base_url": api_server.url.removesuffix("/v1"),
                   "model": "coder", "api_key_env": "VB_TEST_WRONG_KEY"},
        "nomodel": {"kind": "openai", "base_url": api_server.url, "model": "gpt-9",
                    "api_key_env": KEY_ENV},
        "down": {"kind": "openai", "base_url": f"http://127.0.0.1:{closed_port()}/v1",
                 "model": "coder", "api_key_env": KEY_ENV}}}
    app = tui.make_app(tui.ws, data=data)
    async with app.run_test(size=tui.SIZE, message_hook=app_messages.hook) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        bar = tui.main(app).query_one(StatusBar)
        expected = {"good": ("ok", "OK, not started", "OK: openai at"),
                    "badkey": ("key_refused", "key refused", "FAIL: "),
                    "nomodel": ("model_missing", "model missing", "no model 'gpt-9'"),
                    "down": ("unreachable", "unreachable", "cannot connect to")}
        for name, (state, label, said) in expected.items():
            await press_f8_until(tui, pilot, app, name)
            await tui.wait_for(
                pilot, lambda: tui.main(app).llm_state not in ("stopped", "checking"),
                timeout=30, what=f"{name} checked")
            assert tui.main(app).llm_state == state, (name, tui.main(app).llm_switch.last_check)
            await pilot.pause()
            assert f"LLM {name}: {label}" in bar.render_line(0).text, "the status bar shows it"
            notice = await tui.wait_for(pilot, lambda name=name: [
                n for n in app_messages.notices if n.message.startswith(f"{name}: ")],
                                    what=f"{name}'s notice")
            assert said in notice[-1].message, notice[-1].message
            assert (notice[-1].severity == "information") == (state == "ok")
            assert KEY not in notice[-1].message and "not-the-key" not in notice[-1].message
        assert app.session.llm is None, "a check starts no conversation"
    assert not [r for r in api_server.requests if r.path.endswith(("/completions", "/messages"))
                and r.method == "POST" and "models" not in r.path], \
        "the check lists models: no prompt is sent"
