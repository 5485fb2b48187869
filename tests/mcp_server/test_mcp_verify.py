"""The `verify` tool: VerifyBot's whole loop for an agent, with a replayed LLM (offline).

A replay transcript answers as a chat LLM would (a wrong program, then a fixed one);
the loop runs each answer for real and feeds the failure back, and the agent gets the
files that passed, the transcript and progress per attempt.
"""

from __future__ import annotations

import json
from pathlib import Path

from api_fixtures import (
    KEY,
    KEY_ENV,
    PROMPT,
    api_server,  # noqa: F401 (a fixture)
    files_holding,
    llm_table,
)
from apiserver import ApiServer
from cli_runs import answers, python_answer, run_cli
from mcp_clients import Progress, client, error_text, history_rows, result, write_config
from mcu_fixtures import COMPILE_ERROR, SUM, c_answer
from project import need

WRONG = """\
total = sum(range(1, 10))
print(f"sum={total}")
"""
RIGHT = """\
total = sum(range(1, 11))
print(f"sum={total}")
"""


async def test_verify_feeds_the_failure_back_and_returns_the_files_that_passed(
        tmp_path: Path) -> None:
    write_config(tmp_path)
    replay = tmp_path / "answers.md"
    replay.write_text(answers(python_answer(WRONG), python_answer(RIGHT)))
    progress = Progress()
    async with client(tmp_path) as c:
        done = result(await c.call_tool("verify", {
            "task": "Print the sum of 1 to 10 as sum=N", "llm": f"replay:{replay}",
            "target": "local", "criteria": ["contains:sum=55"]}, progress_callback=progress))
    assert (done["status"], done["attempts"]) == ("VERIFIED", 2)
    assert [f["content"] for f in done["files"]] == [RIGHT]
    assert Path(done["transcript"]).is_file()
    assert "sum=55" in Path(done["transcript"]).read_text()
    assert "attempt 1: criteria_unmet" in progress.text
    assert "attempt 2: prompt sent (feedback)" in progress.text
    rows = history_rows(tmp_path / "ws")
    assert [(r["id"], r["status"]) for r in rows] == [(int(done["run_id"]), "VERIFIED")]
    assert "- via: mcp" in Path(done["transcript"]).read_text()


async def test_history_tells_the_mcp_sessions_from_the_users_own(tmp_path: Path) -> None:
    write_config(tmp_path)
    replay = tmp_path / "answers.md"
    replay.write_text(answers(python_answer(RIGHT)))
    own = run_cli("run", "Print the sum", "--llm", f"replay:{replay}", "--yes",
                  "--target", "local", "--config", str(tmp_path / "config.toml"), cwd=tmp_path)
    assert own.returncode == 0, own.stderr
    async with client(tmp_path) as c:
        await c.call_tool("verify", {"task": "Print the sum of 1 to 10", "target": "local",
                                     "llm": f"replay:{replay}"})
        listed = result(await c.call_tool("history", {}))["result"]
    assert [(r["prompt"], r["from_mcp"]) for r in listed] == [
        ("Print the sum of 1 to 10", True), ("Print the sum", False)]


async def test_verify_firmware_on_the_stm32_in_qemu(tmp_path: Path) -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")
    write_config(tmp_path)
    replay = tmp_path / "answers.md"
    replay.write_text(answers(c_answer(COMPILE_ERROR), c_answer(SUM)))
    progress = Progress()
    async with client(tmp_path) as c:
        done = result(await c.call_tool("verify", {
            "task": "Sum 1 to 10 on the board and print sum=<value>",
            "llm": f"replay:{replay}", "target": "stm32", "max_retries": 1,
            "criteria": ["contains:sum=55"]}, progress_callback=progress))
    assert (done["status"], done["attempts"], done["target"]) == ("VERIFIED", 2, "stm32")
    assert [f["path"] for f in done["files"]] == ["main.c"]
    assert "sum=55" in progress.text


async def test_verify_refuses_what_the_user_did_not_configure(tmp_path: Path) -> None:
    write_config(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-elsewhere.md"
    outside.write_text(answers(python_answer(RIGHT)))
    try:
        async with client(tmp_path) as c:
            unknown = error_text(await c.call_tool("verify", {"task": "x", "llm": "gpt-9"}))
            away = error_text(await c.call_tool("verify", {"task": "x",
                                                           "llm": f"replay:{outside}"}))
            empty = error_text(await c.call_tool("verify", {"task": "  "}))
    finally:
        outside.unlink()
    assert "unknown llm 'gpt-9'" in unknown and "chatgpt" in unknown
    assert "must be inside the workspace" in away
    assert "task is empty" in empty
    assert history_rows(tmp_path / "ws") == []


async def test_verify_with_an_api_llm_the_user_configured(
        tmp_path: Path, api_server: ApiServer, monkeypatch) -> None:  # noqa: F811
    # The user's own [llm.api] on the loopback API server; its key in the server's
    # environment only, never in what a client gets back.
    write_config(tmp_path, "\n" + llm_table("api", "openai", api_server.url, "coder"))
    monkeypatch.setenv(KEY_ENV, KEY)
    progress = Progress()
    async with client(tmp_path) as c:
        done = result(await c.call_tool("verify", {"task": PROMPT, "llm": "api",
                                                   "target": "local"},
                                        progress_callback=progress))
    assert (done["status"], done["attempts"], done["llm"]) == ("PASSED", 2, "api")
    assert "TypeError" in progress.text and "Total words: 17" in progress.text
    assert len(api_server.chats()) == 2
    assert KEY not in json.dumps(done) and KEY not in progress.text
    assert not files_holding(tmp_path / "ws", KEY)
