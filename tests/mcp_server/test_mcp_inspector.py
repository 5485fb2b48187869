"""`verifybot mcp` driven by the MCP Inspector's command-line mode: a client nobody here
wrote, from the npm registry (scripts/test installs it into .venv/mcp-inspector).

The Inspector starts the server over stdio as an agent does, lists the tools, and calls
`run` on the local target and on the STM32 in QEMU.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from mcp_clients import history_rows, write_config
from mcu_fixtures import SUM
from project import ROOT, need, verifybot_cmd

INSPECTOR = ROOT / ".venv" / "mcp-inspector" / "node_modules" / ".bin" / "mcp-inspector"


def _inspect(folder: Path, *method: str) -> dict[str, Any]:
    assert INSPECTOR.exists(), ("the MCP Inspector is missing: scripts/test installs it "
                                "(npm install --prefix .venv/mcp-inspector "
                                "@modelcontextprotocol/inspector)")
    env = [f"-e{k}={v}" for k, v in os.environ.items()
           if k.startswith("XDG_") or k in ("NO_COLOR", "PATH")]
    done = subprocess.run(
        [str(INSPECTOR), "--cli", "--cwd", str(folder), *env, *method, "--",
         *verifybot_cmd(), "mcp", "--config", str(folder / "config.toml")],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL, cwd=folder)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def _run(folder: Path, target: str, name: str, content: str) -> dict[str, Any]:
    files = json.dumps([{"path": name, "content": content}])
    out = _inspect(folder, "--method", "tools/call", "--tool-name", "run",
                   "--tool-arg", f"target={target}", f"files={files}")
    assert out["isError"] is False, out
    return out["structuredContent"]


def test_the_inspector_lists_the_tools_and_runs_locally_and_on_qemu(tmp_path: Path) -> None:
    need("node", "arm-none-eabi-gcc", "qemu-system-arm")
    write_config(tmp_path)
    tools = {t["name"]: t for t in _inspect(tmp_path, "--method", "tools/list")["tools"]}
    assert set(tools) == {"list_targets", "describe_target", "run", "verify", "history",
                          "get_run"}
    assert tools["run"]["inputSchema"]["required"] == ["files", "target"]
    local = _run(tmp_path, "local", "main.py", "print(6 * 7)\n")
    board = _run(tmp_path, "stm32", "main.c", SUM)
    assert (local["status"], local["stdout"]) == ("PASSED", "42\n")
    assert board["status"] == "PASSED" and "sum=55" in board["stdout"]
    assert [(r["llm"], r["target"]) for r in history_rows(tmp_path / "ws")] == [
        ("mcp", "local"), ("mcp", "stm32")]
