"""``verifybot compare --check benchmarks/embedded``: CI's check of the shipped benchmark.

Every task's reference solution goes through the real loop (QEMU boards, this machine)
and must be VERIFIED; every wrong answer must FAIL on its run. A benchmark whose wrong
answer is in fact right fails the check (so the check can fail).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from project import ROOT, need, verifybot_cmd

BENCH = ROOT / "benchmarks" / "embedded"


@pytest.mark.timeout(600)
def test_every_solution_verifies_and_every_wrong_answer_fails(tmp_path: Path) -> None:
    need("arm-none-eabi-gcc", "avr-gcc", "qemu-system-arm", "qemu-system-avr", "gcc")
    tasks = sorted(p.parent.name for p in BENCH.glob("*/task.toml"))
    assert len(tasks) >= 20
    # --parallel 6: cells build and start emulators side by side in one process; a
    # spawn in one run must never be taken for another run's leftover (and killed).
    # A cell mostly waits on its emulator (the whole check takes about 8 s of CPU):
    # six at once end it about a third sooner than three, on two cores.
    done = subprocess.run([*verifybot_cmd(), "compare", "--check", str(BENCH), "--parallel",
                           "6", "--out", str(tmp_path / "out"), "--workspace",
                           str(tmp_path / "ws")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=590)
    assert done.returncode == 0, done.stdout + done.stderr[-4000:]
    assert f"{len(tasks)} of {len(tasks)} tasks" in done.stdout
    data = json.loads((tmp_path / "out" / "compare.json").read_text())
    got = {(c["recipe"], c["llm"]): c["status"] for c in data["cells"]}
    assert got == {**{(t, "solution"): "VERIFIED" for t in tasks},
                   **{(t, "wrong"): "FAILED" for t in tasks}}
    boards = {(BENCH / t / "task.toml").read_text().split('board = "')[1].split('"')[0]
              for t in tasks if 'board = "' in (BENCH / t / "task.toml").read_text()}
    assert boards == {"netduinoplus2", "lm3s6965evb", "mps2-an385", "arduino-uno"}


@pytest.mark.timeout(120)
def test_a_wrong_answer_that_verifies_fails_the_check(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(BENCH / "modbus-crc16-local", bench / "modbus-crc16-local")
    shutil.copy(bench / "modbus-crc16-local" / "solution.md",
                bench / "modbus-crc16-local" / "wrong.md")
    done = subprocess.run([*verifybot_cmd(), "compare", "--check", str(bench), "--out",
                           str(tmp_path / "out"), "--workspace", str(tmp_path / "ws")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=110)
    assert done.returncode == 1, done.stderr
    assert "modbus-crc16-local: wrong.md is VERIFIED, not FAILED" in done.stderr
    assert "0 of 1 tasks" in done.stdout


def test_a_task_without_a_date_is_refused(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(BENCH / "slip-decoder-local", bench / "slip")
    toml = bench / "slip" / "task.toml"
    toml.write_text("\n".join(line for line in toml.read_text().splitlines()
                              if not line.startswith("date")))
    done = subprocess.run([*verifybot_cmd(), "compare", "--check", str(bench), "--workspace",
                           str(tmp_path / "ws")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "needs a 'date'" in done.stderr
