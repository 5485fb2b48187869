"""The local target against real processes, real compilers and real files."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from output_order import INTERLEAVED, Acks, expected_interleaving, interleaved_lines
from proc_helpers import alive

from verifybot_tui.core.base.ports import ProgramFile, RunRequest, RunResult
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.core.verify.verdict import judge, long_running_signs
from verifybot_tui.targets.installs import venv
from verifybot_tui.targets.local.target import LocalTarget

PROGS = Path(__file__).parent / "progs"


class Recorder:
    """An on_output callback that keeps (time, stream, text) of every chunk."""

    def __init__(self) -> None:
        self.chunks: list[tuple[float, str, str]] = []

    def __call__(self, stream: str, text: str) -> None:
        self.chunks.append((time.monotonic(), stream, text))

    def text(self, stream: str) -> str:
        return "".join(t for _, s, t in self.chunks if s == stream)


@pytest.fixture
def target(tmp_path: Path) -> LocalTarget:
    """The default local target: in the bubblewrap sandbox wherever it works."""
    return LocalTarget(TargetConfig(name="local"), tmp_path / "ws")


@pytest.fixture
def plain(tmp_path: Path) -> LocalTarget:
    """Without the sandbox, for tests that look up the pids a program prints (in the
    sandbox those are numbers of its own PID namespace)."""
    return LocalTarget(TargetConfig(name="local", sandbox="off"), tmp_path / "ws")


def request(code: str, name: str = "main.py", language: str = "python", timeout: float = 10,
            run_id: str = "prog_1", extra: dict[str, str] | None = None) -> RunRequest:
    files = [ProgramFile(name, name, code, language)]
    files += [ProgramFile(n, n, c, language) for n, c in (extra or {}).items()]
    return RunRequest(run_id=run_id, files=files, entry=name, language=language, timeout=timeout)


async def test_python_success_exit_code_and_streams_apart(target: LocalTarget) -> None:
    rec = Recorder()
    code = ("import sys\nprint('to out')\nprint('to err', file=sys.stderr)\n"
            "open('made.txt', 'w').write('x')\nsys.exit(3)\n")
    result = await target.run(request(code), rec)
    assert result.exit_code == 3
    assert result.stdout == "to out\n" and result.stderr == "to err\n"
    assert rec.text("stdout") == "to out\n" and rec.text("stderr") == "to err\n"
    assert (result.stdout_bytes, result.stderr_bytes) == (7, 7)
    assert not result.timed_out and not result.compile_failed
    assert result.files_changed == ["made.txt"]
    assert result.workdir == str(target.workspace / "runs" / "prog_1")
    assert result.command == shlex.join([venv.base_python(), "-u", "main.py"])


async def test_output_arrives_while_the_program_runs(target: LocalTarget) -> None:
    rec = Recorder()
    code = "import time\nprint('first')\ntime.sleep(0.3)\nprint('second')\n"
    started = time.monotonic()
    result = await target.run(request(code), rec)
    ended = time.monotonic()
    assert result.stdout == "first\nsecond\n"
    first_at = next(t for t, s, text in rec.chunks if "first" in text)
    second_at = next(t for t, s, text in rec.chunks if "second" in text)
    assert first_at - started < ended - started - 0.25
    assert second_at - first_at >= 0.25


async def test_stdin_is_closed_so_input_fails_fast(target: LocalTarget) -> None:
    result = await target.run(request("name = input('name? ')\nprint(name)\n", timeout=20),
                              Recorder())
    assert result.exit_code == 1 and not result.timed_out
    assert "EOFError" in result.stderr
    assert result.duration < 5
    verdict = judge(result, long_running_signs("input()\n", "python"), timeout=20)
    assert verdict.status == "failure" and "stdin" in verdict.retry_hint


TIMEOUT_CLASSES = {
    # what the program does before the timeout -> (stdout, stderr, files_changed, verdict)
    "printed": ("import time\nprint('working', flush=True)\ntime.sleep(30)\n",
                "working\n", "", [], "success_timeout"),
    "wrote_files": ("import time\nopen('data.csv', 'w').write('1,2')\ntime.sleep(30)\n",
                    "", "", ["data.csv"], "success_timeout"),
    "nothing": ("import time\ntime.sleep(30)\n", "", "", [], "timeout_silent"),
    "only_stderr": ("import sys, time\nprint('warn', file=sys.stderr)\ntime.sleep(30)\n",
                    "", "warn\n", [], "timeout_stderr"),
}


@pytest.mark.parametrize("kind", TIMEOUT_CLASSES)
async def test_timeout_classes_keep_their_raw_facts(target: LocalTarget, kind: str) -> None:
    code, out, err, files, status = TIMEOUT_CLASSES[kind]
    result = await target.run(request(code, timeout=0.8), Recorder())
    assert result.timed_out and result.exit_code is None
    assert (result.stdout, result.stderr, result.files_changed) == (out, err, files)
    assert 0.8 <= result.duration < 3
    # core.verify.verdict judges these real facts.
    assert judge(result, [], timeout=0.8).status == status


def _pids(text: str) -> list[int]:
    return [int(line.split()[1]) for line in text.splitlines() if line.startswith("PID ")]


async def test_timeout_stops_the_whole_tree(plain: LocalTarget) -> None:
    target = plain
    code = (PROGS / "tree.py").read_text()
    result = await target.run(request(code, timeout=1.5), Recorder())
    assert judge(result, [], timeout=1.5).status == "success_timeout"  # it printed PIDs
    pids = _pids(result.stdout)
    assert result.timed_out and len(pids) == 9, result.stdout + result.stderr
    # One of them ignores SIGTERM: the grace period ends in SIGKILL.
    assert result.duration < 6
    assert [pid for pid in pids if alive(pid)] == []


async def test_cancel_stops_the_whole_tree_and_propagates(plain: LocalTarget) -> None:
    target = plain
    rec = Recorder()
    task = asyncio.create_task(target.run(request((PROGS / "tree.py").read_text(),
                                                  timeout=60), rec))
    for _ in range(200):
        if len(_pids(rec.text("stdout"))) == 9:
            break
        await asyncio.sleep(0.025)
    pids = _pids(rec.text("stdout"))
    assert len(pids) == 9
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [pid for pid in pids if alive(pid)] == []


async def test_background_children_do_not_outlive_a_finished_program(
        plain: LocalTarget) -> None:
    target = plain
    code = "sleep 60 &\necho \"BG $!\"\necho done\n"
    result = await target.run(request(code, name="run.sh", language="bash"), Recorder())
    assert result.exit_code == 0 and not result.timed_out
    assert result.stdout.endswith("done\n")
    assert result.duration < 4  # not held until the background sleep's pipe closes
    assert not alive(int(result.stdout.split()[1]))


async def test_close_stops_a_running_program(target: LocalTarget) -> None:
    rec = Recorder()
    task = asyncio.create_task(target.run(
        request("import time\nprint('up', flush=True)\ntime.sleep(60)\n", timeout=60), rec))
    while "up" not in rec.text("stdout"):
        await asyncio.sleep(0.02)
    await target.close()
    result = await asyncio.wait_for(task, 5)
    assert result.exit_code is None and not result.timed_out
    assert result.target_error and "closed" in result.target_error


C_OK = ('#include <stdio.h>\n#include "util.h"\n'
        'int main(void){printf("sum %d\\n", add(2,3));return 0;}\n')
C_UTIL = 'int add(int a, int b){return a+b;}\n'


async def test_c_compiles_every_source_and_runs(target: LocalTarget) -> None:
    files = [ProgramFile("main.c", "main_1.c", C_OK, "c"),
             ProgramFile("util.c", "util_1.c", C_UTIL, "c"),
             ProgramFile("util.h", "util_1.h", "int add(int a, int b);\n", "c")]
    rec = Recorder()
    result = await target.run(RunRequest("sum_1", files, "main.c", "c", 10), rec)
    assert result.exit_code == 0 and result.stdout == "sum 5\n"
    assert result.command == ("gcc -O1 -Wall -o prog main.c util.c -lm && ./prog")
    assert result.files_changed == []  # the compiled program is not the program's work
    assert judge(result, []).status == "success"


async def test_c_compile_error_is_reported_as_such(target: LocalTarget) -> None:
    rec = Recorder()
    result = await target.run(
        request("int main(void) { return missing_name; }\n", name="main.c", language="c"), rec)
    assert result.compile_failed and result.exit_code not in (0, None)
    assert "missing_name" in result.stderr and "error" in result.stderr
    assert rec.text("stderr") == result.stderr  # streamed too
    assert result.command.startswith("gcc ")
    assert not (target.workspace / "runs" / "prog_1" / "prog").exists()
    verdict = judge(result, [])
    assert verdict.status == "compile_error" and "missing_name" in verdict.reason


async def test_cpp_success(target: LocalTarget) -> None:
    code = ("#include <iostream>\n#include <vector>\nint main(){std::vector<int> v{1,2,3};"
            "int s=0;for(auto x:v)s+=x;std::cout<<\"total \"<<s<<std::endl;"
            "std::cerr<<\"note\"<<std::endl;return 0;}\n")
    result = await target.run(request(code, name="main.cpp", language="cpp"), Recorder())
    assert (result.exit_code, result.stdout, result.stderr) == (0, "total 6\n", "note\n")


async def test_bash(target: LocalTarget) -> None:
    code = "set -e\necho \"args: $#\"\nls missing-file\necho never\n"
    result = await target.run(request(code, name="check.sh", language="bash"), Recorder())
    assert result.exit_code == 2 and result.stdout == "args: 0\n"
    assert "missing-file" in result.stderr


async def test_node(target: LocalTarget) -> None:
    code = "console.log('hi from', typeof process);\nprocess.exitCode = 4;\n"
    result = await target.run(request(code, name="app.js", language="javascript"), Recorder())
    assert (result.exit_code, result.stdout) == (4, "hi from object\n")


async def test_missing_node_is_a_failed_run_not_an_exception(
        target: LocalTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    rec = Recorder()
    result = await target.run(request("console.log(1)\n", name="a.js", language="javascript"),
                              rec)
    assert result.exit_code == 127 and not result.timed_out
    assert "node is not installed on this machine" in result.stderr
    assert "node is not installed" in rec.text("stderr")
    verdict = judge(result, [])
    assert not verdict.ok and "node is not installed" in verdict.reason


async def test_unknown_language_is_a_failed_run(target: LocalTarget) -> None:
    result = await target.run(request("fn main() {}\n", name="main.rs", language="rust"),
                              Recorder())
    assert result.exit_code == 127 and "rust" in result.stderr


async def test_invalid_utf8_nul_and_split_characters(target: LocalTarget) -> None:
    code = ("import os, time\n"
            "os.write(1, b'bad \\xff\\xfe nul \\x00 end\\n')\n"
            "os.write(1, 'caf\\u00e9'.encode()[:4]); time.sleep(0.2)\n"  # half of the é
            "os.write(1, 'caf\\u00e9'.encode()[4:] + b'\\n')\n"
            "os.write(2, b'\\x1b[31mred\\x1b[0m\\n')\n")
    rec = Recorder()
    result = await target.run(request(code), rec)
    assert result.exit_code == 0
    assert result.stdout == "bad \ufffd\ufffd nul \x00 end\ncafé\n"
    assert rec.text("stdout") == result.stdout
    assert result.stdout_bytes == len(b"bad \xff\xfe nul \x00 end\n") + len("café\n".encode())
    assert result.stderr == "\x1b[31mred\x1b[0m\n"  # escapes reach the caller, who filters


async def test_a_flood_keeps_the_result_bounded(target: LocalTarget) -> None:
    code = ("import sys\nblock = ''.join(f'line {i}\\n' for i in range(10000))\n"
            "for _ in range(100):\n    sys.stdout.write(block)\n")
    total = 0
    last = []

    def count(stream: str, text: str) -> None:
        nonlocal total
        total += len(text)
        last[:] = [text]

    result = await target.run(request(code, timeout=60), count)
    expected = 100 * sum(len(f"line {i}\n") for i in range(10000))
    assert result.exit_code == 0
    assert result.stdout_bytes == expected and total == expected
    assert len(result.stdout) < 600_000
    assert "characters cut" in result.stdout
    assert result.stdout.startswith("line 0\nline 1\n")
    assert result.stdout.endswith("line 9999\n") and last[0].endswith("line 9999\n")


async def test_run_folder_is_fresh_and_files_changed_skips_the_program(
        target: LocalTarget) -> None:
    code = ("import os\nos.makedirs('out/deep', exist_ok=True)\n"
            "open('out/deep/r.txt', 'w').write('r')\n"
            "open('data.txt', 'a').write('more')\n"  # files it was given are not its work
            "open('main.py', 'a').write('#')\n")
    extra = {"lib/helper.py": "X = 1\n", "data.txt": "seed"}
    first = await target.run(request(code, extra=extra), Recorder())
    assert first.exit_code == 0, first.stderr
    assert first.files_changed == ["out/deep/r.txt"]
    workdir = Path(first.workdir)
    assert (workdir / "lib" / "helper.py").read_text() == "X = 1\n"
    (workdir / "stale.txt").write_text("old")
    second = await target.run(request("print('again')\n"), Recorder())
    assert second.workdir == first.workdir
    assert not (workdir / "stale.txt").exists() and not (workdir / "out").exists()


async def test_names_cannot_leave_the_run_folder(target: LocalTarget) -> None:
    files = [ProgramFile("../../escape.py", "escape_1.py", "print('inside')\n", "python")]
    result = await target.run(RunRequest("x_1", files, "../../escape.py", "python", 10),
                              Recorder())
    assert result.stdout == "inside\n"
    assert (Path(result.workdir) / "escape.py").exists()
    assert not (target.workspace / "escape.py").exists()


async def test_python_override_and_env_never_the_tools_venv(target: LocalTarget) -> None:
    code = "import sys, os\nprint(sys.prefix)\nprint(os.environ.get('VIRTUAL_ENV', '-'))\n"
    result = await target.run(request(code), Recorder())
    prefix, virtual_env = result.stdout.split()
    assert prefix != sys.prefix or sys.prefix == sys.base_prefix
    assert virtual_env == "-"
    req = request("import sys\nprint(sys.executable)\n")
    req.python = sys.executable
    assert (await target.run(req, Recorder())).stdout.strip() == sys.executable


async def test_missing_modules(target: LocalTarget) -> None:
    missing = await target.missing_modules(["json", "verifybot_no_such_module", "os",
                                            "usr"])
    # "usr": a folder in the checker's working directory must not pass for a package.
    assert missing == ["verifybot_no_such_module", "usr"]
    # The tool's own venv has textual; the base interpreter used for runs must not see it.
    assert await target.missing_modules(["textual"], python=sys.executable) == []
    if sys.prefix != sys.base_prefix:
        assert await target.missing_modules(["textual"]) == ["textual"]


async def test_install_into_the_workspace_venv(target: LocalTarget) -> None:
    assert await target.missing_modules(["termcolor"]) == ["termcolor"]
    rec = Recorder()
    python = await target.install(["termcolor"], rec)
    assert python == str(target.workspace / "venv" / "bin" / "python")
    assert "Successfully installed termcolor" in rec.text("stdout")
    assert await target.missing_modules(["termcolor"]) == []
    # Later runs use the venv without being told.
    result = await target.run(request("import termcolor, sys\nprint(sys.prefix)\n"), Recorder())
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(target.workspace / "venv")
    # A pip failure is an InstallError carrying pip's own words.
    with pytest.raises(venv.InstallError) as info:
        await target.install(["./no-such-folder-here"], Recorder())
    assert "no-such-folder-here" in str(info.value)
    with pytest.raises(venv.InstallError):
        await target.install(["--index-url=http://evil.example"], Recorder())
    probe = await target.probe()
    assert f"Workspace venv: {target.workspace / 'venv'}" in probe
    assert "termcolor" in probe


async def test_a_failing_callback_neither_blocks_the_program_nor_is_lost(
        target: LocalTarget) -> None:
    calls = []

    def broken(stream: str, text: str) -> None:
        calls.append(text)
        raise RuntimeError("widget gone")

    code = "import sys\nfor _ in range(50):\n    sys.stdout.write('x' * 10000 + '\\n')\n"
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="widget gone"):
        await target.run(request(code, timeout=20), broken)
    assert time.monotonic() - started < 5 and len(calls) == 1


async def test_relative_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    target = LocalTarget(TargetConfig(name="local"), Path("rel-ws"))
    result = await target.run(request("print('ok')\n"), Recorder())
    assert result.stdout == "ok\n" and result.workdir == str(tmp_path / "rel-ws/runs/prog_1")


def test_result_type(target: LocalTarget) -> None:
    assert (target.name, target.kind, target.state) == ("local", "local", "connected")
    assert RunResult(exit_code=0, stdout="", stderr="", duration=0).files_changed == []
    assert os.path.isabs(venv.base_python())


async def test_stdout_and_stderr_arrive_in_the_order_they_were_written(
        target: LocalTarget) -> None:
    acks = Acks(target.workspace / "runs" / "prog_1")
    result = await target.run(request(INTERLEAVED), acks)
    assert result.exit_code == 0
    assert interleaved_lines(acks.chunks) == expected_interleaving()
    assert result.stdout.count("out ") == 12 and result.stderr.count("err ") == 12


async def test_the_loops_output_events_and_file_keep_the_arrival_order(tmp_path: Path) -> None:
    """Through the whole loop: the Output events the front ends get, and outputs/."""
    from verifybot_tui.core.loop.events import Output, RunStarted
    from verifybot_tui.core.loop.verify_loop import VerifyLoop
    from verifybot_tui.core.settings.config import parse_config
    from verifybot_tui.core.store.history import History
    from verifybot_tui.llm.replay import ReplayLLM

    ws = tmp_path / "ws"
    transcript = tmp_path / "t.md"
    transcript.write_text(f"## Answer 1\n\n````markdown\n```python\n{INTERLEAVED}```\n````\n")
    cfg = parse_config({"run": {"workspace": str(ws)}})
    loop = VerifyLoop(config=cfg, llm=ReplayLLM(transcript, delay=0), history=History(ws),
                      target=LocalTarget(cfg.targets["local"], ws), workspace=ws,
                      auto_accept=True)
    acks = Acks()
    async for ev in loop.events("interleave"):
        if isinstance(ev, RunStarted):
            acks.folder = ws / "runs" / ev.run_id
        elif isinstance(ev, Output):
            acks(ev.stream, ev.text)
    assert interleaved_lines(acks.chunks) == expected_interleaving()
    (out,) = (ws / "outputs").iterdir()
    body = [line for line in out.read_text().splitlines() if line.startswith(("out", "stderr|"))]
    assert body == [line for i in range(12) for line in (f"out {i}", f"stderr| err {i}")]
