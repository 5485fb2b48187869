"""What the LLM reads after a failed firmware run: the build's warnings with the failure, and
a QEMU abort told as the firmware's own call and line (the real CLI, a replayed LLM)."""

from __future__ import annotations

import json

from cli_runs import answers, db_rows, run_cli
from mcu_fixtures import SUM, UNSUPPORTED_SEMIHOSTING, c_answer, qemu_pids
from project import need

# The bug is the warning: r0 is computed, then a wrong variable is printed.
WARNED_BUG = """\
#include <stdio.h>

int main(void)
{
    int r0, r1 = 0;
    for (int i = 1; i <= 10; i++)
        r0 = r1 + i;
    printf("sum=%d\\n", r1);
    printf(r1 == 55 ? "PASSED\\n" : "FAILED\\n");
    return 0;
}
"""


def _feedback(tmp_path, first: str) -> str:  # type: ignore[no-untyped-def]
    need("arm-none-eabi-gcc", "qemu-system-arm")
    (tmp_path / "config.toml").write_text(
        '[run]\nworkspace = "ws"\n\n[targets.stm32]\nkind = "mcu"\nboard = "netduinoplus2"\n')
    (tmp_path / "t.md").write_text(answers(c_answer(first), c_answer(SUM)))
    proc = run_cli("run", "sum 1 to 10 on the board", "--config", "config.toml", "--target",
                   "stm32", "--llm", "replay:t.md", "--yes", "--judge", "off",
                   "--max-retries", "1", "--timeout", "10", "--json", cwd=tmp_path)
    assert json.loads(proc.stdout)["status"] in ("PASSED", "VERIFIED"), proc.stderr
    assert qemu_pids(tmp_path / "ws") == []
    sent = [text for kind, text in db_rows(tmp_path / "ws",
                                             "SELECT kind, text FROM prompts ORDER BY id")
            if kind == "feedback"]
    assert len(sent) == 1
    return sent[0]


def test_a_failed_runs_feedback_carries_the_builds_warnings(tmp_path):
    text = _feedback(tmp_path, WARNED_BUG)
    assert "the firmware reported FAILED on the UART: FAILED" in text
    assert "The build's warnings (one may be the cause):" in text
    assert "main.c:5:9: warning: variable 'r0' set but not used" in text


def test_a_qemu_abort_is_told_as_the_call_and_its_line(tmp_path):
    text = _feedback(tmp_path, UNSUPPORTED_SEMIHOSTING)
    assert "a semihosting call the emulator does not support (operation 0x99 in r0" in text
    assert "in odd_call() (main.c:7)" in text
    assert "R00=" not in text and "status -6" not in text
