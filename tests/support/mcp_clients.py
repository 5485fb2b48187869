"""`verifybot mcp` as an agent starts it, and the SDK's own client talking to it.

The server is the real command in its own process (stdio, or HTTP on a loopback
port), with the test's config; the client is the official SDK's ``mcp.Client``, so
what a test sees is what Claude Code or Codex would see.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from project import verifybot_cmd

CONFIG = """\
[run]
workspace = "ws"
default_llm = "chatgpt"

[targets.stm32]
kind = "mcu"
board = "netduinoplus2"
"""


def write_config(folder: Path, extra: str = "") -> Path:
    path = folder / "config.toml"
    path.write_text(CONFIG + extra)
    return path


def stdio_server(folder: Path, *more: str) -> StdioServerParameters:
    """`verifybot mcp --config folder/config.toml`, started in ``folder`` as a client does."""
    cmd = verifybot_cmd()
    return StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", "--config",
                                                       str(folder / "config.toml"), *more],
                                 env=dict(os.environ), cwd=str(folder))


def client(folder: Path) -> Client:
    return Client(stdio_server(folder), read_timeout_seconds=120)


class Progress:
    """The progress notifications of one call, in order, and a wait for one of them."""

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.values: list[float] = []
        self._changed = asyncio.Event()

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.values.append(progress)
        self.messages.append(message or "")
        self._changed.set()

    @property
    def text(self) -> str:
        return "\n".join(self.messages)

    async def wait_for(self, needle: str, within: float = 60) -> None:
        deadline = time.monotonic() + within
        while needle not in self.text:
            self._changed.clear()
            left = deadline - time.monotonic()
            assert left > 0, f"no progress message with {needle!r}; got: {self.messages}"
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                pass


async def all_gone_soon(pids: Any, within: float = 10) -> bool:
    """Whether every process ``pids()`` finds has stopped, waiting up to ``within``
    seconds without blocking the event loop: a client's cancel is sent by its loop."""
    from proc_helpers import all_gone

    deadline = time.monotonic() + within
    while not all_gone(pids(), 0) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return all_gone(pids(), 0)


def result(call: Any) -> dict[str, Any]:
    """A tool's structured result (a list comes wrapped as {"result": [...]})."""
    assert not call.is_error, call.content[0].text
    data = call.structured_content
    assert data is not None, call
    return data


def error_text(call: Any) -> str:
    assert call.is_error, f"expected an error, got {call.structured_content}"
    return call.content[0].text


def history_rows(workspace: Path) -> list[dict[str, Any]]:
    import sqlite3

    if not (workspace / "history.db").exists():
        return []
    db = sqlite3.connect(workspace / "history.db")
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute("SELECT * FROM sessions ORDER BY id")]
    finally:
        db.close()


class HttpServer:
    """`verifybot mcp --http 127.0.0.1:PORT` in its own process; the token it printed."""

    def __init__(self, folder: Path, port: int) -> None:
        cmd = verifybot_cmd()
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.proc = subprocess.Popen(
            [*cmd, "mcp", "--config", str(folder / "config.toml"), "--http",
             f"127.0.0.1:{port}"], cwd=folder, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.token = self._read_token()

    def _read_token(self) -> str:
        assert self.proc.stderr is not None
        seen = []
        for line in self.proc.stderr:
            seen.append(line)
            m = re.search(r"bearer token .*: (\S+)$", line.strip())
            if m:
                return m.group(1)
        raise AssertionError(f"the server printed no token: {''.join(seen)}")

    def request(self, token: str | None) -> tuple[int, dict[str, Any]]:
        """One initialize request, with this token (or none): the status and the body."""
        import urllib.error
        import urllib.request

        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}).encode()
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        req = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, {}
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(port: int, within: float = 30) -> None:
    import socket

    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


__all__ = ["CONFIG", "HttpServer", "Progress", "all_gone_soon", "client", "error_text", "free_port",
           "history_rows", "result", "stdio_server", "wait_listening", "write_config"]
