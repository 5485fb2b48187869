"""The chat page of ``verifybot selftest --offline``, served by VerifyBot itself on loopback.

The page (``selftest_page/index.html``) and its site profile (``selftest.toml``)
ship in the package, so an installation can check its whole bridge (Chromium
starting, the page script, typing, sending, waiting for the end, the copy
capture, the DOM reader, extraction, a local run) before the user ever logs in
to a chat site, and without a network: the server listens on 127.0.0.1 only.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType

PAGE_DIR = Path(__file__).with_name("selftest_page")


def site_file() -> Path:
    """The site profile that drives the page (a path, as a user's own profile is)."""
    return PAGE_DIR / "selftest.toml"


class _Page(BaseHTTPRequestHandler):
    """The page for / and for a chat's /c/<id> (a reload of a saved chat); else 404."""

    page: bytes = b""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        path = self.path.split("?", 1)[0]
        if path != "/" and not path.startswith("/c/"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the self-test prints its own steps."""


class SelftestSite:
    """The page on a free port of 127.0.0.1 while the ``with`` block runs."""

    def __init__(self) -> None:
        page = (PAGE_DIR / "index.html").read_bytes()
        handler = type("SelftestPage", (_Page,), {"page": page})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="verifybot-selftest-page")

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def __enter__(self) -> SelftestSite:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
