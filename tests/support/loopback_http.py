"""The test servers' plumbing: an HTTP handler served on a free loopback port.

Test traffic may only go to loopback addresses; the chat site and the API
server both start here, so that holds in one place.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def serve(handler: type[BaseHTTPRequestHandler], name: str, **state: Any) -> ThreadingHTTPServer:
    """``handler`` on 127.0.0.1 at a free port, served by a daemon thread named ``name``.

    ``state`` becomes class attributes of a subclass of ``handler``: how a handler (one
    made per request) reaches the server object it belongs to. Each request runs in a
    daemon thread, so a client that hangs never holds up the end of the tests.
    """
    bound = type(handler.__name__, (handler,), state)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), bound)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True, name=name).start()
    return httpd
