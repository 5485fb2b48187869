"""A client's cancel stops the whole run at once, and a board runs one call at a time.

Real programs in the sandbox, real firmware built with the Arm toolchain and run in
QEMU; after a cancel no process the run started may be left, found by a word only
its own program carries (or by the workspace path in the emulator's command line).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp_clients import Progress, all_gone_soon, client, history_rows, result, write_config
from mcu_fixtures import ENDLESS, SUM, qemu_pids
from proc_helpers import kill_all, tagged
from project import need


def _spawner(tag: str) -> dict[str, str]:
    """A program that starts two children carrying ``tag`` and waits for ever."""
    code = (
        "import subprocess, sys, time\n"
        f"kids = [subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)', "
        f"'{tag}']) for _ in range(2)]\n"
        "print('children started', flush=True)\n"
        "time.sleep(600)\n")
    return {"path": "main.py", "content": code}


async def _spawning(c: Any, tag: str) -> asyncio.Task:
    """A run of ``_spawner`` under way, once both its children run."""
    progress = Progress()
    call = asyncio.create_task(c.call_tool(
        "run", {"files": [_spawner(tag)], "target": "local", "timeout": 300},
        progress_callback=progress))
    await progress.wait_for("children started")
    for _ in range(100):  # /proc shows a process just started a moment later, at times
        if len(tagged(tag)) == 2:
            break
        await asyncio.sleep(0.05)
    assert len(tagged(tag)) == 2
    return call


async def _cancel(call: asyncio.Task) -> None:
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_a_cancel_stops_the_program_and_its_children(tmp_path: Path) -> None:
    write_config(tmp_path)
    tag = f"mcp-cancel-{uuid.uuid4().hex}"
    try:
        async with client(tmp_path) as c:
            await _cancel(await _spawning(c, tag))
            assert await all_gone_soon(lambda: tagged(tag)), tagged(tag)
            # The server goes on serving: the next call runs.
            after = result(await c.call_tool("run", {"files": [
                {"path": "main.py", "content": "print('next')\n"}], "target": "local"}))
        assert after["status"] == "PASSED"
        assert [r["status"] for r in history_rows(tmp_path / "ws")] == ["STOPPED", "PASSED"]
    finally:
        kill_all(tagged(tag))


async def test_a_cancel_stops_qemu(tmp_path: Path) -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")
    write_config(tmp_path)
    progress = Progress()
    ws = tmp_path / "ws"
    try:
        async with client(tmp_path) as c:
            call = asyncio.create_task(c.call_tool(
                "run", {"files": [{"path": "main.c", "content": ENDLESS}], "target": "stm32",
                        "timeout": 300}, progress_callback=progress))
            await progress.wait_for("counting")
            assert qemu_pids(ws)
            await _cancel(call)
            assert await all_gone_soon(lambda: qemu_pids(ws)), qemu_pids(ws)
        assert [r["status"] for r in history_rows(ws)] == ["STOPPED"]
    finally:
        kill_all(qemu_pids(ws))


async def test_two_runs_on_one_board_take_turns(tmp_path: Path) -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")
    write_config(tmp_path)
    first, second = Progress(), Progress()
    try:
        async with client(tmp_path) as c:
            # The first holds the board until its timeout; the second waits for it.
            holding = asyncio.create_task(c.call_tool(
                "run", {"files": [{"path": "main.c", "content": ENDLESS}], "target": "stm32",
                        "timeout": 4}, progress_callback=first))
            await first.wait_for("counting")
            waiting = asyncio.create_task(c.call_tool(
                "run", {"files": [{"path": "main.c", "content": SUM}], "target": "stm32"},
                progress_callback=second))
            held = result(await holding)
            await second.wait_for("waiting for stm32")
            done = result(await waiting)
        assert held["status"] == "FAILED" and "within 4 s" in held["reason"]
        assert f"waiting for stm32: in use by run {held['run_id']}" in second.text
        assert done["status"] == "PASSED" and "sum=55" in done["stdout"]
        # The second ran only once the first had let go of the board.
        assert second.text.index("waiting for stm32") < second.text.index("sum=55")
    finally:
        kill_all(qemu_pids(tmp_path / "ws"))


async def test_runs_on_the_local_target_do_not_wait_for_each_other(tmp_path: Path) -> None:
    write_config(tmp_path)
    progress = [Progress() for _ in range(3)]
    programs = [{"path": "main.py", "content": f"print('run {i}')\n"} for i in range(3)]
    async with client(tmp_path) as c:
        done = await asyncio.gather(*(c.call_tool("run", {"files": [p], "target": "local"},
                                                  progress_callback=pr)
                                      for p, pr in zip(programs, progress, strict=True)))
    results = [result(d) for d in done]
    assert [r["stdout"] for r in results] == ["run 0\n", "run 1\n", "run 2\n"]
    assert len({r["run_id"] for r in results}) == 3
    assert not any("waiting for" in p.text for p in progress)


async def test_a_client_that_goes_away_mid_run_leaves_no_process(tmp_path: Path) -> None:
    write_config(tmp_path)
    tag = f"mcp-gone-{uuid.uuid4().hex}"
    try:
        async with client(tmp_path) as c:
            call = await _spawning(c, tag)
        # The agent closed the connection: the server ends, and the program with it.
        call.cancel()
        await asyncio.gather(call, return_exceptions=True)
        assert await all_gone_soon(lambda: tagged(tag)), tagged(tag)
        assert [r["status"] for r in history_rows(tmp_path / "ws")] == ["STOPPED"]
    finally:
        kill_all(tagged(tag))


async def test_two_servers_on_one_workspace_share_a_board_in_turn(tmp_path: Path) -> None:
    """Two agents, each with its own `verifybot mcp`, sending firmware to one board."""
    need("arm-none-eabi-gcc", "qemu-system-arm")
    write_config(tmp_path)
    first, second = Progress(), Progress()
    try:
        async with client(tmp_path) as a, client(tmp_path) as b:
            holding = asyncio.create_task(a.call_tool(
                "run", {"files": [{"path": "main.c", "content": ENDLESS}], "target": "stm32",
                        "timeout": 4}, progress_callback=first))
            await first.wait_for("counting")
            waiting = asyncio.create_task(b.call_tool(
                "run", {"files": [{"path": "main.c", "content": SUM}], "target": "stm32"},
                progress_callback=second))
            await second.wait_for("waiting for stm32")
            held = result(await holding)
            done = result(await waiting)
        assert f"waiting for stm32: in use by run {held['run_id']}" in second.text
        assert done["status"] == "PASSED"
        assert second.text.index("waiting for stm32") < second.text.index("sum=55")
    finally:
        kill_all(qemu_pids(tmp_path / "ws"))
