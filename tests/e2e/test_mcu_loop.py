"""Firmware through the whole loop: the real CLI, a replayed LLM, real cross-builds, real QEMU.

The "LLM" answers are fixed markdown with C code (or a whole Makefile project);
everything else is what a user runs: ``verifybot run`` against an mcu target.
Signals are sent to that process as a terminal would, and afterwards no emulator
it started may be left.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from cli_runs import answers, run_cli
from mcu_fixtures import (
    COMPILE_ERROR,
    CRASH,
    ENDLESS,
    SUM,
    c_answer,
    own_project,
    project_answer,
    qemu_pids,
)
from proc_helpers import all_gone
from project import EXAMPLES, need, verifybot_cmd


@pytest.fixture(autouse=True)
def _toolchain() -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")

CONFIG = """\
[run]
workspace = "ws"
default_llm = "chatgpt"

[targets.stm32]
kind = "mcu"
board = "netduinoplus2"

[targets.lm3s]
kind = "mcu"
board = "lm3s6965evb"

[targets.uno]
kind = "mcu"
board = "arduino-uno"
"""
TASK = "Sum the integers 1 to 10 on the board and print sum=<value>"


def setup(tmp_path: Path, *bodies: str) -> tuple[Path, Path]:
    (tmp_path / "config.toml").write_text(CONFIG)
    t = tmp_path / "t.md"
    t.write_text(answers(*bodies))
    return tmp_path / "config.toml", t


def run(tmp_path: Path, target: str, *bodies: str, extra: tuple[str, ...] = ()) -> dict:
    cfg, t = setup(tmp_path, *bodies)
    proc = run_cli("run", TASK, "--config", str(cfg), "--target", target, "--llm",
                   f"replay:{t}", "--yes", "--json", "--timeout", "3", *extra, cwd=tmp_path)
    record = json.loads(proc.stdout)
    record["_exit"] = proc.returncode
    record["_stderr"] = proc.stderr
    assert qemu_pids(tmp_path / "ws") == []
    return record


def prompts(tmp_path: Path) -> list[tuple[str, str]]:
    con = sqlite3.connect(tmp_path / "ws" / "history.db")
    try:
        return con.execute("SELECT kind, text FROM prompts ORDER BY id").fetchall()
    finally:
        con.close()


def test_a_compile_error_goes_back_with_file_and_line_then_the_fix_passes(tmp_path):
    """Also: a firmware that prints its result ends verified (the last answer)."""
    warned = SUM.replace("int sum = 0;", "int sum = 0;\n    int unused;")
    r = run(tmp_path, "stm32", c_answer(COMPILE_ERROR), c_answer(warned), c_answer(SUM),
            extra=("--expect", "compiles-clean", "--expect", "contains:sum=55"))
    assert r["_exit"] == 0 and r["status"] == "VERIFIED", r["_stderr"]
    feedback = [text for kind, text in prompts(tmp_path) if kind == "feedback"]
    assert len(feedback) == 2
    assert "main.c:6:5: error: expected ',' or ';' before 'printf'" in feedback[0]
    assert "main.c:6:9: warning: unused variable 'unused'" in feedback[1]
    first = prompts(tmp_path)[0][1]
    # the LLM was told the board, the memory, the UART contract and the rules
    assert "STM32F405RG" in first and "flash 1 MB at 0x08000000" in first
    assert "end with an end line: a line whose last word is PASSED or FAILED" in first
    assert "No vendor HAL" in first and "start-up code and vector table" in first
    outputs = sorted((tmp_path / "ws" / "outputs").glob("*.txt"))
    out = outputs[-1].read_text()  # the passing attempt's UART
    assert "sum=55" in out and "PASSED" in out, [p.name for p in outputs]


def test_a_hardfault_then_an_endless_loop_each_go_back_with_where_they_were(tmp_path):
    """A crash, then an endless loop, then the fix: one session, each failure told."""
    r = run(tmp_path, "stm32", c_answer(CRASH), c_answer(ENDLESS), c_answer(SUM))
    assert r["status"] in ("PASSED", "VERIFIED"), r["_stderr"]
    feedback = [text for kind, text in prompts(tmp_path) if kind == "feedback"]
    assert len(feedback) == 2, feedback
    # the hardfault: the faulting function and line
    assert "BusFault" in feedback[0] and "read_sensor() (main.c:6)" in feedback[0]
    assert "reading" in feedback[0]  # what the UART said before the crash
    # the endless loop: stopped and told
    assert "no end line (PASSED or FAILED) on the UART within 3 s" in feedback[1]
    assert "in main() (main.c:" in feedback[1]


def test_a_self_contained_project_goes_through_the_loop(tmp_path):
    r = run(tmp_path, "lm3s", project_answer(own_project()),
            extra=("--expect", "contains:own startup"))
    assert r["status"] == "VERIFIED", r["_stderr"]
    saved = sorted(p.name for p in (tmp_path / "ws" / "programs").iterdir())
    assert saved == ["Makefile_1", "link_1.ld", "main_1.c", "startup_1.c"]
    out = next((tmp_path / "ws" / "outputs").glob("*.txt")).read_text()
    assert "-T link.ld -o app.elf" in out  # its own make, linker script and start-up code


def test_an_avr_firmware_goes_through_the_loop_on_the_arduino_uno(tmp_path):
    need("avr-gcc", "qemu-system-avr")
    r = run(tmp_path, "uno", c_answer(ENDLESS), c_answer(SUM),
            extra=("--expect", "contains:sum=55"))
    assert r["status"] == "VERIFIED", r["_stderr"]
    first = prompts(tmp_path)[0][1]
    assert "ATmega328P" in first and "avr-libc" in first


def _start_hanging_run(tmp_path: Path) -> subprocess.Popen[str]:
    cfg, t = setup(tmp_path, c_answer(ENDLESS))
    proc = subprocess.Popen(
        [*verifybot_cmd(), "run", TASK, "--config", str(cfg), "--target", "stm32", "--llm",
         f"replay:{t}", "--yes", "--timeout", "120"], cwd=tmp_path, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ),
        start_new_session=True)
    deadline = time.monotonic() + 60
    while not qemu_pids(tmp_path / "ws") and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    return proc


@pytest.mark.parametrize("signals", [(signal.SIGINT,), (signal.SIGHUP,),
                                     (signal.SIGINT, signal.SIGINT)],
                         ids=["ctrl-c", "sighup", "second-ctrl-c"])
def test_no_emulator_is_left_after_a_signal(tmp_path, signals):
    proc = _start_hanging_run(tmp_path)
    pids = qemu_pids(tmp_path / "ws")
    assert pids, proc.communicate()
    try:
        for sig in signals:
            proc.send_signal(sig)
            time.sleep(0.05)
        proc.wait(timeout=30)
        assert all_gone(pids, within=5)
        assert qemu_pids(tmp_path / "ws") == []
        if signals == (signal.SIGINT,):
            record = sorted((tmp_path / "ws" / "raw_md").glob("*.md"))
            assert record and "INTERRUPTED" in record[0].read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def test_the_stm32_can_recipe_is_verified(tmp_path):
    """A recipe with board, compiler and flags: a warning fails compiles-clean, the fix passes."""
    proc = run_cli("recipe", "run", str(EXAMPLES / "stm32_can.toml"), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)["recipes"][0]
    assert report["status"] == "VERIFIED" and report["attempts"] == 2
    assert report["target"] == "mcu-netduinoplus2"
    assert "main.c:8:28: warning: comparison of integer expressions" in proc.stderr
    assert qemu_pids(tmp_path) == []
