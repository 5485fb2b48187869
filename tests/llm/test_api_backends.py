"""The API backends in-process against the loopback server: streaming, thinking, usage,
cancellation, and a resumed session whose conversation is rebuilt from history.db."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from api_fixtures import (
    KEY,
    KEY_ENV,
    PROMPT,
    api_server,  # noqa: F401 (a fixture)
    files_holding,
    llm_table,
    run_cli,
    write_config,
)
from apiserver import ApiServer

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.loop.events import Event, Finished, ThinkingText
from verifybot_tui.core.loop.verify_loop import VerifyLoop
from verifybot_tui.core.settings.config import Config, LLMConfig, load_config
from verifybot_tui.core.store.history import History
from verifybot_tui.llm import make_llm
from verifybot_tui.llm.api_common import Usage, scrub
from verifybot_tui.llm.api_kinds import make_api_llm
from verifybot_tui.targets import make_target


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def _cfg(server: ApiServer, kind: str, model: str, **kw: object) -> LLMConfig:
    url = server.url if kind == "openai" else server.anthropic_url
    return LLMConfig(name="api", kind=kind, base_url=url, model=model, api_key_env=KEY_ENV,
                     **kw)  # type: ignore[arg-type]


async def _until(cond, what: str, limit: float = 10.0) -> None:  # noqa: ANN001
    """Wait for a condition (never a fixed sleep as the assertion)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while not cond():
        assert loop.time() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_streams_text_as_it_arrives_and_counts_usage(kind: str,
                                                          api_server: ApiServer,  # noqa: F811
                                                          tmp_path: Path) -> None:
    llm = make_api_llm(_cfg(api_server, kind, "coder"), tmp_path)
    seen: list[str] = []
    totals: list[Usage] = []
    llm.on_usage = totals.append
    try:
        answer = await llm.ask("first", seen.append)
        await llm.ask("second")
    finally:
        await llm.close()
    assert answer.markdown == api_server.answers[0]
    assert answer.model == "coder"  # as the server's response names it
    assert len(seen) > 3 and seen[-1] == answer.markdown  # whole text so far, growing
    assert all(api_server.answers[0].startswith(s) for s in seen)
    assert answer.conversation_url and answer.conversation_url.startswith("api:api/")
    assert len(totals) == 2 and llm.usage.input_tokens > 0 and llm.usage.output_tokens > 0
    assert llm.usage.cost == (pytest.approx(0.0025) if kind == "openai" else None)
    assert "tokens" in llm.usage.summary()
    assert [len(r.body["messages"]) for r in api_server.chats()] == [1, 3]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_thinking_is_shown_apart_and_never_the_answer(kind: str,
                                                            api_server: ApiServer,  # noqa: F811
                                                            tmp_path: Path) -> None:
    extra = {"thinking_budget": 2048} if kind == "anthropic" else {}
    llm = make_api_llm(_cfg(api_server, kind, "thinker", **extra), tmp_path)
    thoughts: list[str] = []
    llm.on_thinking = thoughts.append
    try:
        answer = await llm.ask("think first")
    finally:
        await llm.close()
    assert thoughts and thoughts[-1] == api_server.thinking == answer.thinking
    assert answer.markdown == api_server.answers[0]
    assert api_server.thinking not in answer.markdown
    if kind == "anthropic":
        assert api_server.chats()[0].body["thinking"] == {"type": "enabled",
                                                          "budget_tokens": 2048}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_cancel_closes_the_stream_at_once(kind: str, api_server: ApiServer,  # noqa: F811
                                                tmp_path: Path) -> None:
    llm = make_api_llm(_cfg(api_server, kind, "slow"), tmp_path)
    seen: list[str] = []
    task = asyncio.create_task(llm.ask("a long one", seen.append))
    await _until(lambda: len(seen) >= 3, "the first pieces")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # The server notices the closed connection at its next write (one every 0.1 s);
    # without the close it would stream for a minute.
    await _until(lambda: api_server.hangups, "the server to see the client hang up", 5)
    assert llm.state == "idle" and llm.messages == []  # nothing half-answered is kept
    await llm.close()


async def loop_events(config: Config, ws: Path, prompt: str, *, max_retries: int,
                      **kw: Any) -> list[Event]:
    """Every event of one auto-accepted VerifyLoop run on the [llm.api] backend and the
    local target (``kw`` to ``events()``), the LLM, target and history closed after it."""
    llm = make_llm(config, "api", ws)
    target = make_target(config, "local", ws)
    history = History(ws)
    loop = VerifyLoop(config=config, llm=llm, target=target, history=history,
                      auto_accept=True, max_retries=max_retries, workspace=ws)
    try:
        return [ev async for ev in loop.events(prompt, **kw)]
    finally:
        await llm.close()
        await target.close()
        history.close()


async def test_a_resumed_session_rebuilds_its_conversation_from_history(
        api_server: ApiServer, tmp_path: Path) -> None:  # noqa: F811
    """Session 1 runs in a process that ends; a new process resumes it, same messages."""
    cfg_path = write_config(tmp_path, llm_table("api", "openai", api_server.url, "coder"))
    ws = tmp_path / "ws"
    proc = await asyncio.to_thread(
        run_cli, "run", PROMPT, "--llm", "api", "--target", "local", "--yes",
        "--config", str(cfg_path), "--workspace", str(ws), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    first = api_server.chats()[-1].body["messages"]
    assert len(first) == 3

    config = load_config(str(cfg_path))
    config.run.workspace = str(ws)
    events = await loop_events(config, ws, "Now also print the number of lines.",
                               max_retries=0, new_chat=False, resume=1)
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.exit_code == 0, finished
    resumed = api_server.chats()[-1].body["messages"]
    answers = [m for m in resumed if m["role"] == "assistant"]
    assert resumed[:3] == first and len(answers) == 2
    assert answers[1]["content"] == api_server.answers[1]
    assert resumed[-1] == {"role": "user", "content": "Now also print the number of lines."}
    assert files_holding(ws, KEY) == []


async def test_the_loop_sends_thinking_as_its_own_event(api_server: ApiServer,  # noqa: F811
                                                        tmp_path: Path) -> None:
    cfg_path = write_config(tmp_path, llm_table("api", "openai", api_server.url, "thinker"))
    config = load_config(str(cfg_path))
    events = await loop_events(config, tmp_path / "ws", PROMPT, max_retries=1)
    finished = events[-1]
    assert isinstance(finished, Finished) and finished.exit_code == 0
    thinking = [e for e in events if isinstance(e, ThinkingText)]
    assert thinking and thinking[-1].text == api_server.thinking


def test_scrub_removes_the_key_and_its_visible_ends() -> None:
    key = "sk-proj-abcdefghijklmnop1234"
    assert key not in scrub(f"Incorrect API key provided: {key}.", key)
    assert "sk-proj-" not in scrub("Incorrect API key provided: sk-proj-****1234", key)
    assert "1234" not in scrub("key ends in ...1234", key)


async def test_no_key_for_the_official_url_says_which_variable(tmp_path: Path) -> None:
    os.environ.pop(KEY_ENV, None)
    llm = make_api_llm(LLMConfig(name="gpt", kind="anthropic", model="claude",
                                 api_key_env=KEY_ENV), tmp_path)
    with pytest.raises(LLMError, match=r"\$VB_TEST_API_KEY is not set"):
        await llm.start()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_check_provider_without_a_models_list_asks_for_one_token(
        kind: str, api_server: ApiServer, tmp_path: Path) -> None:  # noqa: F811
    from verifybot_tui.llm.api_check import check_provider

    api_server.models_route = False
    result = await check_provider(_cfg(api_server, kind, "coder"), tmp_path)
    assert result.ok and "one-token request" in result.text
    body = api_server.chats()[-1].body
    assert body["max_tokens"] == 1 and body["model"] == "coder"
    missing = await check_provider(_cfg(api_server, kind, "gpt-9"), tmp_path)
    assert not missing.ok and missing.state == "model_missing" and "404" in missing.text


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_options_go_into_the_request_as_each_api_wants_them(
        kind: str, api_server: ApiServer, tmp_path: Path) -> None:  # noqa: F811
    llm = make_api_llm(_cfg(api_server, kind, "coder", system="Be brief.", temperature=0.2,
                            max_tokens=500), tmp_path)
    try:
        await llm.ask("hello")
    finally:
        await llm.close()
    body = api_server.chats()[0].body
    assert body["temperature"] == 0.2 and body["max_tokens"] == 500
    if kind == "openai":
        assert body["messages"] == [{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": "hello"}]
    else:
        assert body["system"] == "Be brief."
        assert body["messages"] == [{"role": "user", "content": "hello"}]


def test_retry_after_in_seconds_milliseconds_or_an_http_date() -> None:
    import email.utils
    import time

    from verifybot_tui.llm.api_common import parse_retry_after

    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({}) is None and parse_retry_after({"retry-after": "soon"}) is None
    date = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 50 < parse_retry_after({"retry-after": date}) <= 60


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_the_state_is_sent_until_the_first_byte_not_streaming(
        kind: str, api_server: ApiServer, tmp_path: Path) -> None:  # noqa: F811
    """Issue 23: the status bar said "streaming…" before anything had arrived. Through a
    rate-limit wait, the state says what is true: sent, waiting, sent, then streaming."""
    llm = make_api_llm(_cfg(api_server, kind, "ratelimit-once"), tmp_path)
    states: list[tuple[str, int]] = []
    texts: list[str] = []
    llm.on_state(lambda s: states.append((s, len(texts))))
    try:
        await llm.ask("first", texts.append)
    finally:
        await llm.close()
    seen = [s for s, _n in states]
    asked = seen[seen.index("sent"):]
    assert asked[:asked.index("idle") + 1] == ["sent", "waiting", "sent", "streaming", "idle"], \
        seen
    assert all(n == 0 for s, n in states if s in ("sent", "waiting")), states
