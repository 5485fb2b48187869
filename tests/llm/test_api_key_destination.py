"""An API key goes only to the server of the base_url the user's own config (or a file the
user approved) names, checked as each request is made: a redirect to another server, or a
base_url changed after the backend was made, sends nothing. Real servers on loopback."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_fixtures import (
    KEY,
    KEY_ENV,
    api_server,  # noqa: F401 (a fixture)
)
from apiserver import ApiServer

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.api_kinds import make_api_llm


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


class Redirector:
    """A loopback server that answers every request with a 307 to ``to`` (same path)."""

    def __init__(self, to: str) -> None:
        self.keys: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _redirect(self) -> None:
                outer.keys.append(self.headers.get("authorization", "")
                                  + self.headers.get("x-api-key", ""))
                self.send_response(307)
                self.send_header("Location", to + self.path.split("/v1", 1)[-1])
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = _redirect

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def redirector(api_server: ApiServer) -> Iterator[Redirector]:  # noqa: F811
    r = Redirector(api_server.url)
    yield r
    r.stop()


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_redirect_to_another_server_gets_no_key(kind: str, redirector: Redirector,
                                                       api_server: ApiServer,  # noqa: F811
                                                       tmp_path: Path) -> None:
    base = redirector.url if kind == "openai" else redirector.url.removesuffix("/v1")
    llm = make_api_llm(LLMConfig(name="api", kind=kind, base_url=base, model="coder",
                                 api_key_env=KEY_ENV), tmp_path)
    try:
        with pytest.raises(LLMError) as info:
            await llm.ask("hello")
    finally:
        await llm.close()
    assert "was not sent: the API key goes only to the server of base_url" in str(info.value)
    assert redirector.keys  # the configured server was asked (with the key: it is the one)
    assert api_server.requests == []  # the server it redirected to got nothing


async def test_a_base_url_changed_after_the_backend_was_made_is_refused(
        api_server: ApiServer, tmp_path: Path) -> None:  # noqa: F811
    cfg = LLMConfig(name="api", kind="openai", base_url="http://127.0.0.1:9/v1",
                    model="coder", api_key_env=KEY_ENV)
    llm = make_api_llm(cfg, tmp_path)
    cfg.base_url = api_server.url  # e.g. a table rewritten in memory by something else
    try:
        with pytest.raises(LLMError) as info:
            await llm.ask("hello")
    finally:
        await llm.close()
    assert "http://127.0.0.1:9/v1" in str(info.value) and "not sent" in str(info.value)
    assert api_server.requests == []
    # Made from the config as it now is, the same server is asked: the check is no wall.
    again = make_api_llm(cfg, tmp_path)
    try:
        answer = await again.ask("hello")
    finally:
        await again.close()
    assert answer.markdown and api_server.requests
