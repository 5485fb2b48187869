"""The mcu target with real cross-builds in real QEMU: results, errors, faults, hangs, stops.

Every test ends by checking that no emulator it started is left running.
"""

from __future__ import annotations

import asyncio
import tempfile

import pytest
from mcu_fixtures import (
    CAN_WAIT,
    COMPILE_ERROR,
    CPP_COUNTER,
    CRASH,
    ENDLESS,
    OWN_MAIN_CRASH,
    SILENT,
    SUM,
    UNHANDLED_IRQ,
    Recorder,
    mcu_config,
    own_project,
    qemu_pids,
    request,
)
from proc_helpers import all_gone
from project import need

from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets import make_target


@pytest.fixture(autouse=True)
def _toolchain() -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")


@pytest.fixture
async def make(tmp_path):
    made = []

    def build(board: str = "netduinoplus2", **extra):
        t = make_target(mcu_config(board, **extra), "board", tmp_path / "ws")
        made.append(t)
        return t

    yield build
    for t in made:
        await t.close()
    assert qemu_pids(tmp_path / "ws") == []


async def test_a_firmware_that_prints_its_result_passes(make):
    t = make()
    rec = Recorder()
    r = await t.run(request("sum_1", {"main.c": SUM}), rec)
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "sum=55\nPASSED\n"
    assert rec.text("stdout").endswith("sum=55\nPASSED\n")  # streamed as it came
    assert r.diagnosis == "" and r.stderr == ""
    assert judge(r, []).ok
    assert "qemu-system-arm -M netduinoplus2" in r.command and "-S" in r.command.split()


async def test_a_cpp_firmware_runs_its_global_constructors(make):
    r = await make("mps2-an385").run(request("cpp_1", {"main.cpp": CPP_COUNTER}), Recorder())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "value=42\nPASSED\n"
    assert "arm-none-eabi-g++" in r.command and "-fno-exceptions" in r.command


async def test_the_programs_exit_through_semihosting_ends_the_run_with_its_status(make):
    code = '#include <stdio.h>\nint main(void)\n{\n    printf("bad\\n");\n    return 3;\n}\n'
    r = await make().run(request("exit_1", {"main.c": code}), Recorder())
    assert r.exit_code == 3 and r.stdout == "bad\n" and not r.timed_out
    assert r.diagnosis == "the firmware exited with status 3"


@pytest.mark.parametrize("qemu, said", [
    ('["qemu-system-arm", "-M", "no-such-machine"]', "unsupported machine type"),
    ('["qemu-system-none", "-M", "x"]', "cannot start qemu-system-none"),
])
async def test_an_emulator_that_cannot_run_the_board_is_a_target_error(make, tmp_path, qemu,
                                                                        said, monkeypatch):
    board = tmp_path / "my_board.toml"
    board.write_text(f'extends = "netduinoplus2"\nqemu = {qemu}\n')
    # a temporary folder of this test's own: other tests' emulators make theirs in /tmp
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    r = await make(str(board)).run(request("emu_1", {"main.c": SUM}), Recorder())
    assert said in r.target_error
    assert judge(r, []).status == "target_error"
    assert not list(private.glob("vb-gdb-*"))  # its socket folder went with it


async def test_a_python_answer_is_told_that_a_board_takes_c(make):
    r = await make().run(request("py_1", {"main.py": "print('hi')\n"}), Recorder())
    assert r.compile_failed and "an mcu target builds C or C++ firmware" in r.stderr
    assert "main.py" in r.stderr


async def test_a_compile_error_comes_back_with_file_and_line(make):
    r = await make().run(request("err_1", {"main.c": COMPILE_ERROR}), Recorder())
    assert r.compile_failed
    assert "main.c:6:5: error: expected ',' or ';' before 'printf'" in r.stderr
    assert "main.c:6" in judge(r, []).reason


async def test_a_hardfault_names_the_function_and_line_with_the_board_package(make):
    rec = Recorder()
    r = await make().run(request("crash_1", {"main.c": CRASH}), rec)
    assert r.exit_code == 1
    assert r.stdout == "reading\n"
    assert "BusFault" in r.diagnosis and "0x30000000" in r.diagnosis
    assert "PC 0x" in r.diagnosis and "in read_sensor() (main.c:6)" in r.diagnosis
    assert "read_sensor() (main.c:6), inlined in main() (main.c:12)" in r.diagnosis
    assert r.diagnosis in rec.text("stderr")  # shown live, not only in the verdict
    v = judge(r, [])
    assert not v.ok and "read_sensor() (main.c:6)" in v.reason


async def test_a_hardfault_names_the_function_and_line_with_its_own_startup(make):
    t = make("lm3s6965evb")
    r = await t.run(request("own_crash_1", own_project(OWN_MAIN_CRASH)), Recorder())
    assert "make" in r.command and "app.elf" in r.command
    assert r.stdout == "own startup\n"
    assert "undefined instruction (UsageFault)" in r.diagnosis
    assert "in checksum() (main.c:" in r.diagnosis


async def test_an_interrupt_without_a_handler_is_named(make):
    r = await make().run(request("irq_1", {"main.c": UNHANDLED_IRQ}), Recorder())
    assert r.exit_code == 1 and r.stdout.startswith("pending PendSV\n")
    assert r.diagnosis.startswith("the firmware took an interrupt it has no handler for: "
                                  "PendSV (exception 14")
    assert "Interrupted at PC 0x" in r.diagnosis and "in main() (main.c:8)" in r.diagnosis


async def test_a_self_contained_answer_is_built_with_make_and_passes(make):
    r = await make("lm3s6965evb").run(request("own_1", own_project()), Recorder())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "own startup\nPASSED\n"


async def test_a_silent_board_is_no_output(make):
    r = await make().run(request("silent_1", {"main.c": SILENT}, timeout=1.5), Recorder())
    assert r.timed_out and r.exit_code is None
    assert r.diagnosis.startswith("no output on the UART within 1.5 s")
    assert "in main() (main.c:" in r.diagnosis  # where the CPU was, read from outside
    assert judge(r, []).status == "timeout_silent"


async def test_an_endless_loop_is_stopped_at_the_timeout(make, tmp_path):
    r = await make().run(request("endless_1", {"main.c": ENDLESS}, timeout=1.5), Recorder())
    assert r.timed_out and r.stdout == "counting\n"
    assert "no end line (PASSED or FAILED) on the UART within 1.5 s" in r.diagnosis
    assert "in main() (main.c:" in r.diagnosis
    assert not judge(r, []).ok  # output before a hang is not a success for firmware


async def test_a_wait_on_an_unmodelled_peripheral_names_it_and_asks_for_a_real_board(make):
    r = await make().run(request("can_1", {"main.c": CAN_WAIT}, timeout=1.5), Recorder())
    assert r.timed_out and "in main() (main.c:1" in r.diagnosis  # the polling loop
    note = r.stderr.splitlines()[-1]
    assert note.startswith("note: the firmware touched peripherals QEMU does not model: CAN1 (")
    assert "needs a real board" in note
    assert "RCC" not in note  # the board package's own clock set-up is not reported


async def test_cancel_stops_the_emulator_at_once(make, tmp_path):
    t = make()
    task = asyncio.create_task(t.run(request("cancel_1", {"main.c": ENDLESS}, 60), Recorder()))
    for _ in range(400):
        if qemu_pids(tmp_path / "ws"):
            break
        await asyncio.sleep(0.025)
    pids = qemu_pids(tmp_path / "ws")
    assert pids
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all_gone(pids, within=0)  # gone when the cancel returns, not later


async def test_close_stops_a_running_emulator(make, tmp_path):
    t = make()
    task = asyncio.create_task(t.run(request("close_1", {"main.c": ENDLESS}, 60), Recorder()))
    for _ in range(400):
        if qemu_pids(tmp_path / "ws"):
            break
        await asyncio.sleep(0.025)
    pids = qemu_pids(tmp_path / "ws")
    await t.close()
    assert pids and all_gone(pids, within=0)  # gone when close() returns
    r = await task
    assert r.target_error == "stopped: the target was closed"
    assert not judge(r, []).ok


async def test_a_firmware_that_does_not_fit_is_refused_before_it_runs(make):
    files = own_project()
    files["link.ld"] = files["link.ld"].replace("LENGTH = 64K", "LENGTH = 256K")
    files["main.c"] += "\nchar big[100000];\nchar *keep = big;\n"
    r = await make("lm3s6965evb").run(request("big_1", files), Recorder())
    assert "RAM overflows" in r.diagnosis and "cannot run on the LM3S6965" in r.diagnosis
    assert "qemu" not in r.command


async def test_the_arduino_uno_runs_avr_firmware(make):
    need("avr-gcc", "qemu-system-avr")
    t = make("arduino-uno")
    r = await t.run(request("uno_1", {"main.c": SUM}), Recorder())
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "sum=55\nPASSED\n"
    assert "qemu-system-avr -M uno" in r.command
    r = await t.run(request("uno_2", {"main.c": ENDLESS}, timeout=1.5), Recorder())
    assert r.timed_out and "in main() (main.c:" in r.diagnosis
