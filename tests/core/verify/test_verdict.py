"""Verdicts for every class of run, and the static signs of long-running code."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.base.ports import ProgramFile, RunRequest, RunResult
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.core.verify.verdict import Verdict, judge, long_running_signs
from verifybot_tui.targets.local.target import LocalTarget


def result(**kw: object) -> RunResult:
    base: dict[str, object] = {"exit_code": None, "stdout": "", "stderr": "", "duration": 1.0}
    base.update(kw)
    return RunResult(**base)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- judge


def test_success() -> None:
    v = judge(result(exit_code=0, stdout="hi\n"), [])
    assert (v.status, v.ok, v.retry_hint) == ("success", True, "")
    assert "status 0" in v.reason


def test_failure_names_the_exit_code_and_the_error() -> None:
    stderr = ('Traceback (most recent call last):\n  File "main.py", line 1, in <module>\n'
              "ModuleNotFoundError: No module named 'requests'\n")
    v = judge(result(exit_code=1, stderr=stderr), [])
    assert (v.status, v.ok) == ("failure", False)
    assert v.reason == ("the program exited with status 1: "
                        "ModuleNotFoundError: No module named 'requests'")


def test_failure_by_signal() -> None:
    v = judge(result(exit_code=-11), [])
    assert v.status == "failure" and "SIGSEGV" in v.reason
    v = judge(result(exit_code=139, stderr="Segmentation fault\n"), [])
    assert "status 139" in v.reason and "SIGSEGV" in v.reason


def test_exit_zero_is_success_even_with_stderr() -> None:
    assert judge(result(exit_code=0, stdout="done: 3 rows\n",
                        stderr="warning: deprecated\n"), []).ok


def test_exit_zero_that_printed_nothing_fails_quoting_the_rule() -> None:
    """A fragment run alone (one function, never called) exits 0 silently: the rules ask
    every program to print what it did, so that is a failure, with the rule quoted."""
    v = judge(result(exit_code=0), [])
    assert (v.status, v.ok) == ("silent", False)
    assert v.reason == "the program exited with status 0 but printed nothing"
    assert '"It must finish by itself and print what it did."' in v.retry_hint
    v = judge(result(exit_code=0, stdout=" \n", stderr="warning: deprecated\n"), [])
    assert (v.status, v.ok) == ("silent", False)
    assert "its stderr ends: warning: deprecated" in v.reason


def test_target_error_comes_first() -> None:
    v = judge(result(exit_code=None, timed_out=True, stdout="x",
                     target_error="connection lost"), ["an endless `while True` loop (line 1)"])
    assert (v.status, v.ok) == ("target_error", False)
    assert "connection lost" in v.reason


def test_cancelled() -> None:
    v = judge(result(cancelled=True, stdout="partial"), [])
    assert (v.status, v.ok) == ("cancelled", False)
    assert "stopped by the user" in v.reason


def test_compile_error_quotes_the_first_error() -> None:
    stderr = ("main.c: In function 'main':\n"
              "main.c:3:5: error: 'x' undeclared (first use in this function)\n"
              "    3 |     x = 1;\n")
    v = judge(result(exit_code=1, compile_failed=True, stderr=stderr), [])
    assert (v.status, v.ok) == ("compile_error", False)
    assert "main.c:3:5: error: 'x' undeclared" in v.reason


def test_timeout_with_output_is_success_timeout() -> None:
    v = judge(result(timed_out=True, stdout="21.5 C\n21.6 C\n", duration=30.2), [],
              timeout=30)
    assert (v.status, v.ok) == ("success_timeout", True)
    assert v.reason == ("ran until the 30 s timeout while producing output: "
                        "a long-running program, treated as working")


def test_timeout_with_files_written_is_success_timeout() -> None:
    v = judge(result(timed_out=True, files_changed=["log.csv"]), [], timeout=5)
    assert v.status == "success_timeout" and v.ok
    assert "writing files (log.csv)" in v.reason


def test_long_running_success_mentions_the_design() -> None:
    signs = ["an endless polling loop (`while True` with sleep, line 4)"]
    v = judge(result(timed_out=True, stdout="tick\n"), signs, timeout=10)
    assert v.ok and "polling loop" in v.reason
    assert v.long_running == signs and v.retry_hint == ""


def test_silent_timeout_without_signs() -> None:
    v = judge(result(timed_out=True, duration=30.0), [])
    assert (v.status, v.ok) == ("timeout_silent", False)
    assert "printed nothing" in v.reason and "30 s" in v.reason
    assert "finish on its own within 30 s" in v.retry_hint


def test_silent_timeout_with_an_endless_loop_by_design() -> None:
    signs = ["an endless `while True` loop (line 12)"]
    v = judge(result(timed_out=True), signs, timeout=20)
    assert v.status == "timeout_silent"
    assert v.reason == ("the program runs endlessly by design (an endless `while True` loop "
                        "(line 12)); it printed nothing before the 20 s timeout")
    assert v.retry_hint.startswith("make the program finish on its own within 20 s")
    assert "print progress" in v.retry_hint


def test_silent_timeout_waiting_for_input() -> None:
    signs = ["waits for input() (line 3): stdin is closed"]
    v = judge(result(timed_out=True), signs, timeout=5)
    assert v.status == "timeout_silent"
    assert "waited for input" in v.reason
    assert v.retry_hint.startswith("do not wait for input")


def test_timeout_with_only_stderr() -> None:
    v = judge(result(timed_out=True, stderr="Waiting for sensor...\nretrying\n"),
              ["an endless `while (1)` loop (line 5)"], timeout=15)
    assert (v.status, v.ok) == ("timeout_stderr", False)
    assert "only to stderr" in v.reason and "retrying" in v.reason
    assert "while (1)" in v.reason
    assert v.retry_hint


def test_eof_failure_with_an_input_sign_gets_a_stdin_hint() -> None:
    stderr = "Traceback...\nEOFError: EOF when reading a line\n"
    v = judge(result(exit_code=1, stderr=stderr), ["waits for input() (line 1): stdin is closed"])
    assert v.status == "failure"
    assert "EOFError" in v.reason and "input()" in v.reason
    assert "stdin" in v.retry_hint
    assert judge(result(exit_code=1, stderr=stderr), []).retry_hint == ""


# --------------------------------------------------------------------------- Python signs


@pytest.mark.parametrize(("code", "phrase"), [
    ("import time\n\nwhile True:\n    print(1)\n", "an endless `while True` loop (line 3)"),
    ("while 1:\n    pass\n", "an endless `while 1` loop (line 1)"),
    ("import time\nwhile True:\n    time.sleep(5)\n",
     "an endless polling loop (`while True` with sleep, line 2)"),
    ("from time import sleep\nwhile True:\n    sleep(1)\n", "polling loop"),
    ("name = input('name? ')\n", "waits for input() (line 1): stdin is closed"),
    ("import sys\ndata = sys.stdin.read()\n", "reads stdin (`sys.stdin.read()`, line 2)"),
    ("import sys\nfor line in sys.stdin:\n    print(line)\n",
     "reads stdin (`for ... in sys.stdin`"),
    ("import signal\nsignal.pause()\n", "waits for a signal forever (`pause()`, line 2)"),
    ("from signal import pause\npause()\n", "waits for a signal forever"),
    ("from gpiozero import Button\nfrom signal import pause\nb = Button(2)\npause()\n",
     "waits for a signal forever (`pause()`, line 4)"),
    ("import http.server, socketserver\n"
     "with socketserver.TCPServer(('', 8000), http.server.SimpleHTTPRequestHandler) as h:\n"
     "    h.serve_forever()\n", "serves forever (`serve_forever()`) (line 3)"),
    ("from flask import Flask\napp = Flask(__name__)\napp.run(port=5000)\n",
     "runs a web server (`app.run()`, line 3)"),
    ("import asyncio\nloop = asyncio.new_event_loop()\nloop.run_forever()\n", "run_forever"),
    ("import RPi.GPIO as GPIO\nGPIO.setmode(GPIO.BCM)\nGPIO.wait_for_edge(17, GPIO.FALLING)\n",
     "waits for a GPIO edge"),
    ("import RPi.GPIO as GPIO\nGPIO.add_event_detect(17, GPIO.BOTH, callback=print)\n",
     "reacts to GPIO events"),
    ("import itertools\nfor i in itertools.count():\n    print(i)\n", "endless `for` loop"),
    ("import time\ntime.sleep(3600)\n", "sleeps for 3600 s (line 2)"),
    ("import tkinter as tk\nroot = tk.Tk()\nroot.mainloop()\n", "GUI window"),
])
def test_python_signs(code: str, phrase: str) -> None:
    signs = long_running_signs(code, "python")
    assert any(phrase in s for s in signs), signs


@pytest.mark.parametrize("code", [
    "print('hello')\n",
    "while True:\n    if input_ready():\n        break\n",
    "def serve():\n    while True:\n        return 1\n",
    "import sys\nwhile True:\n    sys.exit(0)\n",
    "for i in range(10):\n    print(i)\n",
    "x = 0\nwhile x < 10:\n    x += 1\n",
    "import time\ntime.sleep(0.5)\n",
    "class App:\n    def run(self):\n        pass\napp = App()\napp.run()\n",  # not a web app
    "while True:\n    for i in range(3):\n        break\n    raise SystemExit\n",
    "def broken(:\n",  # a syntax error gives no signs; the run will show the error
])
def test_python_code_without_signs(code: str) -> None:
    assert long_running_signs(code, "python") == []


def test_break_in_a_nested_loop_does_not_end_the_outer_one() -> None:
    code = "while True:\n    for i in range(3):\n        if i:\n            break\n"
    assert long_running_signs(code, "python") == ["an endless `while True` loop (line 1)"]


# --------------------------------------------------------------------------- C, JS, bash


@pytest.mark.parametrize(("code", "language", "phrase"), [
    ("int main(void) {\n  while (1) {\n    do_work();\n  }\n}\n", "c",
     "an endless `while (1)` loop (line 2)"),
    ("int main(void) {\n  for (;;) {\n    sleep(1);\n  }\n}\n", "c",
     "an endless polling loop (`for (;;)` with sleep, line 2)"),
    ("#include <stdio.h>\nint main(){int x; scanf(\"%d\", &x);}\n", "c", "reads stdin (line 2)"),
    ("#include <iostream>\nint main(){int x; std::cin >> x;}\n", "cpp", "reads stdin (`cin`"),
    ("int main(){ while(true) { poll(); } }\n", "cpp", "endless `while (true)` loop"),
    ("setInterval(() => console.log('tick'), 1000);\n", "javascript", "setInterval (line 1)"),
    ("const http = require('http');\nhttp.createServer(h).listen(8080);\n", "javascript",
     "listens for connections (`.listen()`, line 2)"),
    ("process.stdin.on('data', d => console.log(d));\n", "javascript", "reads stdin"),
    ("while (true) {\n  tick();\n}\n", "javascript", "endless `while (true)` loop (line 1)"),
    ("#!/bin/bash\nwhile true; do\n  date\n  sleep 1\ndone\n", "bash",
     "an endless polling loop (`while true` with sleep, line 2)"),
    ("while :\ndo\n  echo x\ndone\n", "bash", "an endless `while :` loop (line 1)"),
    ("read -p 'Name: ' name\necho $name\n", "bash", "reads stdin (`read`, line 1)"),
    ("tail -f /var/log/syslog\n", "bash", "follows a file forever"),
])
def test_pattern_signs(code: str, language: str, phrase: str) -> None:
    signs = long_running_signs(code, language)
    assert any(phrase in s for s in signs), signs


@pytest.mark.parametrize(("code", "language"), [
    ('#include <stdio.h>\nint main(void){ printf("while(1)\\n"); return 0; }\n', "c"),
    ("// while (1) { }\nint main(void){return 0;}\n", "c"),
    ("int main(){ while (1) { if (done()) break; } }\n", "c"),
    ("for (;;) { if (x) return 0; }\n", "cpp"),
    ("console.log('setInterval(')\n", "javascript"),
    ("let i = 0;\nwhile (true) { if (++i > 3) break; }\n", "javascript"),
    ("for i in 1 2 3; do echo $i; done\n", "bash"),
    ("while true; do\n  if ping -c1 x; then break; fi\ndone\n", "bash"),
    ("while read line; do\n  echo \"$line\"\ndone < input.txt\n", "bash"),
    ("# while true; do\necho 'while true; do'\n", "bash"),
    ("print('x')\n", "text"),
])
def test_pattern_code_without_signs(code: str, language: str) -> None:
    assert long_running_signs(code, language) == []


# --------------------------------------------------------------------------- end to end


async def _run(tmp_path: Path, markdown: str, timeout: float) -> Verdict:
    """Extract, analyse, run on the real local target, judge: the loop's own path."""
    block = extract(markdown).programs[0]
    signs = long_running_signs(block.code, block.language)
    target = LocalTarget(TargetConfig(name="local"), tmp_path / "ws")
    name = block.filename or "main.py"
    request = RunRequest(run_id="t_1", files=[ProgramFile(name, name, block.code, "python")],
                         entry=name, language=block.language, timeout=timeout,
                         long_running=bool(signs))
    try:
        res = await target.run(request, lambda s, t: None)
    finally:
        await target.close()
    return judge(res, signs, timeout=timeout)


async def test_real_runs_reach_each_verdict(tmp_path: Path) -> None:
    ok = await _run(tmp_path / "a", "```python\nprint('done')\n```\n", 10)
    assert ok.status == "success"

    silent = await _run(tmp_path / "b", "```python\nimport time\nwhile True:\n"
                        "    time.sleep(0.05)\n```\n", 0.6)
    assert silent.status == "timeout_silent"
    assert "polling loop" in silent.reason and silent.retry_hint

    chatty = await _run(tmp_path / "c", "```python\nimport time\nwhile True:\n"
                        "    print('tick', flush=True)\n    time.sleep(0.05)\n```\n", 0.6)
    assert chatty.status == "success_timeout" and chatty.ok

    asks = await _run(tmp_path / "d", "```python\nname = input('name? ')\nprint(name)\n```\n", 10)
    assert asks.status == "failure"
    assert "EOFError" in asks.reason and "stdin" in asks.retry_hint


async def test_criteria_that_allow_silence_keep_a_silent_run_a_pass(tmp_path: Path) -> None:
    """A task whose job is a file (file:) or whose whole output may be empty: printing
    nothing is right, and the empty-output sanity hold does not fire either."""
    from verifybot_tui.core.verify.criteria import parse
    from verifybot_tui.core.verify.judging import FinishedRun
    from verifybot_tui.core.verify.verification import Verification, checked

    (tmp_path / "out.txt").write_text("data")
    request = RunRequest(run_id="r", files=[ProgramFile("m.py", "m_1.py", "", "python")],
                         entry="m.py", language="python", timeout=5)
    run = FinishedRun("write out.txt", 1, request,
                      result(exit_code=0, workdir=str(tmp_path), files_changed=["out.txt"]))
    for allowing in ("file:out.txt", "regex-whole:^$"):
        v = await checked(Verification([parse(allowing)]))(run)
        assert (v.status, v.ok, v.held) == ("success", True, []), allowing
    v = await checked(Verification([parse("contains:done")]))(run)
    assert (v.status, v.ok) == ("silent", False)
    v = await checked(Verification([parse("regex-whole:^ok$")]))(run)
    assert (v.status, v.ok) == ("silent", False)
