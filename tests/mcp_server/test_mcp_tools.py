"""`verifybot mcp` over stdio, driven by the SDK's own client: each tool and resource.

The server is the real command; programs really run in the sandbox on this machine,
history.db is the one `verifybot history` reads.
"""

from __future__ import annotations

from pathlib import Path

from mcp_clients import Progress, client, error_text, history_rows, result, write_config
from mcu_fixtures import CRASH
from project import need

HELLO = {"path": "main.py", "content": "import sys\nprint('hello from mcp')\n"
                                       "print('a warning', file=sys.stderr)\n"}


async def test_tools_are_listed_with_schemas_and_descriptions(tmp_path: Path) -> None:
    write_config(tmp_path)
    async with client(tmp_path) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
    assert set(tools) == {"list_targets", "describe_target", "run", "verify", "history",
                          "get_run"}
    run = tools["run"]
    assert run.input_schema["required"] == ["files", "target"]
    assert set(run.input_schema["properties"]) == {"files", "target", "entry", "timeout",
                                                   "criteria", "expect", "install"}
    file_schema = run.input_schema["$defs"]["FileIn"]
    assert file_schema["required"] == ["path", "content"]
    for tool in tools.values():
        assert len(tool.description or "") > 80, tool.name
        assert "\n" not in tool.description, tool.name


async def test_list_targets_offers_sandboxed_ones_and_only_listed_others(
        tmp_path: Path) -> None:
    # A "Pi" on a loopback port nobody listens on: no sandbox, so offered only when listed.
    write_config(tmp_path, '\n[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\nport = 9\n'
                           'user = "pi"\n')
    async with client(tmp_path) as c:
        listed = result(await c.call_tool("list_targets", {}))["result"]
        refused = error_text(await c.call_tool("run", {"files": [HELLO], "target": "pi"}))
    assert {t["name"]: (t["kind"], t["sandboxed"], t["reachable"]) for t in listed} == {
        "local": ("local", True, True), "stm32": ("mcu", True, True)}
    assert [t.get("board") for t in listed if t["name"] == "stm32"] == ["netduinoplus2"]
    assert "[mcp] targets = [\"pi\"]" in refused

    write_config(tmp_path, '\n[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\nport = 9\n'
                           'user = "pi"\n\n[mcp]\ntargets = ["pi"]\n')
    async with client(tmp_path) as c:
        listed = result(await c.call_tool("list_targets", {}))["result"]
    pi = next(t for t in listed if t["name"] == "pi")
    assert (pi["kind"], pi["sandboxed"], pi["reachable"]) == ("ssh", False, False)
    assert pi["unreachable_because"]


async def test_describe_target_is_the_context_an_llm_gets(tmp_path: Path) -> None:
    write_config(tmp_path)
    async with client(tmp_path) as c:
        board = (await c.call_tool("describe_target", {"target": "stm32"})).content[0].text
        local = (await c.call_tool("describe_target", {"target": "local"})).content[0].text
    assert "STM32F405" in board and "PASSED" in board and "UART" in board
    assert "python" in local.lower()
    saved = tmp_path / "ws" / "context" / "stm32.md"
    assert saved.read_text().strip() == board.strip()


async def test_run_returns_the_verdict_streams_output_and_is_kept_in_history(
        tmp_path: Path) -> None:
    write_config(tmp_path)
    progress = Progress()
    async with client(tmp_path) as c:
        ran = result(await c.call_tool("run", {"files": [HELLO], "target": "local"},
                                       progress_callback=progress))
        run_id = ran["run_id"]
        detail = result(await c.call_tool("get_run", {"run_id": run_id}))
        listed = result(await c.call_tool("history", {"query": "mcp run"}))["result"]
        output = (await c.read_resource(f"verifybot://runs/{run_id}/output")).contents[0]
        transcript = (await c.read_resource(
            f"verifybot://runs/{run_id}/transcript")).contents[0]
        file = (await c.read_resource(f"verifybot://runs/{run_id}/files/main.py")).contents[0]
    assert (ran["status"], ran["exit_code"]) == ("PASSED", 0)
    assert ran["stdout"] == "hello from mcp\n" and ran["stderr"] == "a warning\n"
    assert "hello from mcp" in progress.text
    assert progress.values == sorted(progress.values)
    assert detail["attempts"][0]["decision"] == "accept"
    assert detail["attempts"][0]["status"] == "PASSED"
    assert [r["run_id"] for r in listed] == [run_id] and listed[0]["from_mcp"]
    assert "hello from mcp" in output.text
    assert "hello from mcp" in transcript.text and "PASSED" in transcript.text
    assert file.text == HELLO["content"]
    rows = history_rows(tmp_path / "ws")
    assert [(r["llm"], r["target"], r["status"]) for r in rows] == [("mcp", "local", "PASSED")]


async def test_a_failing_program_fails_with_the_clis_reason(tmp_path: Path) -> None:
    write_config(tmp_path)
    bad = {"path": "main.py", "content": "import sys\nprint('boom', file=sys.stderr)\n"
                                         "sys.exit(3)\n"}
    async with client(tmp_path) as c:
        ran = result(await c.call_tool("run", {"files": [bad], "target": "local"}))
    assert (ran["status"], ran["exit_code"]) == ("FAILED", 3)
    assert "3" in ran["reason"] and ran["stderr"] == "boom\n"


async def test_criteria_decide_verified_or_failed(tmp_path: Path) -> None:
    write_config(tmp_path)
    async with client(tmp_path) as c:
        met = result(await c.call_tool("run", {"files": [HELLO], "target": "local",
                                               "expect": ["contains:hello from mcp"]}))
        missed = result(await c.call_tool("run", {
            "files": [HELLO], "target": "local",
            "criteria": {"expect": ["regex:^sum=55$"], "sanity": True}}))
    assert met["status"] == "VERIFIED"
    assert missed["status"] == "FAILED" and "sum=55" in missed["reason"]


async def test_a_tree_of_files_runs_with_the_entry_given(tmp_path: Path) -> None:
    write_config(tmp_path)
    files = [{"path": "pkg/util.py", "content": "def twice(n):\n    return 2 * n\n"},
             {"path": "pkg/__init__.py", "content": ""},
             {"path": "tool.py", "content": "from pkg.util import twice\nprint(twice(21))\n"}]
    async with client(tmp_path) as c:
        ran = result(await c.call_tool("run", {"files": files, "target": "local",
                                               "entry": "tool.py"}))
    assert (ran["status"], ran["stdout"]) == ("PASSED", "42\n")


async def test_bad_requests_are_clear_errors_and_run_nothing(tmp_path: Path) -> None:
    write_config(tmp_path)
    async with client(tmp_path) as c:
        schema = error_text(await c.call_tool("run", {"files": "main.py", "target": "local"}))
        missing = error_text(await c.call_tool("run", {"files": [{"path": "a.py"}],
                                                       "target": "local"}))
        unknown = error_text(await c.call_tool("run", {"files": [HELLO], "target": "nano"}))
        up = error_text(await c.call_tool("run", {"files": [
            {"path": "../escape.py", "content": "print(1)\n"}], "target": "local"}))
        absolute = error_text(await c.call_tool("run", {"files": [
            {"path": "/tmp/x.py", "content": "print(1)\n"}], "target": "local"}))
        install = error_text(await c.call_tool("run", {"files": [HELLO], "target": "local",
                                                       "install": ["requests"]}))
        criterion = error_text(await c.call_tool("run", {"files": [HELLO], "target": "local",
                                                         "expect": ["sometimes:ok"]}))
        no_run = error_text(await c.call_tool("get_run", {"run_id": "99"}))
    assert "files" in schema
    assert "content" in missing
    assert "unknown target 'nano'" in unknown and "local, stm32" in unknown
    assert "'../escape.py' refused" in up and ".." in up
    assert "'/tmp/x.py' refused" in absolute and "absolute" in absolute
    assert "[mcp] install = true" in install
    assert "sometimes" in criterion
    assert "no run 99" in no_run
    assert history_rows(tmp_path / "ws") == []
    assert not (tmp_path / "ws" / "runs").exists() or not any(
        p.name != ".live" for p in (tmp_path / "ws" / "runs").iterdir())
    assert not (tmp_path / "ws" / "escape.py").exists()


async def test_a_resource_path_cannot_leave_the_run_folder(tmp_path: Path) -> None:
    write_config(tmp_path)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "secret.txt").write_text("not for clients")
    async with client(tmp_path) as c:
        ran = result(await c.call_tool("run", {"files": [HELLO], "target": "local"}))
        try:
            got = await c.read_resource(
                f"verifybot://runs/{ran['run_id']}/files/..%2F..%2Fsecret.txt")
            text = got.contents[0].text
        except Exception as e:  # the SDK's own check, or ours: refused either way
            text = str(e)
    assert "not for clients" not in text


WARNS = """\
#include <stdio.h>

int main(void)
{
    int unused;
    printf("sum=%d\\n", 55);
    printf("PASSED\\n");
    return 0;
}
"""


async def test_firmware_in_qemu_gives_the_fault_diagnosis_and_the_build_warnings(
        tmp_path: Path) -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")
    write_config(tmp_path)
    progress = Progress()
    async with client(tmp_path) as c:
        crashed = result(await c.call_tool("run", {"files": [
            {"path": "main.c", "content": CRASH}], "target": "stm32"},
            progress_callback=progress))
        warned = result(await c.call_tool("run", {"files": [
            {"path": "main.c", "content": WARNS}], "target": "stm32",
            "expect": ["contains:sum=55"]}))
    assert crashed["status"] == "FAILED" and crashed["stdout"] == "reading\n"
    assert "BusFault" in crashed["diagnosis"] and "read_sensor() (main.c:" in crashed["diagnosis"]
    assert crashed["reason"] == crashed["diagnosis"]
    assert "reading" in progress.text
    assert warned["status"] == "VERIFIED"
    assert any("unused variable" in w for w in warned["warnings"])
    assert "diagnosis" not in warned


async def test_a_missing_package_is_not_installed_unless_the_user_allows_it(
        tmp_path: Path) -> None:
    write_config(tmp_path)
    program = {"path": "main.py",
               "content": "import pyfiglet\nprint(pyfiglet.figlet_format('hi'))\n"}
    async with client(tmp_path) as c:
        ran = result(await c.call_tool("run", {"files": [program], "target": "local"}))
    assert ran["status"] == "FAILED" and "pyfiglet" in ran["stderr"]
    assert any("not installed: pyfiglet" in w and "[mcp] install = true" in w
               for w in ran["warnings"])
    assert not (tmp_path / "ws" / "venv").exists()
