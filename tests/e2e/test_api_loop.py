"""The whole loop over each API kind: ``verifybot run`` as a subprocess against the loopback server.

The server answers with the word-count example (a real bug, then the fix) and
records every request, so the test checks on the server's side that the
feedback went as a follow-up in one conversation, and that no request carried
anything but the prompt texts (and the earlier answers) and the key header.
The checks of what an error says and its exit code call the same entry in the
test's process (``run_here``); the loop, Ctrl+C and doctor run as processes.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from api_fixtures import (
    KEY,
    PROMPT,
    api_server,  # noqa: F401 (a fixture)
    closed_port,
    files_holding,
    llm_table,
    run_cli,
    run_here,
    write_config,
)
from apiserver import ApiServer
from project import verifybot_cmd

from verifybot_tui.llm.replay import parse_answers

# What the client libraries may send besides the body: transport headers, the API
# version, the key (Authorization or x-api-key), and two request-scoped SDK counters.
ALLOWED_HEADERS = {"host", "accept-encoding", "connection", "accept", "content-type",
                   "content-length", "user-agent", "authorization", "x-api-key",
                   "anthropic-version", "x-stainless-retry-count", "x-stainless-read-timeout",
                   "x-stainless-timeout"}
BODY_KEYS = {"openai": {"model", "messages", "stream", "stream_options"},
             "anthropic": {"model", "messages", "stream", "max_tokens", "thinking"}}


def _prompts(ws: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(ws / "history.db")
    try:
        return con.execute("SELECT text, answer FROM prompts ORDER BY id").fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_loop_fails_feeds_back_and_fixes_in_one_conversation(
        kind: str, api_server: ApiServer, tmp_path: Path) -> None:  # noqa: F811
    url = api_server.url if kind == "openai" else api_server.anthropic_url
    extra = {"thinking_budget": 2048, "max_tokens": 8000} if kind == "anthropic" else {}
    model = "thinker" if kind == "anthropic" else "coder"
    cfg = write_config(tmp_path, llm_table("api", kind, url, model, **extra))
    ws = tmp_path / "ws"
    proc = run_cli("run", PROMPT, "--llm", "api", "--target", "local", "--yes",
                   "--config", str(cfg), "--workspace", str(ws), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "TypeError" in proc.stderr and "Total words: 17" in proc.stdout

    chats = api_server.chats()
    assert len(chats) == 2
    sent = _prompts(ws)
    assert len(sent) == 2 and all(answer for _, answer in sent)
    (p1, a1), (p2, _a2) = sent
    assert "TypeError" in p2  # the feedback
    # One conversation that grows: the second request holds the first exchange.
    assert chats[0].body["messages"] == [{"role": "user", "content": p1}]
    assert chats[1].body["messages"] == [{"role": "user", "content": p1},
                                         {"role": "assistant", "content": a1},
                                         {"role": "user", "content": p2}]
    assert a1 == api_server.answers[0]
    for req in chats:
        assert set(req.body) <= BODY_KEYS[kind], req.body.keys()
        assert req.body["model"] == model and req.body["stream"] is True
        assert set(req.headers) <= ALLOWED_HEADERS, set(req.headers) - ALLOWED_HEADERS
        auth = req.headers.get("x-api-key") or req.headers["authorization"]
        assert auth in (KEY, f"Bearer {KEY}")
        assert all(KEY not in v for k, v in req.headers.items()
                   if k not in ("authorization", "x-api-key"))

    transcript = next((ws / "raw_md").glob("*.md")).read_text(encoding="utf-8")
    assert f"{kind} at {url}" in transcript and f"model {model}" in transcript
    assert "in /" in transcript and "out tokens" in transcript
    if kind == "openai":
        assert "$0.0013" in transcript  # the cost the server reported
    else:
        # Thinking is kept apart in the transcript and is never part of an answer.
        assert "## Thinking 1 (not part of the answer)" in transcript
        assert api_server.thinking not in a1
        assert all(api_server.thinking not in answer for _, answer in sent)
    # The transcript replays as it was answered (thinking and usage notes are not answers).
    assert parse_answers(transcript) == [answer for _, answer in sent]
    # The key is nowhere: not in the workspace (programs, outputs, transcripts,
    # history.db), not in what the command printed.
    assert files_holding(ws, KEY) == []
    assert KEY not in proc.stdout + proc.stderr


ERRORS = [
    # (model, key, expected words in the message)
    ("no-such-model", KEY, ["no model 'no-such-model' (404)", "the server offers: coder"]),
    ("coder", "vb-wrong-key-0000000000", ["refused the key in $VB_TEST_API_KEY (401)"]),
    ("ratelimit", KEY, ["rate limit (429)", "wait 2 s", "tried 2 times"]),
    ("small-context", KEY, ["prompt is too long", "characters (about",
                            "Start a new chat"]),
    ("cut", KEY, ["stopped half-way", "it is not used"]),
    ("unfinished", KEY, ["stopped half-way", "it is not used"]),
]


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize(("model", "key", "words"), ERRORS,
                         ids=[e[0] if e[1] == KEY else "bad-key" for e in ERRORS])
def test_each_error_has_its_message_and_exit_3(kind: str, model: str, key: str,
                                               words: list[str], api_server: ApiServer,  # noqa: F811
                                               tmp_path: Path) -> None:
    url = api_server.url if kind == "openai" else api_server.anthropic_url
    cfg = write_config(tmp_path, llm_table("api", kind, url, model, retries=1))
    ws = tmp_path / "ws"
    proc = run_here("run", PROMPT, "--llm", "api", "--target", "local", "--yes",
                   "--config", str(cfg), "--workspace", str(ws), cwd=tmp_path, key=key)
    assert proc.returncode == 3, proc.stderr
    for w in words:
        assert w in proc.stderr, (w, proc.stderr)
    # Nothing was run: a cut answer is never taken as an answer.
    assert not (ws / "programs").exists() or not any((ws / "programs").iterdir())
    assert _prompts(ws)[0][1] is None
    assert key not in proc.stdout + proc.stderr  # the server echoed it; we never show it
    assert files_holding(ws, key) == []
    if model == "ratelimit":
        assert api_server.rate_limited == 2  # retries = 1: Retry-After honoured once, then stopped


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_server_down_names_the_url(kind: str, tmp_path: Path) -> None:
    port = closed_port()
    url = f"http://127.0.0.1:{port}" + ("/v1" if kind == "openai" else "")
    cfg = write_config(tmp_path, llm_table("api", kind, url, "coder"))
    proc = run_here("run", PROMPT, "--llm", "api", "--target", "local", "--yes",
                   "--config", str(cfg), "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert f"cannot connect to {url}" in proc.stderr
    assert "is the server running?" in proc.stderr


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_ctrl_c_during_the_answer_closes_the_stream_at_once(
        kind: str, api_server: ApiServer, tmp_path: Path) -> None:  # noqa: F811
    url = api_server.url if kind == "openai" else api_server.anthropic_url
    cfg = write_config(tmp_path, llm_table("api", kind, url, "slow"))
    env = {**os.environ, "VB_TEST_API_KEY": KEY}
    proc = subprocess.Popen([*verifybot_cmd(), "run", PROMPT, "--llm", "api", "--target",
                             "local", "--yes", "--config", str(cfg), "--workspace",
                             str(tmp_path / "ws")], cwd=tmp_path, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not api_server.chats():  # wait for the request, then for it to be streaming
            assert time.monotonic() < deadline and proc.poll() is None, "no request came"
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "INTERRUPTED" in err
    # The stream (a minute long) was closed, not read to its end (the server sees it
    # at its next write; test_api_backends shows the close comes from the cancel itself).
    deadline = time.monotonic() + 5
    while not api_server.hangups:
        assert time.monotonic() < deadline, "the server never saw the client hang up"
        time.sleep(0.05)
    ws = tmp_path / "ws"
    assert files_holding(ws, KEY) == []


def test_rate_limit_once_is_waited_out(api_server: ApiServer,  # noqa: F811
                                       tmp_path: Path) -> None:
    cfg = write_config(tmp_path, llm_table("api", "openai", api_server.url, "ratelimit-once"))
    proc = run_here("run", PROMPT, "--llm", "api", "--target", "local", "--yes",
                   "--config", str(cfg), "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert api_server.rate_limited == 1 and len(api_server.chats()) == 3
    assert "rate limited (429); waiting 1 s as the server asks" in proc.stderr


def test_missing_key_variable_for_the_official_service(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, '[llm.gpt]\nkind = "openai"\nmodel = "gpt-5"\n'
                                 'api_key_env = "VB_TEST_API_KEY"\n')
    proc = run_here("run", PROMPT, "--llm", "gpt", "--target", "local", "--yes",
                   "--config", str(cfg), "--workspace", str(tmp_path / "ws"), cwd=tmp_path,
                   key=None)
    assert proc.returncode == 3, proc.stderr
    assert "$VB_TEST_API_KEY is not set" in proc.stderr


def test_doctor_on_a_good_a_bad_key_a_missing_model_and_an_unreachable_provider(
        api_server: ApiServer, tmp_path: Path) -> None:  # noqa: F811
    down = f"http://127.0.0.1:{closed_port()}/v1"
    cfg = write_config(
        tmp_path,
        '[llm.chatgpt]\nbrowser_path = "/usr/bin/chromium"\n',
        llm_table("good", "openai", api_server.url, "coder"),
        llm_table("claude_api", "anthropic", api_server.anthropic_url, "thinker"),
        llm_table("wrongmodel", "openai", api_server.url, "gpt-9"),
        llm_table("down", "openai", down, "coder"),
        '[llm.badkey]\nkind = "anthropic"\nmodel = "coder"\n'
        f'base_url = "{api_server.anthropic_url}"\napi_key_env = "VB_TEST_BAD_KEY"\n',
        '[llm.official]\nkind = "openai"\nmodel = "gpt-5"\napi_key_env = "VB_TEST_UNSET"\n')
    env = {**os.environ, "VB_TEST_API_KEY": KEY, "VB_TEST_BAD_KEY": "vb-bad-1234567890"}
    env.pop("VB_TEST_UNSET", None)
    proc = subprocess.run([*verifybot_cmd(), "doctor", "--config", str(cfg)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert (f"OK   llm good: openai at {api_server.url}: key accepted, model coder offered"
            in out)
    assert "OK   llm claude_api: anthropic at" in out
    assert "FAIL llm wrongmodel:" in out and "no model 'gpt-9'" in out
    assert "the server offers: coder, coin, cut" in out
    assert "FAIL llm badkey:" in out and "refused the key in $VB_TEST_BAD_KEY (401)" in out
    assert f"FAIL llm down: cannot connect to {down}" in out
    assert "FAIL llm official: $VB_TEST_UNSET is not set" in out
    assert "vb-bad-1234567890" not in out + proc.stderr and KEY not in out + proc.stderr
    # The check sent no prompt: only models lists were asked for.
    assert api_server.chats() == []


def test_login_says_an_api_provider_needs_none(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, llm_table("api", "openai", "http://127.0.0.1:9/v1", "m"))
    proc = run_here("login", "--llm", "api", "--config", str(cfg), cwd=tmp_path)
    assert proc.returncode == 0
    assert "it needs no login" in proc.stderr and "$VB_TEST_API_KEY" in proc.stderr


def test_a_server_that_wants_a_key_when_none_is_set(api_server: ApiServer,  # noqa: F811
                                                    tmp_path: Path) -> None:
    cfg = write_config(tmp_path, llm_table("api", "openai", api_server.url, "coder"))
    proc = run_here("run", PROMPT, "--llm", "api", "--target", "local", "--yes",
                   "--config", str(cfg), "--workspace", str(tmp_path / "ws"), cwd=tmp_path,
                   key=None)
    assert proc.returncode == 3, proc.stderr
    assert "wants an API key (401) and $VB_TEST_API_KEY is not set" in proc.stderr
