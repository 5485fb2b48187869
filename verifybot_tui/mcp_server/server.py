"""The MCP server: VerifyBot's tools and resources, described for an agent to read.

Every tool checks what the client sent before anything runs and answers a bad
request with an error that says what to send instead (``ToolError``: the call's
result is marked as an error, with the message for the model). What a client sends
never changes the config: the server holds the Config it started with.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from verifybot_tui import __version__
from verifybot_tui.core.base.errors import VerifyBotError
from verifybot_tui.mcp_server import records, target_tools, verify_tool
from verifybot_tui.mcp_server.run_tool import RunArgs, run_files
from verifybot_tui.mcp_server.state import ServerState

T = TypeVar("T")

INSTRUCTIONS = (
    "VerifyBot runs programs on real targets (this machine in a sandbox, QEMU boards such as "
    "an STM32, and, where the user allows it, a Raspberry Pi or real boards) and says whether "
    "they passed from what the target showed, never from what the code claims. Call "
    "list_targets first, describe_target for what a target has (for a board: its MCU, memory "
    "map and the UART contract the firmware must follow), then run with your files. verify "
    "asks one of the user's LLMs to write and fix the program until it passes.")


class FileIn(BaseModel):
    path: str = Field(description="Relative path in the run folder, e.g. main.py or "
                                  "src/main.c; no '..', no absolute paths")
    content: str = Field(description="The file's whole text")


def _plain_doc(fn: T) -> T:
    """A docstring as one paragraph: the tool's description, as an agent reads it."""
    fn.__doc__ = " ".join((fn.__doc__ or "").split())
    return fn


async def _guard(work: Awaitable[T]) -> T:
    """A VerifyBot error (bad input, an unknown target, a refused install) as a tool error
    the model reads; the message says what to do."""
    try:
        return await work
    except VerifyBotError as e:
        raise ToolError(str(e)) from None


def _reporter(ctx: Context) -> Callable[[float, str], Awaitable[Any]]:
    async def report(progress: float, message: str) -> None:
        await ctx.report_progress(progress, None, message)
    return report


def build_server(state: ServerState) -> MCPServer:
    server = MCPServer("verifybot", version=__version__, instructions=INSTRUCTIONS,
                       log_level="WARNING")
    _target_tools(server, state)
    _run_tool(server, state)
    _verify_tool(server, state)
    _history_tools(server, state)
    _resources(server, state)
    return server


def _target_tools(server: MCPServer, state: ServerState) -> None:
    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    @_plain_doc
    async def list_targets() -> list[dict[str, Any]]:
        """The targets you may run programs on: name, kind (local, mcu, ssh), board and
        backend for microcontrollers, whether it is sandboxed, and whether it was
        reachable at its last connect (kept for a minute). Targets without a sandbox
        appear only when the user's config offers them."""
        return await _guard(target_tools.list_targets(state))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    @_plain_doc
    async def describe_target(
        target: Annotated[str, Field(description="A name from list_targets")],
    ) -> str:
        """What VerifyBot tells an LLM about a target before it writes code for it, as
        markdown: the OS, languages and packages installed; for a board its MCU, memory
        map, what the start-up code supplies, the UART contract (print the results, end
        with a line ending in PASSED or FAILED) and what the emulator does not model."""
        return await _guard(target_tools.describe_target(state, target))


def _run_tool(server: MCPServer, state: ServerState) -> None:
    @server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
    @_plain_doc
    async def run(
        files: Annotated[list[FileIn], Field(description="The program's files, each "
                                                         "{path, content}", min_length=1)],
        target: Annotated[str, Field(description="A name from list_targets")],
        ctx: Context,
        entry: Annotated[str | None, Field(description="The file to run (default: main.*, "
                                                       "app.*, else the first program)")] = None,
        timeout: Annotated[float | None, Field(description="Seconds it may run (default: "
                                                           "the user's [run] timeout)")] = None,
        criteria: Annotated[dict[str, Any] | None, Field(description=(
            "A criteria table: {\"expect\": [\"KIND:SPEC\", ...], \"sanity\": true}"))] = None,
        expect: Annotated[list[str] | None, Field(description=(
            "Success criteria: contains:TEXT, not:TEXT, regex:RE, exit:N, range:RE:LO..HI, "
            "file:GLOB, no-stderr, duration:<=S, compiles-clean"))] = None,
        install: Annotated[list[str] | None, Field(description=(
            "Package index names to install first (only where the user's config allows "
            "installs for MCP)"))] = None,
    ) -> dict[str, Any]:
        """Build and run your files on a target, exactly as VerifyBot runs an accepted
        attempt (in the sandbox on local and QEMU targets), and return the verdict:
        status (PASSED, VERIFIED when criteria were given and met, FAILED, TARGET_ERROR,
        STOPPED...), reason, exit_code, stdout and stderr (head and tail; the whole output
        is the resource verifybot://runs/{run_id}/output), diagnosis (a firmware fault
        with its function and line), warnings (the build's), run_id. Output streams as
        progress notifications; cancelling the call stops the program at once."""
        args = RunArgs(files=[(f.path, f.content) for f in files], target=target,
                       entry=entry, timeout=timeout, criteria=criteria, expect=expect or [],
                       install=install or [])
        return await _guard(run_files(state, args, _reporter(ctx)))


def _verify_tool(server: MCPServer, state: ServerState) -> None:
    @server.tool(annotations=ToolAnnotations(open_world_hint=True))
    @_plain_doc
    async def verify(
        task: Annotated[str, Field(description="What the program should do, as you would "
                                               "ask a person")],
        ctx: Context,
        llm: Annotated[str | None, Field(description=(
            "One of the user's LLMs ([llm.NAME]: a chat site in their logged-in browser or "
            "an API), or replay:PATH (default: the user's default LLM)"))] = None,
        target: Annotated[str | None, Field(description="A name from list_targets (default: "
                                                        "the user's default)")] = None,
        max_retries: Annotated[int | None, Field(description=(
            "Answers after the first (default: the user's [run] max_retries)"))] = None,
        criteria: Annotated[list[str] | None, Field(description=(
            "Success criteria KIND:SPEC, as for run's expect"))] = None,
    ) -> dict[str, Any]:
        """Ask one of the user's LLMs for the program, run each answer on the target,
        feed the failures back, until it passes or the retries run out. Returns the status,
        the verified files (path and content), the run_id and the transcript's path.
        Progress per attempt comes as notifications."""
        return await _guard(verify_tool.verify(
            state, task=task, llm=llm, target=target, max_retries=max_retries,
            criteria=criteria or [], report=_reporter(ctx)))


def _history_tools(server: MCPServer, state: ServerState) -> None:
    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    @_plain_doc
    async def history(
        query: Annotated[str | None, Field(description="Keep sessions whose prompt, target, "
                                                       "LLM or status holds this")] = None,
        limit: Annotated[int, Field(description="How many, newest first", ge=1,
                                    le=1000)] = 20,
    ) -> list[dict[str, Any]]:
        """Past sessions and runs (the user's own and those from MCP clients), newest first,
        with their status and number of attempts."""
        return await _guard(_now(records.sessions, state, query, limit))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    @_plain_doc
    async def get_run(
        run_id: Annotated[str, Field(description="A run_id from run, verify or history")],
    ) -> dict[str, Any]:
        """One session in detail: each attempt's files, verdict, reason and exit status,
        and the URIs of its output, transcript and files."""
        return await _guard(_now(records.run_detail, state, run_id))


def _resources(server: MCPServer, state: ServerState) -> None:
    @server.resource("verifybot://runs/{run_id}/output", mime_type="text/plain")
    def run_output(run_id: str) -> str:
        """The whole output of a run's last attempt, as kept in outputs/."""
        return _resource(records.output, state, run_id)

    @server.resource("verifybot://runs/{run_id}/transcript", mime_type="text/markdown")
    def run_transcript(run_id: str) -> str:
        """The session's transcript: prompts, answers, files, outputs, verdicts."""
        return _resource(records.transcript, state, run_id)

    @server.resource("verifybot://runs/{run_id}/files/{+path}", mime_type="text/plain")
    def run_file(run_id: str, path: str) -> str:
        """A file of the run's folder as the run left it."""
        return _resource(records.run_file, state, run_id, path)


async def _now(fn: Callable[..., T], *args: Any) -> T:
    return fn(*args)


def _resource(fn: Callable[..., str], *args: Any) -> str:
    from mcp.server.mcpserver.exceptions import ResourceError

    try:
        return fn(*args)
    except VerifyBotError as e:
        raise ResourceError(str(e)) from None
