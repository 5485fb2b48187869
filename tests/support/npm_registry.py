"""A one-package npm registry on loopback: npm installs from it as from the real one.

A registry answers ``GET /<name>`` with the package's document (its versions, each
with the address and hash of its tarball) and serves the tarballs; that is all
`npm install name@range` asks of it. Tests point npm here with
``npm_config_registry`` (test traffic goes to loopback only).
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from loopback_http import serve


def tarball(name: str, version: str, files: dict[str, str]) -> bytes:
    """An npm package tarball: every file under ``package/``, a package.json among them."""
    manifest = json.dumps({"name": name, "version": version, "main": "index.js"})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, text in {"package.json": manifest, **files}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"package/{path}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class _Registry(BaseHTTPRequestHandler):
    packages: dict[str, tuple[str, bytes]]  # name -> (version, tarball)
    asked: list[str]

    def do_GET(self) -> None:  # noqa: N802 (the http.server name)
        self.asked.append(self.path)
        name = self.path.strip("/").replace("%2f", "/").replace("%2F", "/")
        if name.endswith(".tgz"):
            pkg = name.split("/-/")[0]
            body, kind = self.packages[pkg][1], "application/octet-stream"
        elif name in self.packages:
            body, kind = json.dumps(self._document(name)).encode(), "application/json"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _document(self, name: str) -> dict[str, Any]:
        version, data = self.packages[name]
        host, port = self.server.server_address[:2]
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        dist = {"tarball": f"http://{host}:{port}/{name}/-/{name}-{version}.tgz",
                "shasum": hashlib.sha1(data).hexdigest(), "integrity": integrity}
        return {"name": name, "dist-tags": {"latest": version},
                "versions": {version: {"name": name, "version": version, "dist": dist}}}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def start_registry(packages: dict[str, tuple[str, dict[str, str]]]) -> ThreadingHTTPServer:
    """name -> (version, its files): a registry serving them, on 127.0.0.1."""
    built = {name: (version, tarball(name, version, files))
             for name, (version, files) in packages.items()}
    return serve(_Registry, "npm-registry", packages=built, asked=[])


def url(httpd: ThreadingHTTPServer) -> str:
    host, port = httpd.server_address[:2]
    return f"http://{host}:{port}/"
