"""Streamable HTTP for `verifybot mcp --http HOST:PORT`: loopback, and a bearer token.

Any program on the machine can reach a loopback port, so every request must carry
the token printed at the start (``Authorization: Bearer <token>``), compared in
constant time; one without it is answered 401 before the MCP layer sees it. An
address other than loopback would let the network in, so it is refused unless the
user says ``--allow-remote``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import secrets
from typing import Any

from verifybot_tui.core.base.errors import ConfigError


def parse_address(text: str, *, allow_remote: bool) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ConfigError(f"--http {text}: expected HOST:PORT, e.g. 127.0.0.1:8765")
    if not allow_remote and not is_loopback(host):
        raise ConfigError(f"--http {text}: {host} is not a loopback address, so other "
                          "machines could reach VerifyBot's targets; use 127.0.0.1, or add "
                          "--allow-remote if that is what you want (the token still guards it)")
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    return secrets.token_urlsafe(32)


class BearerGuard:
    """ASGI middleware: a request without ``Authorization: Bearer <token>`` gets a 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":  # the server's start and stop: no client in it
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if hmac.compare_digest(given, self.expected):
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # a websocket (or what comes next) is closed unheard
            await send({"type": "websocket.close", "code": 1008})
            return
        why = "missing" if not given else "wrong"
        body = json.dumps({"error": f"bearer token {why}: send the header 'Authorization: "
                                    "Bearer <token>' with the token verifybot mcp printed "
                                    "at its start"}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"),
                                (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": body})


async def serve_http(server: Any, host: str, port: int, token: str, say: Any) -> None:
    import uvicorn

    app = BearerGuard(server.streamable_http_app(host=host), token)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    shown = f"[{host}]" if ":" in host else host
    say(f"VerifyBot MCP server on http://{shown}:{port}/mcp")
    say(f"bearer token (send 'Authorization: Bearer <token>'): {token}")
    await uvicorn.Server(config).serve()
