"""`verifybot mcp --http`: streamable HTTP on loopback, every request needing the token.

The server runs in its own process on a free loopback port; the SDK's client sends
the bearer token the server printed, and requests without it (or with another one)
are answered 401 before the MCP layer sees them.
"""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_clients import (
    HttpServer,
    Progress,
    all_gone_soon,
    free_port,
    history_rows,
    result,
    wait_listening,
    write_config,
)
from proc_helpers import kill_all, tagged
from project import verifybot_cmd


@pytest.fixture
def server(tmp_path: Path) -> Iterator[HttpServer]:
    write_config(tmp_path)
    port = free_port()
    s = HttpServer(tmp_path, port)
    try:
        wait_listening(port)
        yield s
    finally:
        s.close()


def _client(server: HttpServer, token: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                              timeout=httpx2.Timeout(30, read=300))
    return Client(streamable_http_client(server.url, http_client=http),
                  read_timeout_seconds=120)


async def test_tools_and_a_run_over_http_with_the_token(server: HttpServer,
                                                         tmp_path: Path) -> None:
    progress = Progress()
    async with _client(server, server.token) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        targets = result(await c.call_tool("list_targets", {}))["result"]
        ran = result(await c.call_tool("run", {"files": [
            {"path": "main.py", "content": "print('over http')\n"}], "target": "local"},
            progress_callback=progress))
    assert "run" in names and "verify" in names
    assert [t["name"] for t in targets] == ["local", "stm32"]
    assert (ran["status"], ran["stdout"]) == ("PASSED", "over http\n")
    assert "over http" in progress.text
    assert [r["llm"] for r in history_rows(tmp_path / "ws")] == ["mcp"]


def test_a_request_without_the_token_or_with_another_is_refused(server: HttpServer) -> None:
    missing_status, missing = server.request(None)
    wrong_status, wrong = server.request("not-" + server.token)
    right_status, _ = server.request(server.token)
    assert (missing_status, wrong_status, right_status) == (401, 401, 200)
    assert "bearer token missing" in missing["error"]
    assert "bearer token wrong" in wrong["error"]


async def test_the_sdk_client_without_the_token_gets_nothing(server: HttpServer,
                                                              tmp_path: Path) -> None:
    with pytest.raises(BaseExceptionGroup) as refused:
        async with _client(server, "guessed") as c:
            await c.call_tool("run", {"files": [{"path": "main.py", "content": "print(1)\n"}],
                                      "target": "local"})
    # The SDK reports the 401 as an error response to its first request (initialize).
    assert refused.value.subgroup(MCPError) is not None
    assert history_rows(tmp_path / "ws") == []


def test_a_non_loopback_address_is_refused_unless_allowed(tmp_path: Path) -> None:
    write_config(tmp_path)
    done = subprocess.run([*verifybot_cmd(), "mcp", "--config", str(tmp_path / "config.toml"),
                           "--http", "0.0.0.0:8765"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "not a loopback address" in done.stderr and "--allow-remote" in done.stderr
    bad = subprocess.run([*verifybot_cmd(), "mcp", "--config", str(tmp_path / "config.toml"),
                          "--http", "127.0.0.1"], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and "expected HOST:PORT" in bad.stderr


async def test_a_cancel_over_http_stops_the_program(server: HttpServer, tmp_path: Path) -> None:
    tag = f"mcp-http-cancel-{uuid.uuid4().hex}"
    code = ("import subprocess, sys, time\n"
            f"kid = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', "
            f"'{tag}'])\nprint('child started', flush=True)\ntime.sleep(600)\n")
    progress = Progress()
    try:
        async with _client(server, server.token) as c:
            call = asyncio.create_task(c.call_tool(
                "run", {"files": [{"path": "main.py", "content": code}], "target": "local",
                        "timeout": 300}, progress_callback=progress))
            await progress.wait_for("child started")
            # the child is in /proc by now; on a loaded machine its entry may lag a little
            deadline = asyncio.get_running_loop().time() + 10
            while not tagged(tag) and asyncio.get_running_loop().time() < deadline:
                await asyncio.sleep(0.1)
            assert len(tagged(tag)) == 1
            call.cancel()
            await asyncio.gather(call, return_exceptions=True)
            # The cancel is the client closing the response stream, which its event
            # loop (this test's) does: the wait must not block it.
            assert await all_gone_soon(lambda: tagged(tag)), tagged(tag)
        assert [r["status"] for r in history_rows(tmp_path / "ws")] == ["STOPPED"]
    finally:
        kill_all(tagged(tag))


async def test_only_the_lifespan_passes_the_guard_without_the_token() -> None:
    """The guard in front of the SDK's app: a websocket (no route today, maybe one
    tomorrow) is closed unheard without the token, like an HTTP request gets its 401."""
    from verifybot_tui.mcp_server.http import BearerGuard

    reached: list[str] = []

    async def app(scope, receive, send) -> None:  # type: ignore[no-untyped-def]
        reached.append(scope["type"])

    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    guard = BearerGuard(app, "tok")
    await guard({"type": "lifespan"}, None, send)
    await guard({"type": "websocket", "headers": []}, None, send)
    await guard({"type": "http", "headers": [(b"authorization", b"Bearer no")]}, None, send)
    assert reached == ["lifespan"]
    assert sent[0] == {"type": "websocket.close", "code": 1008}
    assert sent[1]["status"] == 401
    await guard({"type": "websocket", "headers": [(b"authorization", b"Bearer tok")]}, None,
                send)
    assert reached == ["lifespan", "websocket"]
