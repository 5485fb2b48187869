"""Boards as data, the mcu target's config, the ELF check, QEMU's log and fault decoding.

Quick tests with no emulator (one real cross-build for the ELF check): what a user
gets for a board file or a config key that is wrong, and the pieces the emulator
tests rely on.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import struct
import subprocess

import pytest
from mcu_fixtures import SUM, Recorder, project_answer
from project import EXAMPLES, need, verifybot_cmd

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings import trust
from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.core.verify.recipe import load_recipe, with_board
from verifybot_tui.targets.mcu import diagnose
from verifybot_tui.targets.mcu.boards import board_files_to_trust, builtin_names, load_board
from verifybot_tui.targets.mcu.context import board_context
from verifybot_tui.targets.mcu.elfcheck import check_elf


def test_the_four_built_in_boards_load():
    assert builtin_names() == ["arduino-uno", "lm3s6965evb", "mps2-an385", "netduinoplus2"]
    f4 = load_board("netduinoplus2")
    assert f4.mcu == "STM32F405RG" and f4.flash == [0x08000000, 0x100000]
    assert "-mfpu=fpv4-sp-d16" in f4.cpu_flags and f4.tool("addr2line") == (
        "arm-none-eabi-addr2line")
    uno = load_board("arduino-uno")
    assert uno.arch == "avr" and uno.qemu == ["qemu-system-avr", "-M", "uno"]


def test_a_users_board_file_extends_a_built_in_one(tmp_path):
    (tmp_path / "my_f4.toml").write_text(
        'extends = "netduinoplus2"\ndescription = "my board"\nhal = "STM32CubeF4"\n'
        'hal_flags = ["-I/opt/cube/Inc"]\n')
    asked = board_files_to_trust("my_f4.toml", tmp_path)  # the path it shows: a permission
    assert [f.value for f in asked[0].findings] == ["/opt/cube/Inc"]
    trust.approve(asked[0])
    b = load_board("my_f4.toml", tmp_path)
    assert b.name == "my_f4" and b.description == "my board" and b.mcu == "STM32F405RG"
    assert "STM32CubeF4 is installed" in board_context(b, backend="qemu", where="")


@pytest.mark.parametrize("text, message", [
    ('extends = "netduinoplus2"\nflash = "big"\n', "board key 'flash' must be list[int]"),
    ('extends = "netduinoplus2"\nspeed = 3\n', "unknown key 'speed'"),
    ('extends = "netduinoplus2"\narch = "riscv"\n', "'arch' must be one of cortex-m, avr"),
    ('mcu = "X"\n', "the board file lacks description"),
    ('extends = "nope"\n', "board 'nope' is not known; built in: arduino-uno"),
])
def test_a_bad_board_file_says_the_file_and_the_key(tmp_path, text, message):
    (tmp_path / "b.toml").write_text(text)
    with pytest.raises(ConfigError) as info:
        load_board(str(tmp_path / "b.toml"))
    assert message in str(info.value)


@pytest.mark.parametrize("table, message", [
    ({"kind": "mcu"}, "'targets.b.board' is missing"),
    ({"kind": "mcu", "board": "x", "backend": "jtag"}, "must be \"qemu\" or \"probe\""),
    ({"kind": "mcu", "board": "x", "backend": "probe"}, "'targets.b.flash' is missing"),
    ({"kind": "mcu", "board": "x", "via": "local"}, "'targets.b.via' must name an ssh target"),
])
def test_bad_mcu_config_is_refused(table, message):
    with pytest.raises(ConfigError) as info:
        parse_config({"targets": {"b": table}})
    assert message in str(info.value)


def test_the_context_tells_the_llm_the_board_and_the_contract():
    text = board_context(load_board("netduinoplus2"), backend="qemu", where="")
    assert "MCU: STM32F405RG" in text and "flash 1 MB at 0x08000000" in text
    assert "RAM 128 KB at 0x20000000" in text and "USART1 on PA9 (TX)" in text
    assert "end with an end line: a line whose last word is PASSED or FAILED" in text
    assert "No vendor HAL" in text and "its own Makefile" in text
    assert "QEMU emulator" in text and "read as 0" in text


def test_a_recipe_board_makes_an_emulator_target():
    r = load_recipe(EXAMPLES / "stm32_can.toml")
    assert r.board == "netduinoplus2" and r.flags == ["-O2", "-g", "-Wall", "-Wextra"]
    cfg, name = with_board(parse_config({}), r)
    assert name == "mcu-netduinoplus2"
    assert cfg.targets[name].kind == "mcu" and cfg.targets[name].backend == "qemu"
    assert any(c.kind == "compiles-clean" for c in r.criteria)


def test_firmware_project_files_keep_their_names():
    answer = project_answer({"Makefile": "all:\n\ttrue\n", "link.ld": "SECTIONS {}\n",
                             "startup.s": ".syntax unified\n", "main.c": "int main(void){}\n"})
    names = {b.filename: b.language for b in extract(answer).blocks}
    assert names == {"Makefile": "makefile", "link.ld": "ld", "startup.s": "asm",
                     "main.c": "c"}


def test_qemu_log_is_counted_not_kept():
    log = diagnose.QemuLog()
    chunk = "CAN1: unimplemented device read  (size 4, offset 0x004)\n" * 10000
    for _ in range(50):
        log.feed(chunk)
    log.feed("RCC: unimplemented device write (size 4, offset 0x030, value 0x1)\n")
    log.close()
    assert log.devices == {"CAN1": 500000, "RCC": 1} and log.other == []
    note = log.unmodelled(quiet=["RCC"])
    assert "CAN1 (500000 accesses)" in note and "RCC" not in note


def test_fault_status_registers_in_words():
    assert diagnose.fault_kind(0x00008200, 0x40000000, 0x30000000, 0) == (
        "HardFault (escalated): precise data bus error (BusFault: a read or write to an "
        "address with nothing there), at address 0x30000000")
    assert diagnose.fault_kind(1 << 25, 0, 0, 0) == "divide by zero (UsageFault)"
    assert diagnose.fault_kind(0, 0, 0, 0) == "HardFault"


def test_the_elf_check_finds_a_bad_vector_table(tmp_path):
    need("arm-none-eabi-gcc")
    from verifybot_tui.targets import make_target

    cfg = parse_config({"targets": {"b": {"kind": "mcu", "board": "mps2-an385"}}})
    t = make_target(cfg, "b", tmp_path / "ws")
    from verifybot_tui.targets.mcu import build

    workdir = tmp_path / "ws" / "runs" / "x"
    workdir.mkdir(parents=True)
    (workdir / "main.c").write_text(SUM)
    built = asyncio.run(build.build(t.local, t.board, workdir, ["main.c"], Recorder()))
    assert built.elf is not None
    board = load_board("mps2-an385")
    info = check_elf(built.elf, board)
    assert info.problems == [] and info.vectors[1] & 1
    data = bytearray(built.elf.read_bytes())
    at = data.find(struct.pack("<II", info.vectors[0], info.vectors[1]))
    data[at + 4:at + 8] = struct.pack("<I", info.vectors[1] & ~1)  # reset in ARM state
    data[at:at + 4] = struct.pack("<I", 0x10000000)  # the stack outside RAM
    built.elf.write_bytes(bytes(data))
    checked = check_elf(built.elf, board)
    assert any("initial stack pointer 0x10000000 is not in RAM" in p for p in checked.problems)
    # odd, not impossible to start: a warning the feedback carries (issue 29)
    assert any("reset handler" in w and "bit 0 clear" in w for w in checked.warnings)


def test_doctor_checks_toolchain_emulator_flash_tool_and_serial_port(tmp_path):
    """A missing piece says the apt or pip line that installs it."""
    bin_dir = tmp_path / "bin"  # a PATH with the Arm toolchain and QEMU, without openocd
    bin_dir.mkdir()
    for tool in ("arm-none-eabi-gcc", "arm-none-eabi-addr2line", "arm-none-eabi-objcopy",
                 "make", "qemu-system-arm"):
        need(tool)
        (bin_dir / tool).symlink_to(shutil.which(tool))
    cfg = tmp_path / "config.toml"
    cfg.write_text('[llm.chatgpt]\nbrowser_path = "/usr/bin/chromium"\n'
                   '[targets.stm32]\nkind = "mcu"\nboard = "netduinoplus2"\n'
                   '[targets.bench]\nkind = "mcu"\nboard = "netduinoplus2"\nbackend = "probe"\n'
                   f'flash = "openocd-stlink"\nserial = "{tmp_path / "no-tty"}"\n'
                   '[targets.uno]\nkind = "mcu"\nboard = "arduino-uno"\n')
    env = {**os.environ, "PATH": str(bin_dir)}
    proc = subprocess.run([*verifybot_cmd(), "doctor", "--config", str(cfg)],
                          capture_output=True, text=True, timeout=120, env=env)
    out = proc.stdout
    assert proc.returncode == 1, out
    assert "OK   target stm32: emulator qemu-system-arm -M netduinoplus2" in out
    assert "OK   target stm32: arm-none-eabi-gcc for the STM32F405RG" in out
    assert "FAIL target bench: flash tool openocd is missing: sudo apt install openocd" in out
    assert f"FAIL target bench: serial port {tmp_path / 'no-tty'} does not exist" in out
    assert ("FAIL target uno: missing avr-gcc, avr-addr2line, avr-objcopy: sudo apt install "
            "binutils-avr gcc-avr") in out


def test_a_prompt_about_a_microcontroller_goes_to_the_board():
    from verifybot_tui.targets import choose_target

    cfg = parse_config({"targets": {"pi": {"kind": "ssh", "host": "127.0.0.1"},
                                    "stm32": {"kind": "mcu", "board": "netduinoplus2"}}})
    assert choose_target(cfg, "Write me an STM32 CAN bus driver in C", None) == (
        "stm32", "target stm32: the prompt names a microcontroller or firmware")
    assert choose_target(cfg, "Blink an LED on the Raspberry Pi GPIO", None)[0] == "pi"
    assert choose_target(cfg, "Sort a list of words", None) == ("local", "")
    assert choose_target(cfg, "STM32 firmware", "local") == ("local", "")


def test_a_cpu_lockup_qemu_aborts_on_is_read_from_its_register_dump():
    """What qemu-system-arm 7.2 prints when a fault handler faults (a Cortex-M lockup)."""
    log = diagnose.QemuLog()
    log.feed("Timer with period zero, disabling\n"
             "qemu: fatal: Lockup: can't escalate 3 to HardFault (current priority -1)\n\n"
             "R00=00000000 R01=00000000 R02=00000000 R03=00000000\n"
             "R12=00000000 R13=2000ffe0 R14=fffffff9 R15=0000001c\n"
             "XPSR=41000003 -Z-- T handler\n")
    log.close()
    message, pc, lr = diagnose.lockup(log)
    assert message == "qemu: fatal: Lockup: can't escalate 3 to HardFault (current priority -1)"
    assert (pc, lr) == (0x1C, 0xFFFFFFF9)
