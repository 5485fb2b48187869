"""``verifybot mcp``: the MCP server for other agents (stdio, or streamable HTTP).

The server itself is in ``verifybot_tui.mcp_server``; this is its start: the user's
config read once (nothing a client sends changes it), the transport chosen, and
for HTTP the address checked and the token printed.
"""

from __future__ import annotations

import argparse
import sys

from verifybot_tui.cli.common import config_for
from verifybot_tui.core.base.errors import EXIT_SUCCESS, ConfigError


def add_args(p: argparse.ArgumentParser) -> None:
    p.description = ("Serve VerifyBot's targets, verdicts and LLMs to other agents over MCP "
                     "(Claude Code: claude mcp add verifybot -- verifybot mcp).")
    p.add_argument("--http", metavar="HOST:PORT",
                   help="serve streamable HTTP on this address, with a bearer token printed "
                        "at start (default: stdio)")
    p.add_argument("--allow-remote", action="store_true",
                   help="with --http: allow an address other than loopback (default: refused)")


def _say(text: str) -> None:
    print(f"[verifybot mcp] {text}", file=sys.stderr, flush=True)


async def cmd_mcp(args: argparse.Namespace) -> int:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ConfigError("the MCP server needs the mcp package: pip install "
                          "'verifybot-tui[mcp]'") from None
    from verifybot_tui.mcp_server import http
    from verifybot_tui.mcp_server.server import build_server
    from verifybot_tui.mcp_server.state import ServerState

    address = http.parse_address(args.http, allow_remote=args.allow_remote) \
        if args.http else None
    cfg = config_for(args, writes=True)
    state = ServerState(cfg)
    server = build_server(state)
    try:
        if address is None:
            await server.run_stdio_async()
        else:
            await http.serve_http(server, *address, http.new_token(), _say)
    finally:
        await state.close()
    return EXIT_SUCCESS
