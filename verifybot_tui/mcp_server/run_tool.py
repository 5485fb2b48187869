"""The `run` tool: a client's files built and run on a target as an accepted attempt runs.

The loop's own steps do it (``core.loop.files_run.FilesLoop``): the same save, run
folder, output file, verdict, criteria and history rows as `verifybot run`, so a
status here means what it means there. Everything the client sends is checked
before anything runs: the target must be offered, every path must stay in the run
folder, the criteria must parse, and installs need the user's own config.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from verifybot_tui.core.base.errors import ConfigError, LLMError
from verifybot_tui.core.base.outcome import Status
from verifybot_tui.core.base.ports import OutputCallback, RunRequest, RunResult, Target
from verifybot_tui.core.loop.events import Finished
from verifybot_tui.core.loop.files_run import FilesLoop, given_files
from verifybot_tui.core.settings.config import MAX_TIMEOUT
from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.core.verify.verification import Verification
from verifybot_tui.mcp_server.handler import McpHandler, Report
from verifybot_tui.mcp_server.state import ServerState

HEAD = 6000  # characters of stdout/stderr kept from the start in a tool result
TAIL = 6000  # and from the end; the whole output is the run's output resource
_PACKAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?$")


@dataclass
class RunArgs:
    files: list[tuple[str, str]]
    target: str
    entry: str | None = None
    timeout: float | None = None
    expect: list[str] = field(default_factory=list)
    criteria: dict[str, Any] | None = None
    install: list[str] = field(default_factory=list)


class NoLLM:
    """The session's LLM when the client brought the files: nobody is asked anything."""

    name = "mcp"
    state = "idle"
    conversation_url: str | None = None

    def on_state(self, listener: Any) -> None: ...
    async def start(self) -> None: ...
    async def new_chat(self) -> None: ...
    async def resume(self, conversation_url: str) -> None: ...

    async def ask(self, prompt: str, on_text: Any = None) -> Any:
        raise LLMError("a run of given files asks no LLM")

    async def close(self) -> None: ...


class HeldTarget:
    """A target whose runs wait for the board to be free (ServerState.hold)."""

    def __init__(self, inner: Target, state: ServerState,
                 waiting: Callable[[str], Awaitable[Any]]) -> None:
        self._inner = inner
        self._state = state
        self._waiting = waiting
        self.loop: Any = None  # the loop that runs on it: its session is the run's id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        async with self._state.hold(self._inner.name, lambda: str(self.loop.session_id),
                                    self._waiting):
            return await self._inner.run(request, on_output)


def verification(expect: list[str], criteria: dict[str, Any] | None) -> Verification:
    """The call's success criteria; no judge (the client reads the output itself)."""
    found = crit.parse_all(list(expect), "expect")
    sanity = True
    if criteria:
        unknown = sorted(set(criteria) - {"expect", "sanity"})
        if unknown:
            raise ConfigError(f"criteria: unknown key {unknown[0]!r} (criteria holds "
                              "expect = [\"KIND:SPEC\", ...] and sanity = true|false)")
        found += crit.from_table({"expect": criteria.get("expect", [])}, "criteria")
        sanity = bool(criteria.get("sanity", True))
    return Verification(criteria=found, sanity=sanity)


def check_install(state: ServerState, packages: list[str]) -> None:
    if not packages:
        return
    if not state.config.mcp.install:
        raise ConfigError("install refused: installs for MCP clients need the user's own "
                          "config to allow them ([mcp] install = true); nothing was run")
    bad = [p for p in packages if not _PACKAGE.match(p)]
    if bad:
        raise ConfigError(f"install: {bad[0]!r} is not a package index name (no files, "
                          "archives, URLs or paths)")


def cut(text: str) -> str:
    """Head and tail of an output, with how much was left out between them."""
    if len(text) <= HEAD + TAIL:
        return text
    left = len(text) - HEAD - TAIL
    return f"{text[:HEAD]}\n[... {left} characters left out: read the output resource ...]\n" \
           f"{text[-TAIL:]}"


async def run_files(state: ServerState, args: RunArgs, report: Report) -> dict[str, Any]:
    cfg = state.config
    state.check_offered(args.target)
    files, entry = given_files(args.files, args.entry, cfg.run.max_files)
    if args.timeout is not None and not 0 < args.timeout <= MAX_TIMEOUT:
        raise ConfigError(f"timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds")
    v = verification(args.expect, args.criteria)
    check_install(state, args.install)
    target = await state.target(args.target)
    handler = McpHandler("mcp", report, may_install=cfg.mcp.install)
    held = HeldTarget(target, state, handler.say)
    loop = FilesLoop(files=files, entry=entry, dependencies=args.install, config=cfg,
                     llm=NoLLM(), target=held, history=state.history, max_retries=0,
                     timeout=args.timeout, auto_accept=True, auto_install=cfg.mcp.install,
                     workspace=state.workspace, verification=v)
    held.loop, loop.via = loop, "mcp"
    what = ", ".join(f.name for f in files[:3]) + (" ..." if len(files) > 3 else "")
    finished = await drive(loop, f"MCP run of {what} on {args.target}", handler)
    return result_of(finished, handler, state)


async def drive(loop: Any, prompt: str, handler: McpHandler) -> Finished | None:
    """Run the loop to its end; a cancelled call stops the program's whole tree (or
    QEMU, or the place) before the cancel goes on, and the session is kept STOPPED."""
    from verifybot_tui.core.loop.verify_loop import drain

    try:
        return await drain(loop.events(prompt), handler)
    except BaseException:
        loop.stop(Status.STOPPED)
        with anyio.CancelScope(shield=True):
            deadline = time.monotonic() + 15
            while loop.running and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
        raise


def result_of(finished: Finished | None, handler: McpHandler,
              state: ServerState) -> dict[str, Any]:
    if finished is None:
        raise ConfigError("the run ended without a status")
    r = handler.result
    sid = finished.record.get("session")
    out: dict[str, Any] = {
        "status": str(finished.status), "reason": finished.message,
        "exit_code": r.exit_code if r else None,
        "stdout": cut(r.stdout) if r else "", "stderr": cut(r.stderr) if r else "",
        "run_id": str(sid),
        "transcript": str(state.workspace / finished.record.get("transcript", "")),
        "output": f"verifybot://runs/{sid}/output",
    }
    if r is not None and r.diagnosis:
        out["diagnosis"] = r.diagnosis
    warnings = ([r.build_stderr] if r is not None and r.build_stderr else []) + handler.notes
    if warnings:
        out["warnings"] = warnings
    return out
