"""The UART contract (../shared/DESIGN.md): the end line ends the run, per-test lines do not,
a FAILED anywhere fails it, and a firmware that printed nothing fails whatever its status.

Real cross-builds in real QEMU; every test ends with no emulator of its own left running.
"""

from __future__ import annotations

import json

import pytest
from cli_runs import answers, run_cli
from mcu_fixtures import Recorder, c_answer, mcu_config, qemu_pids, request
from project import need

from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets import make_target
from verifybot_tui.targets.mcu.uart import UartReader, end_word

SELFTEST_THEN_LOOP = """\
#include <stdio.h>

volatile unsigned spins;

int main(void)
{
    printf("crc ok\\n");
    printf("SELFTEST PASSED\\n");
    for (;;)
        spins++;
}
"""

PER_TEST_THEN_EXIT = """\
#include <stdio.h>

int main(void)
{
    printf("PASSED a (1)\\n");
    printf("FAILED b\\n");
    return 0;
}
"""

FAILED_THEN_END_LINE = """\
#include <stdio.h>

int main(void)
{
    printf("FAILED: frame_pack\\n");
    printf("All 2 tests PASSED\\n");
    for (;;) {
    }
}
"""

# One line of 5,000 characters whose FAILED comes after the 1,000th, then an end line.
LONG_LINE_THEN_PASSED = """\
#include <stdio.h>

int main(void)
{
    for (int i = 0; i < 5000; i++)
        putchar('.');
    printf(" check 9 FAILED\\n");
    printf("SELFTEST PASSED\\n");
    for (;;) {
    }
}
"""

# Per-test lines, then a write to an address with nothing there: the fault is the verdict.
PER_TEST_THEN_FAULT = """\
#include <stdio.h>
#include <stdint.h>

int main(void)
{
    printf("PASSED crc15 (0x059E)\\n");
    printf("FAILED can_frame_pack\\n");
    *(volatile uint32_t *)0x30000000 = 1;
    printf("done\\n");
    return 0;
}
"""

SILENT_EXIT = "int main(void)\n{\n    return 0;\n}\n"

# A fault right after the end line still counts (the grace after it).
END_LINE_THEN_FAULT = """\
#include <stdio.h>
#include <stdint.h>

int main(void)
{
    printf("PASSED\\n");
    *(volatile uint32_t *)0x30000000 = 1;
    for (;;) {
    }
}
"""


@pytest.mark.parametrize("line, word", [
    ("PASSED", "PASSED"), ("SELFTEST PASSED", "PASSED"), ("All 5 tests PASSED", "PASSED"),
    ("FAILED", "FAILED"), ("*** PASSED ***", "PASSED"), ("Result: FAILED.", "FAILED"),
    ("PASSED crc15 (0x059E)", ""), ("FAILED: can_frame_pack", ""), ("PASSEDX", ""),
    ("a label far longer than a short label ever is, then PASSED", ""),
])
def test_an_end_line_is_the_last_word_after_at_most_a_short_label(line, word):
    assert end_word(line) == word


def test_the_reader_keeps_the_first_failed_line_wherever_it_stands():
    seen = Recorder()
    uart = UartReader(seen)
    uart.feed("PASSED a (1)\r\nFAILED: b\r\nAll 2 tests PASS")
    assert not uart.end and uart.failed_line == "FAILED: b" and uart.failed
    uart.feed("ED\r\n")
    assert uart.end == "PASSED" and uart.ended.is_set() and uart.failed
    assert seen.text("stdout") == "PASSED a (1)\nFAILED: b\nAll 2 tests PASSED\n"


def test_a_failed_past_the_thousandth_character_is_seen_in_any_chunking():
    """The scan of a long line is bounded, yet sees the word wherever it stands: across
    a chunk boundary, and not inside a longer word (FAILEDX) split over two chunks."""
    line = "x" * 4000 + " case 7 FAILED " + "y" * 3000
    for size in (1, 7, 64, 1000, 4096, len(line)):
        uart = UartReader(Recorder())
        for i in range(0, len(line), size):
            uart.feed(line[i:i + size])
        assert uart.failed, size
        assert "case 7 FAILED" in uart.failed_line and len(uart.failed_line) < 300
        uart.feed("\nSELFTEST PASSED\n")
        assert uart.end == "PASSED" and uart.failed
    uart = UartReader(Recorder())
    for part in ("z" * 2000, " NOTFAILED FAILE", "DX done", "\nPASSED\n"):
        uart.feed(part)
    assert not uart.failed and uart.end == "PASSED"
    uart = UartReader(Recorder())
    uart.feed("z" * 1500 + " FAILED")
    assert not uart.failed  # the line may go on: "FAILEDX"
    uart.feed("\n")
    assert uart.failed and len(uart._line) == 0


@pytest.fixture
async def stm32(tmp_path):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    t = make_target(mcu_config("netduinoplus2"), "board", tmp_path / "ws")
    yield t
    await t.close()
    assert qemu_pids(tmp_path / "ws") == []


async def test_an_end_line_then_an_endless_loop_ends_the_run_at_once(stm32):
    r = await stm32.run(request("selftest_1", {"main.c": SELFTEST_THEN_LOOP}, timeout=30),
                        Recorder())
    assert r.exit_code == 0 and not r.timed_out, r.stderr
    assert r.stdout == "crc ok\nSELFTEST PASSED\n"
    assert r.duration < 10  # the line ended it, not the 30 s timeout
    assert judge(r, []).ok


async def test_per_test_lines_then_a_failed_one_fail_the_run(stm32):
    r = await stm32.run(request("pertest_1", {"main.c": PER_TEST_THEN_EXIT}, timeout=30),
                        Recorder())
    assert r.stdout == "PASSED a (1)\nFAILED b\n" and not r.timed_out
    assert r.diagnosis == "the firmware reported FAILED on the UART: FAILED b"
    assert not judge(r, []).ok


async def test_a_failed_line_before_the_end_line_fails_the_run(stm32):
    r = await stm32.run(request("failend_1", {"main.c": FAILED_THEN_END_LINE}, timeout=30),
                        Recorder())
    assert r.exit_code == 1 and r.duration < 10
    assert r.diagnosis == "the firmware reported FAILED on the UART: FAILED: frame_pack"


async def test_per_test_lines_then_a_fault_is_the_fault(stm32):
    r = await stm32.run(request("pertest_2", {"main.c": PER_TEST_THEN_FAULT}, timeout=30),
                        Recorder())
    assert r.exit_code == 1 and "FAILED can_frame_pack" in r.stdout
    assert "BusFault" in r.diagnosis and "in main() (main.c:8)" in r.diagnosis
    assert not judge(r, []).ok


async def test_a_fault_right_after_the_end_line_still_counts(stm32):
    r = await stm32.run(request("endfault_1", {"main.c": END_LINE_THEN_FAULT}, timeout=30),
                        Recorder())
    assert r.stdout == "PASSED\n"
    assert "BusFault" in r.diagnosis and "in main() (main.c:7)" in r.diagnosis
    assert not judge(r, []).ok


async def test_a_failed_at_the_end_of_a_5000_character_line_fails_the_run(stm32):
    r = await stm32.run(request("longline_1", {"main.c": LONG_LINE_THEN_PASSED}, timeout=30),
                        Recorder())
    assert "FAILED" in r.stdout and r.stdout.endswith("SELFTEST PASSED\n"), r.stderr
    assert r.diagnosis.startswith("the firmware reported FAILED on the UART: ")
    assert "check 9 FAILED" in r.diagnosis
    assert not judge(r, []).ok


async def test_a_firmware_that_prints_nothing_and_returns_0_fails(stm32):
    r = await stm32.run(request("silent_exit_1", {"main.c": SILENT_EXIT}, timeout=30),
                        Recorder())
    assert r.exit_code == 0 and r.stdout == ""
    assert r.diagnosis == ("no output on the UART: the firmware exited with status 0, and "
                           "nothing was printed on the UART")
    assert not judge(r, []).ok


def test_the_cli_verifies_an_end_line_followed_by_an_endless_loop(tmp_path):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    (tmp_path / "config.toml").write_text(
        '[run]\nworkspace = "ws"\n\n[targets.stm32]\nkind = "mcu"\nboard = "netduinoplus2"\n'
        'backend = "qemu"\n')
    (tmp_path / "t.md").write_text(answers(c_answer(SELFTEST_THEN_LOOP)))
    proc = run_cli("run", "self-test the CRC and say so", "--config", "config.toml", "--target",
                   "stm32", "--llm", "replay:t.md", "--yes", "--judge", "off",
                   "--max-retries", "0", "--timeout", "30", "--json",
                   "--expect", "contains:SELFTEST PASSED", cwd=tmp_path)
    record = json.loads(proc.stdout)
    assert proc.returncode == 0 and record["status"] == "VERIFIED", proc.stderr
    assert "exit status 0 after" in proc.stderr and "timed out" not in proc.stderr
    assert qemu_pids(tmp_path / "ws") == []
