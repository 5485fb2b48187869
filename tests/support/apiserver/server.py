"""A loopback HTTP server that speaks the OpenAI chat-completions and Anthropic Messages APIs.

It follows the two public API references closely enough for the official client
libraries: server-sent events for streaming, error bodies with their status
codes and types, ``Retry-After`` on 429, a models list in each format. It is
stateless about conversations on purpose: the answer to a request is chosen by
the number of user turns in it, so a backend that forgets its conversation
gets the wrong answer (and the test sees the message list it sent).

The model name picks the behaviour:

- any name in ``answers``-driven ``models`` (``coder`` by default): answer N of
  the script for the request holding N user turns, streamed in small pieces;
- ``thinker``: reasoning first (``thinking`` blocks / ``reasoning_content``), then the answer;
- ``cut``: half the answer, then the connection is dropped mid-body;
- ``unfinished``: half the answer, then a clean end without a finish reason / ``message_stop``;
- ``ratelimit-once``: 429 with ``Retry-After: 1`` on the first request, then answers;
- ``ratelimit``: always 429 with ``Retry-After: 2``;
- ``flaky``: 500 on the first two requests of the server's life, then answers as ``coder``;
- ``overloaded``: always 529 (Anthropic's "overloaded_error"), without a Retry-After;
- ``coin``: a model that is right every other time: each new chat's first answer is
  answer 1, 2, 1, 2... of the script in turn (a "coin flip" that a test can count);
- ``small-context``: 400, the prompt is longer than the model's context;
- ``slow``: a piece every 0.1 s for a minute (cancellation tests);
- hostile ones (issue 21): ``endless-line`` (one SSE line that never ends),
  ``endless-thinking`` (reasoning deltas for ever), ``json-body`` (a whole
  non-streamed JSON answer), ``html`` (an HTML page with status 200),
  ``redirect-loop`` (a 307 to itself);
- any other name: 404, no such model.

Every request is recorded (method, path, headers, JSON body) and so is a
client that hangs up during a stream. A user turn may hold images as each API
takes them (chat completions: ``image_url`` parts with a base64 ``data:`` URL;
Messages: ``image`` blocks with a base64 ``source``); each is decoded and kept in
``images`` as (media type, bytes), and a malformed one is a 400, as the services do.
"""

from __future__ import annotations

import base64
import binascii
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loopback_http import serve

KNOWN_MODELS = ("coder", "thinker", "cut", "unfinished", "ratelimit-once", "ratelimit",
                "small-context", "slow", "flaky", "overloaded", "coin")
HOSTILE = ("endless-line", "endless-thinking", "json-body", "html", "redirect-loop")
ENDLESS_SECONDS = 60.0  # how long an endless stream lasts if the client never hangs up
CONTEXT_TOKENS = 1024


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ApiServer:
    key: str
    answers: list[str] = field(default_factory=lambda: ["Hello from the test model.\n"])
    thinking: str = "Let me think about the words and how to count them."
    requests: list[Recorded] = field(default_factory=list)
    hangups: list[float] = field(default_factory=list)
    rate_limited: int = 0
    server_errors: int = 0  # 500s and 529s sent (flaky, overloaded)
    coin_flips: int = 0  # new chats the coin model has answered
    models_route: bool = True  # False: like a server without GET /models
    extra_models: list[str] = field(default_factory=list)  # listed too (hostile ids)
    images: list[tuple[str, bytes]] = field(default_factory=list)  # (media type, data)
    _httpd: ThreadingHTTPServer | None = None

    def start(self) -> ApiServer:
        self._httpd = serve(_Handler, "apiserver", server_api=self)
        return self

    @property
    def port(self) -> int:
        assert self._httpd is not None
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The base URL both clients take (they append /chat/completions, /messages...)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        if self._httpd:
            self._httpd.shutdown()
            self._httpd.server_close()

    def chats(self) -> list[Recorded]:
        return [r for r in self.requests
                if r.path.endswith(("/chat/completions", "/messages")) and r.method == "POST"]


def _chunks(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _answer_pieces(answer: str, model: str) -> Iterator[str]:
    """The answer as both streams send it: in small pieces, only the first half of them
    for ``cut`` and ``unfinished``, and a pause of 0.1 s after each for ``slow``."""
    pieces = _chunks(answer)
    if model in ("cut", "unfinished"):
        pieces = pieces[:len(pieces) // 2]
    for piece in pieces:
        yield piece
        if model == "slow":
            time.sleep(0.1)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_api: ApiServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- plumbing ---------------------------------------------------------------

    def _body(self) -> Any:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _send(self, text: str) -> None:
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _cut(self) -> None:
        """Drop the connection in the middle of the body (no terminating chunk)."""
        self.wfile.flush()
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True

    # -- routes -----------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        api = self.server_api
        api.requests.append(Recorded("GET", self.path, {k.lower(): v for k, v in
                                                        self.headers.items()}, None))
        anthropic = "anthropic-version" in {k.lower() for k in self.headers}
        if not self._authorised(anthropic):
            return
        models = self.path.rstrip("/").endswith("/models") or "/models?" in self.path
        if models and api.models_route:
            listed = [*KNOWN_MODELS, *api.extra_models]
            if anthropic:
                data = [{"type": "model", "id": m, "display_name": m.title(),
                         "created_at": "2025-01-01T00:00:00Z"} for m in listed]
                self._json(200, {"data": data, "has_more": False,
                                 "first_id": data[0]["id"], "last_id": data[-1]["id"]})
            else:
                self._json(200, {"object": "list", "data": [
                    {"id": m, "object": "model", "created": 1700000000, "owned_by": "test"}
                    for m in listed]})
            return
        self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802
        api = self.server_api
        body = self._body()
        api.requests.append(Recorded("POST", self.path, {k.lower(): v for k, v in
                                                         self.headers.items()}, body))
        anthropic = self.path.rstrip("/").endswith("/messages")
        if not self._authorised(anthropic):
            return
        if not isinstance(body, dict):
            self._error(anthropic, 400, "invalid_request_error", "the body is not JSON")
            return
        model = body.get("model", "")
        if model in HOSTILE:
            self._hostile(model)
            return
        if model not in KNOWN_MODELS:
            if anthropic:
                self._error(True, 404, "not_found_error", f"model: {model}")
            else:
                self._error(False, 404, "invalid_request_error",
                            f"The model `{model}` does not exist or you do not have access "
                            "to it.", code="model_not_found")
            return
        if model == "ratelimit" or (model == "ratelimit-once" and api.rate_limited == 0):
            api.rate_limited += 1
            wait = "2" if model == "ratelimit" else "1"
            self._error(anthropic, 429, "rate_limit_error", "Rate limit reached for requests",
                        code="rate_limit_exceeded", headers={"Retry-After": wait})
            return
        if model == "overloaded" or (model == "flaky" and api.server_errors < 2):
            api.server_errors += 1
            status, kind = (529, "overloaded_error") if model == "overloaded" else (500,
                                                                                "api_error")
            self._error(anthropic, status, kind, "The server is overloaded" if status == 529
                        else "Internal server error")
            return
        messages = body.get("messages") or []
        bad = _images(messages, anthropic, api.images)
        if bad:
            self._error(anthropic, 400, "invalid_request_error", bad)
            return
        chars = sum(len(_text_of(m.get("content"))) for m in messages)
        chars += len(_text_of(body.get("system")))
        tokens = max(1, chars // 4)
        if model == "small-context":
            if anthropic:
                self._error(True, 400, "invalid_request_error",
                            f"prompt is too long: {tokens + CONTEXT_TOKENS} tokens > "
                            f"{CONTEXT_TOKENS} maximum")
            else:
                self._error(False, 400, "invalid_request_error",
                            f"This model's maximum context length is {CONTEXT_TOKENS} tokens. "
                            f"However, your messages resulted in {tokens + CONTEXT_TOKENS} "
                            "tokens. Please reduce the length of the messages.",
                            code="context_length_exceeded", param="messages")
            return
        users = sum(1 for m in messages if m.get("role") == "user")
        answer = api.answers[min(users, len(api.answers)) - 1] if users else "No question?\n"
        if model == "coin" and users == 1:  # a coin: new chats alternate answers 1 and 2
            answer = api.answers[api.coin_flips % len(api.answers)]
            api.coin_flips += 1
        if model == "slow":
            answer = "word " * 600
        if anthropic:
            self._anthropic_stream(body, model, answer, tokens)
        else:
            self._openai_stream(body, model, answer, tokens)

    def _hostile(self, model: str) -> None:
        """A server that misbehaves at the HTTP level, the same for both APIs."""
        if model == "redirect-loop":
            self.send_response(307)  # the method and body kept: a POST again, for ever
            self.send_header("Location", self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if model in ("json-body", "html"):
            html = model == "html"
            data = (b"<!doctype html><html><body>Please log in</body></html>" if html else
                    json.dumps({"id": "x", "object": "chat.completion", "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": "hi"},
                         "finish_reason": "stop"}]}).encode())
            self.send_response(200)
            self.send_header("Content-Type", "text/html" if html else "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self._start_stream()
        end = time.monotonic() + ENDLESS_SECONDS
        try:
            if model == "endless-line":
                self._send('data: {"choices": [{"index": 0, "delta": {"content": "')
            while time.monotonic() < end:
                if model == "endless-line":
                    self._send("a" * 65536)
                else:
                    self._send("data: " + json.dumps({"id": "t", "object": "chat.completion.chunk",
                               "created": 1, "model": model, "choices": [
                                   {"index": 0, "delta": {"reasoning_content": "hmm " * 4000},
                                    "finish_reason": None}]}) + "\n\n")
            self._end_stream()
        except (BrokenPipeError, ConnectionResetError):
            self.server_api.hangups.append(time.time())
            self.close_connection = True

    def _authorised(self, anthropic: bool) -> bool:
        key = self.server_api.key
        # Anthropic takes x-api-key, and (newer API versions, the library's choice) a
        # Bearer token; OpenAI-compatible servers take the Bearer token.
        given = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        if anthropic and self.headers.get("x-api-key") is not None:
            given = self.headers.get("x-api-key") or ""
        ok = given == key
        if not ok:
            # As the real services do, the message echoes (part of) the key it got:
            # the client must never show it.
            self._error(anthropic, 401, "authentication_error",
                        f"Incorrect API key provided: {given}. You can find your API key "
                        "in your account settings.", code="invalid_api_key")
        return ok

    def _error(self, anthropic: bool, status: int, etype: str, message: str, *,
               code: str | None = None, param: str | None = None,
               headers: dict[str, str] | None = None) -> None:
        if anthropic:
            body: dict[str, Any] = {"type": "error", "error": {"type": etype, "message": message}}
        else:
            oa_type = "invalid_request_error" if status in (400, 401, 404) else etype
            body = {"error": {"message": message, "type": oa_type, "param": param,
                              "code": code}}
        self._json(status, body, headers)

    # -- streams ------------------------------------------------------------------

    def _openai_stream(self, body: dict[str, Any], model: str, answer: str, tokens: int) -> None:
        self._start_stream()
        base = {"id": "chatcmpl-test", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": model}

        def event(delta: dict[str, Any], finish: str | None = None) -> None:
            self._send("data: " + json.dumps({**base, "choices": [
                {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n")

        try:
            event({"role": "assistant", "content": ""})
            if model == "thinker":
                for piece in _chunks(self.server_api.thinking):
                    event({"reasoning_content": piece})
            for piece in _answer_pieces(answer, model):
                event({"content": piece})
            if model == "cut":
                self._cut()
                return
            if model != "unfinished":
                event({}, "stop")
                if (body.get("stream_options") or {}).get("include_usage"):
                    self._send("data: " + json.dumps({**base, "choices": [], "usage": {
                        "prompt_tokens": tokens, "completion_tokens": len(answer) // 4,
                        "total_tokens": tokens + len(answer) // 4,
                        "cost": 0.00125}}) + "\n\n")
                self._send("data: [DONE]\n\n")
            self._end_stream()
        except (BrokenPipeError, ConnectionResetError):
            self.server_api.hangups.append(time.time())
            self.close_connection = True

    def _anthropic_stream(self, body: dict[str, Any], model: str, answer: str,
                          tokens: int) -> None:
        self._start_stream()

        def event(name: str, data: dict[str, Any]) -> None:
            self._send(f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n")

        try:
            event("message_start", {"message": {
                "id": "msg_test", "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": tokens, "output_tokens": 1}}})
            index = 0
            if model == "thinker" and body.get("thinking", {}).get("type") == "enabled":
                event("content_block_start", {"index": 0, "content_block": {
                    "type": "thinking", "thinking": "", "signature": ""}})
                for piece in _chunks(self.server_api.thinking):
                    event("content_block_delta", {"index": 0, "delta": {
                        "type": "thinking_delta", "thinking": piece}})
                event("content_block_delta", {"index": 0, "delta": {
                    "type": "signature_delta", "signature": "c2lnbmF0dXJl"}})
                event("content_block_stop", {"index": 0})
                index = 1
            event("content_block_start", {"index": index, "content_block": {
                "type": "text", "text": ""}})
            event("ping", {})
            for piece in _answer_pieces(answer, model):
                event("content_block_delta", {"index": index, "delta": {
                    "type": "text_delta", "text": piece}})
            if model == "cut":
                self._cut()
                return
            if model != "unfinished":
                event("content_block_stop", {"index": index})
                event("message_delta", {"delta": {"stop_reason": "end_turn",
                                                  "stop_sequence": None},
                                        "usage": {"output_tokens": len(answer) // 4}})
                event("message_stop", {})
            self._end_stream()
        except (BrokenPipeError, ConnectionResetError):
            self.server_api.hangups.append(time.time())
            self.close_connection = True


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return ""


IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def _images(messages: list[Any], anthropic: bool, into: list[tuple[str, bytes]]) -> str:
    """Decode every image part of the messages into ``into``; the first fault's message
    (what the service would answer with a 400), or "" when all are well formed."""
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        for part in content if isinstance(content, list) else []:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                continue
            if anthropic and kind == "image":
                source = part.get("source") or {}
                media, data = source.get("media_type", ""), source.get("data", "")
                if source.get("type") != "base64":
                    return "messages: image source type must be base64"
            elif not anthropic and kind == "image_url":
                url = str((part.get("image_url") or {}).get("url", ""))
                head, _, data = url.partition(",")
                if not head.startswith("data:") or not head.endswith(";base64"):
                    return "Invalid image URL: expected a base64 data: URL"
                media = head.removeprefix("data:").removesuffix(";base64")
            else:
                return f"messages: content part type {kind!r} is not supported"
            if media not in IMAGE_TYPES:
                return f"Invalid image media type {media!r}"
            try:
                into.append((media, base64.b64decode(data, validate=True)))
            except (binascii.Error, ValueError):
                return "Invalid image: the base64 data does not decode"
    return ""
