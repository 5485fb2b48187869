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
    # each firmware's build is timed apart from its run
    firmware = [c for c in data["cells"] if c["recipe"].endswith(("-mps2", "-stm32", "-avr",
                                                                   "-lm3s"))]
    assert firmware and all(0 < c["build_seconds"] < c["seconds"] for c in firmware)
    boards = {(BENCH / t / "task.toml").read_text().split('board = "')[1].split('"')[0]
              for t in tasks if 'board = "' in (BENCH / t / "task.toml").read_text()}
    assert boards == {"netduinoplus2", "lm3s6965evb", "mps2-an385", "arduino-uno"}


@pytest.mark.timeout(120)
def test_a_wrong_answer_that_verifies_fails_the_check(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    shutil.copytree(BENCH / "modbus-crc16-local", bench / "modbus-crc16-local")
    right = (bench / "modbus-crc16-local" / "solution.md").read_text()
    (bench / "modbus-crc16-local" / "wrong.md").write_text("Fails as: output\n\n" + right)
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


@pytest.mark.timeout(120)
def test_a_wrong_answer_must_fail_for_its_stated_reason(tmp_path: Path) -> None:
    """modbus-crc16-local's wrong answer prints the wrong frame (Fails as: output); a
    benchmark that says it fails to compile is told it failed another way, and the
    verdict is in compare.json and index.html."""
    bench = tmp_path / "bench"
    shutil.copytree(BENCH / "modbus-crc16-local", bench / "modbus-crc16-local")
    wrong = bench / "modbus-crc16-local" / "wrong.md"
    assert "Fails as: output\n" in wrong.read_text()
    wrong.write_text(wrong.read_text().replace("Fails as: output", "Fails as: compile"))
    done = subprocess.run([*verifybot_cmd(), "compare", "--check", str(bench), "--out",
                           str(tmp_path / "out"), "--workspace", str(tmp_path / "ws")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=110)
    assert done.returncode == 1, done.stderr
    assert ("modbus-crc16-local: wrong.md failed as output, not as it says "
            "(Fails as: compile)") in done.stderr
    data = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert data["check"]["ok"] is False and len(data["check"]["problems"]) == 1
    assert "Benchmark check failed" in (tmp_path / "out" / "index.html").read_text()
    # without the line, the task is refused before anything runs
    wrong.write_text(wrong.read_text().replace("Fails as: compile\n", ""))
    refused = subprocess.run([*verifybot_cmd(), "compare", "--check", str(bench),
                              "--workspace", str(tmp_path / "ws")], cwd=tmp_path,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "needs a line 'Fails as: KIND'" in refused.stderr


@pytest.mark.timeout(120)
def test_replay_reads_a_benchmark_as_it_is(tmp_path: Path) -> None:
    """``--llm replay:DIR/`` finds each task's solution.md, ``replay:DIR/*/wrong.md`` its
    wrong answer: a benchmark is compared as it lies, nothing copied."""
    bench = tmp_path / "bench"
    for task in ("modbus-crc16-local", "crc32-local"):
        shutil.copytree(BENCH / task, bench / task)
    done = subprocess.run([*verifybot_cmd(), "compare", str(bench), "--llm", f"replay:{bench}/",
                           "--llm", f"replay:{bench}/*/wrong.md", "--out", str(tmp_path / "out"),
                           "--workspace", str(tmp_path / "ws")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=110)
    assert done.returncode == 0, done.stderr
    data = json.loads((tmp_path / "out" / "compare.json").read_text())
    got = {(c["recipe"], c["llm"].split("/")[-1]): (c["status"], c["failures"])
           for c in data["cells"]}
    # the wrong answers fail, and then the recording has no second answer: the model's
    # own end (LLM_ERROR of a replay), not the infrastructure's
    assert got == {("crc32-local", ""): ("VERIFIED", []),
                   ("modbus-crc16-local", ""): ("VERIFIED", []),
                   ("crc32-local", "wrong.md"): ("LLM_ERROR", ["output"]),
                   ("modbus-crc16-local", "wrong.md"): ("LLM_ERROR", ["output"])}
    summary = {s["llm"].split("/")[-1]: s for s in data["summary"]}
    assert summary["wrong.md"]["pass_at"]["1"] == 0.0
    assert summary["wrong.md"]["infrastructure_cells"] == 0
    assert summary[""]["pass_at"]["1"] == 1.0
    assert data["dates"] == {"crc32-local": "2026-11-26", "modbus-crc16-local": "2026-11-26"}
