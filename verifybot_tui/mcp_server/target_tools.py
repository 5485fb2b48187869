"""The `list_targets` and `describe_target` tools: what a client may run on, and what it is.

Only offered targets are listed (sandboxed ones, and those the user's ``[mcp]
targets`` names); the description is the context VerifyBot sends an LLM, the
same probe, so an agent writes for the machine as the chat LLM would.
"""

from __future__ import annotations

import asyncio
from typing import Any

from verifybot_tui.mcp_server.state import ServerState, sandboxed


async def list_targets(state: ServerState) -> list[dict[str, Any]]:
    names = state.offered()
    reached = await asyncio.gather(*(state.reachable(n) for n in names))
    out = []
    for name, (ok, why) in zip(names, reached, strict=True):
        t = state.config.targets[name]
        row: dict[str, Any] = {"name": name, "kind": t.kind, "sandboxed": sandboxed(t),
                               "reachable": ok, "default": name == state.config.run.default_target}
        if t.kind == "mcu":
            row["board"] = t.board
            row["backend"] = t.backend
        if t.kind == "ssh":
            row["host"] = t.host
        if not ok:
            row["unreachable_because"] = why
        out.append(row)
    return out


async def describe_target(state: ServerState, name: str) -> str:
    state.check_offered(name)
    target = await state.target(name)
    return await target.probe()
