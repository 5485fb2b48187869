"""What a hostile or odd API server cannot do to us: grow memory without end, or mislead.

The official client libraries read a server-sent-events stream line by line and
keep a line (and an event) whole until it ends: a server that sends one endless
line grew VerifyBot to 10 GB in a minute. So the libraries get an HTTP transport
of ours that counts the bytes of the current line, of the current event and of
the whole body, and ends the stream past ``[run] max_answer_mb`` (a line may be
twice that, for JSON's escapes). It also tells a body that is not a stream at all
(a whole JSON answer, an HTML page) apart from a stream that broke, and the
backend names a redirect loop, so each odd body has its own message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

from verifybot_tui.core.settings.config_review import site_origin


class OddBody(Exception):
    """The server's answer is not the stream we asked for; the text says what it was."""


def is_odd_body(e: BaseException) -> str | None:
    """The message for an odd body, a too-long stream or a redirect loop in ``e``'s chain."""
    seen: BaseException | None = e
    for _ in range(8):
        if seen is None:
            return None
        if isinstance(seen, OddBody):
            return str(seen)
        if isinstance(seen, httpx2.TooManyRedirects):
            return ("the server redirects in a loop (too many redirects); base_url is "
                    "likely wrong or points at a proxy's login")
        seen = seen.__cause__ or seen.__context__
    return None


class _Bounded(httpx2.AsyncByteStream):
    """A response body that ends (OddBody) when a line, an event or the body is too long."""

    def __init__(self, inner: Any, limit: int) -> None:
        self.inner = inner
        self.line_limit = 2 * limit
        self.body_limit = 8 * limit
        self.limit_mb = limit / (1024 * 1024)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        line = event = body = 0
        async for chunk in self.inner:
            body += len(chunk)
            cut = chunk.rfind(b"\n")
            line = len(chunk) - cut - 1 if cut >= 0 else line + len(chunk)
            blank = chunk.rfind(b"\n\n")
            event = len(chunk) - blank - 2 if blank >= 0 else event + len(chunk)
            if line > self.line_limit or event > self.line_limit:
                raise OddBody(f"one line of the stream passed {self.line_limit:,} bytes "
                              f"(twice [run] max_answer_mb = {self.limit_mb:g}) without "
                              "ending; the server is broken or hostile")
            if body > self.body_limit:
                raise OddBody(f"the stream passed {self.body_limit:,} bytes (8 times [run] "
                              f"max_answer_mb = {self.limit_mb:g}); it is not used")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()


class ElsewhereRefused(OddBody):
    """A request (a redirect, a changed base_url) for another server than the one the key
    was given for: not sent."""


class BoundedTransport(httpx2.AsyncBaseTransport):
    """The libraries' HTTP transport, with every streamed body bounded (see the module),
    and every request checked, as it is made, to go to ``base_url``'s server: the one
    whose key the user's own config (or an approved file) named for it."""

    def __init__(self, limit: int, base_url: str = "") -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.limit = limit
        self.base_url = base_url

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if self.base_url and site_origin(str(request.url)) != site_origin(self.base_url):
            raise ElsewhereRefused(
                f"a request to {request.url.scheme}://{request.url.netloc.decode()} was not "
                f"sent: the API key goes only to the server of base_url ({self.base_url}), "
                "as your own config (or a file you approved) says; a redirect or another "
                "server is refused")
        response = await self.inner.handle_async_request(request)
        if request.method != "POST" or not 200 <= response.status_code < 300:
            return response  # errors are small JSON bodies the libraries read whole
        kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind != "text/event-stream":
            await response.aclose()
            raise OddBody(_not_a_stream(kind))
        return httpx2.Response(response.status_code, headers=response.headers,
                               stream=_Bounded(response.stream, self.limit),
                               request=request, extensions=response.extensions)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _not_a_stream(kind: str) -> str:
    if kind in ("text/html", "application/xhtml+xml"):
        return ("the server answered with an HTML page, not the API (a proxy, a login page "
                "or a wrong base_url): check base_url")
    if kind.endswith("json"):
        return ("the server sent a whole JSON answer, not a stream: it ignores stream=true, "
                "which VerifyBot needs; use a server or model that streams")
    return (f"the server answered with {kind or 'no content type'}, not a stream "
            "(text/event-stream): check base_url")
