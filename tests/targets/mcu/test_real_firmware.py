"""Real firmware from public projects, replayed as answers through ``verifybot run``.

Every case of ../shared/reference/real-firmware/outcomes.tsv runs as its README
says (a real subprocess, real cross-builds, real QEMU) and must get its right
outcome; a broken case's output must name the cause: the function and line of
the fault, or that nothing was printed.
"""

from __future__ import annotations

import csv
import json
import re

import pytest
from cli_runs import run_cli
from mcu_fixtures import qemu_pids
from project import need
from shared_data import REFERENCE

pytestmark = pytest.mark.needs_shared

FIRMWARE = REFERENCE / "real-firmware"
TARGETS = {"netduinoplus2": "stm32", "lm3s6965evb": "lm3s", "arduino-uno": "uno"}
CONFIG = "".join(f'[targets.{t}]\nkind = "mcu"\nboard = "{b}"\nbackend = "qemu"\n\n'
                 for b, t in TARGETS.items())
# What a broken case's output must say: the cause, not only where the CPU was.
CAUSES = {
    "broken_stm32_nullfn": [r"invalid state", r"in main\(\) \(main\.c:49\)"],
    "broken_uno_no_uart_init": [r"no output on the UART: main\(\) returned"],
}


def cases() -> list[dict[str, str]]:
    if not FIRMWARE.is_dir():
        return []
    with (FIRMWARE / "outcomes.tsv").open() as f:
        return list(csv.DictReader(f, delimiter="\t"))


@pytest.mark.parametrize("case", cases(), ids=lambda c: c["name"])
def test_a_real_firmware_gets_its_right_outcome(tmp_path, case):
    need("arm-none-eabi-gcc", "qemu-system-arm", "avr-gcc", "qemu-system-avr")
    (tmp_path / "config.toml").write_text(f'[run]\nworkspace = "ws"\n\n{CONFIG}')
    answer = FIRMWARE / f"{case['name']}.md"
    prompt = re.search(r"^Prompt: (.*)$", answer.read_text(), re.M)
    assert prompt, answer
    proc = run_cli("run", prompt.group(1), "--config", "config.toml", "--llm",
                   f"replay:{answer}", "--target", TARGETS[case["board"]], "--yes",
                   "--judge", "off", "--max-retries", "0", "--timeout", "15", "--json",
                   "--expect", case["expect"], cwd=tmp_path)
    record = json.loads(proc.stdout)
    assert record["status"] == case["outcome"], proc.stderr[-3000:]
    for cause in CAUSES.get(case["name"], []):
        assert re.search(r"FAIL attempt 1: .*" + cause, proc.stderr), proc.stderr[-3000:]
    assert qemu_pids(tmp_path / "ws") == []


def test_every_case_is_run():
    assert len(cases()) == 7 and set(CAUSES) <= {c["name"] for c in cases()}
