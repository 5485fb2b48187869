"""The real app on an API backend: the loop runs through it, the status bar shows the tokens
and cost, and the model's thinking arrives as its own loop event, apart from the answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from api_fixtures import KEY, KEY_ENV
from apiserver import ApiServer

from verifybot_tui.core.loop.events import AnswerText, Finished, ThinkingText
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = pytest.mark.usefixtures("tui_env")


async def test_app_loop_over_the_openai_api_shows_tokens_and_cost(
        tui, api_server: ApiServer, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch, app_messages) -> None:  # noqa: ANN001
    monkeypatch.setenv(KEY_ENV, KEY)
    ws = tui.ws
    data = {"run": {"auto_accept": True},
            "llm": {"api": {"kind": "openai", "base_url": api_server.url, "model": "thinker",
                            "api_key_env": KEY_ENV}}}
    app = tui.make_app(ws, data=data, llm="api")
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "Print the total number of words and the 3 most common")
        await tui.wait_idle(pilot, 60)
        finished = [e for e in seen if isinstance(e, Finished)]
        assert finished and finished[-1].exit_code == 0, finished
        bar = tui.main(app).query_one(StatusBar)
        text = await tui.wait_for(pilot, lambda: "tokens" in str(bar.render()) and
                                  str(bar.render()), what="tokens in the status bar")
        assert "out tokens, $0.0025" in text  # two answers, the cost the server reported
        thinking = [e for e in seen if isinstance(e, ThinkingText)]
        answers = [e for e in seen if isinstance(e, AnswerText)]
        assert thinking and thinking[-1].text == api_server.thinking
        assert all(api_server.thinking not in e.text for e in answers)
    assert len(api_server.chats()) == 2
