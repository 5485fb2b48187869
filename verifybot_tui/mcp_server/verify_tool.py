"""The `verify` tool: VerifyBot's whole loop with one of the user's LLMs, for an agent.

An agent consults ChatGPT or Claude through the user's own login (or an API, or a
replayed transcript), and gets back files that ran and passed on a real target. The
loop is `verifybot run --yes`'s: every version accepted, installs only where the
user's ``[mcp] install`` allows them. An LLM answers one session at a time (a chat
site's browser profile is one window), so calls that name the same LLM take turns.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.mcp_server.handler import McpHandler, Report
from verifybot_tui.mcp_server.run_tool import HeldTarget, drive
from verifybot_tui.mcp_server.state import ServerState

_LLM_LOCKS: dict[str, asyncio.Lock] = {}


def check_llm(state: ServerState, spec: str) -> None:
    """An [llm.NAME] of the user's config, or a replay inside the workspace or the folder
    the server runs in: a client does not get to read files elsewhere as answers."""
    cfg = state.config
    if spec.startswith("replay:"):
        path = Path(spec.removeprefix("replay:")).expanduser().resolve()
        roots = [state.workspace.resolve(), Path.cwd().resolve()]
        if not any(path.is_relative_to(r) for r in roots):
            raise ConfigError(f"llm {spec}: a replay file must be inside the workspace "
                              f"({state.workspace}) or {Path.cwd()}")
        if not path.is_file():
            raise ConfigError(f"llm {spec}: no such transcript file {path}")
        return
    if spec not in cfg.llm:
        raise ConfigError(f"unknown llm {spec!r}; configured: {', '.join(sorted(cfg.llm))}, "
                          "or replay:PATH")


async def verify(state: ServerState, *, task: str, llm: str | None, target: str | None,
                 max_retries: int | None, criteria: list[str], report: Report
                 ) -> dict[str, Any]:
    from verifybot_tui.core.loop.verify_loop import VerifyLoop
    from verifybot_tui.llm import make_llm
    from verifybot_tui.llm.verification_setup import build_verification
    from verifybot_tui.targets import choose_target

    cfg = state.config
    if not task.strip():
        raise ConfigError("task is empty: say what the program should do")
    if max_retries is not None and not 0 <= max_retries <= 20:
        raise ConfigError("max_retries must be from 0 to 20")
    spec = llm or cfg.run.default_llm
    check_llm(state, spec)
    name, _why = choose_target(cfg, task, target)
    state.check_offered(name)
    if spec.startswith("replay:"):
        spec = f"replay:{Path(spec.removeprefix('replay:')).expanduser().resolve()}"
    v = build_verification(cfg, llm_spec=spec, expect=criteria, workspace=state.workspace,
                           where="criteria")
    handler = McpHandler("mcp", report, may_install=cfg.mcp.install)
    lock = _LLM_LOCKS.setdefault(spec, asyncio.Lock())
    if lock.locked():
        await handler.say(f"waiting for {spec}: it is answering another call")
    async with lock:
        backend = make_llm(cfg, spec, state.workspace)
        try:
            inner = await state.target(name)
            held = HeldTarget(inner, state, handler.say)
            loop = VerifyLoop(config=cfg, llm=backend, history=state.history, target=held,
                              max_retries=max_retries, auto_accept=True,
                              auto_install=cfg.mcp.install, workspace=state.workspace,
                              verification=v)
            held.loop, loop.via = loop, "mcp"
            finished = await drive(loop, task, handler)
        finally:
            await backend.close()
            if v.judge_llm is not None:
                await v.judge_llm.close()
    if finished is None:
        raise ConfigError("the loop ended without a status")
    rec = finished.record
    ok = finished.status in ("VERIFIED", "PASSED")
    return {"status": str(finished.status), "reason": finished.message,
            "run_id": str(rec.get("session")), "attempts": len(rec.get("attempts", [])),
            "files": handler.files if ok else [], "entry": handler.entry if ok else "",
            "last_files": [] if ok else handler.files,
            "transcript": str(state.workspace / rec.get("transcript", "")),
            "target": name, "llm": backend.name}
