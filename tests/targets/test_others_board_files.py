"""A board file from others (a cloned repository, a shared recipe folder) widens nothing
by its data keys. Its ``uart_source`` once named a symlink beside it (to
``~/.ssh/id_ed25519``), which was copied, link followed, into the build and printed in the
outputs; ``-I/home`` in its ``hal_flags`` showed every home to every build, unasked.
Now its sources are regular files in its own folder, copies follow no link, and a path
it shows to a build is a permission on the trust screen, approved by hash; homes,
``/root``, VerifyBot's own folders and the workspace are refused outright.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_runs import answers
from mcu_fixtures import Recorder, c_answer, mcu_config, request
from other_users import USER_IDS, USERS, give, open_folder, verifybot_as
from project import need

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings import trust
from verifybot_tui.targets import make_target
from verifybot_tui.targets.mcu.boards import board_files_to_trust, load_board

UART = (Path(__file__).parents[2] / "verifybot_tui/targets/mcu/package/cortex-m/"
        "uart_stm32f4.c")
SECRET = "PLANTED-SSH-KEY-0451"
HELLO = """\
#include <stdio.h>

int main(void)
{
    printf("SELFTEST PASSED\\n");
    return 0;
}
"""


def _board(folder: Path, extra: str = "", uart: str = "my_uart.c") -> Path:
    board = folder / "myboard.toml"
    board.write_text(f'extends = "netduinoplus2"\nuart_source = "{uart}"\n{extra}')
    return board


@pytest.mark.parametrize("user", USERS, ids=USER_IDS)
def test_a_uart_source_that_is_a_link_is_refused_and_never_copied(user) -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")
    with open_folder() as home:
        key = home / ".ssh" / "id_ed25519"
        key.parent.mkdir()
        key.write_text(f"/* {SECRET} */\n")
        repo = home / "cloned"
        repo.mkdir()
        _board(repo)
        (repo / "my_uart.c").symlink_to(key)
        (repo / "config.toml").write_text(
            '[targets.fw]\nkind = "mcu"\nboard = "myboard.toml"\nbackend = "qemu"\n')
        (repo / "fw.md").write_text(answers(c_answer(HELLO)))
        give(user, home)
        done = verifybot_as(user, "run", "blink", "--config", "config.toml", "--target", "fw",
                            "--llm", f"replay:{repo / 'fw.md'}", "--yes", "--trust",
                            "--max-retries", "0", "--workspace", str(home / "ws"), cwd=repo)
        out = done.stdout + done.stderr
        assert done.returncode == 2, out
        assert "myboard.toml: board key 'uart_source': my_uart.c is a symlink" in out
        assert SECRET not in out
        leaked = [p for p in (home / "ws").rglob("*") if p.is_file()
                  and SECRET in p.read_text(errors="replace")] if (home / "ws").exists() else []
        assert leaked == []


@pytest.mark.parametrize("uart, words", [
    ("../uart_stm32f4.c", "must be a file name beside the board file"),
    ("/etc/passwd", "must be a file name beside the board file"),
    ("sub/uart.c", "must be a file name beside the board file"),
])
def test_a_uart_source_outside_the_board_folder_is_refused(tmp_path, uart, words) -> None:
    with pytest.raises(ConfigError) as info:
        load_board(str(_board(tmp_path, uart=uart)))
    assert words in str(info.value) and "'uart_source'" in str(info.value)


def test_a_regular_uart_source_beside_the_board_is_used(tmp_path) -> None:
    (tmp_path / "my_uart.c").write_text(UART.read_text())
    board = load_board(str(_board(tmp_path)))
    assert board.uart_path == tmp_path / "my_uart.c"


@pytest.mark.parametrize("flag", [
    "-I/home", "-I/", "-I/root", "-I/root/hal", "-L{home}", "-include{home}/.ssh/id_ed25519",
    "-T{config}/x.ld", "-I{state}", "-I{data}/profiles",
])
def test_a_path_reaching_homes_or_verifybots_folders_is_refused_even_when_trusted(
        tmp_path, flag) -> None:
    from verifybot_tui.core.settings.config import user_config_dir, user_data_dir
    from verifybot_tui.core.settings.ui_state import state_path

    value = flag.format(home=Path.home(), config=user_config_dir(), data=user_data_dir(),
                        state=state_path().parent)
    board = _board(tmp_path, f'hal_flags = ["{value}"]\n', uart="uart_stm32f4.c")
    for read in (board_files_to_trust, load_board):  # not even asked about: never shown
        with pytest.raises(ConfigError) as info:
            read(str(board))
        assert f"board key 'hal_flags' shows {value.lstrip('-ILTinclude')}" in str(info.value)
        assert "never shown" in str(info.value)


async def test_a_shown_path_is_asked_about_and_once_approved_the_build_sees_it(tmp_path):
    need("arm-none-eabi-gcc", "qemu-system-arm")
    hal = tmp_path / "opt-hal"
    hal.mkdir()
    (hal / "hal_greeting.h").write_text('#define GREETING "from the HAL"\n')
    board = _board(tmp_path, f'hal_flags = ["-I{hal}"]\n', uart="uart_stm32f4.c")
    asked = board_files_to_trust(str(board))
    assert [str(f) for f in asked[0].findings] == [
        f"hal_flags = {hal} (shows this path, read-only, to every build)"]
    with pytest.raises(trust.UntrustedFile):
        load_board(str(board))
    trust.approve(asked[0])
    t = make_target(mcu_config(str(board)), "board", tmp_path / "ws")
    try:
        code = HELLO.replace("<stdio.h>", '<stdio.h>\n#include "hal_greeting.h"').replace(
            'printf("SELFTEST', 'printf(GREETING "\\n");\n    printf("SELFTEST')
        r = await t.run(request("hal_1", {"main.c": code}), Recorder())
    finally:
        await t.close()
    assert r.stdout == "from the HAL\nSELFTEST PASSED\n", r.stderr


async def test_a_shown_path_into_the_workspace_is_refused_at_the_build(tmp_path):
    need("arm-none-eabi-gcc")
    ws = tmp_path / "ws"
    (ws / "programs").mkdir(parents=True)
    board = _board(tmp_path, f'hal_flags = ["-I{ws / "programs"}"]\n', uart="uart_stm32f4.c")
    for f in board_files_to_trust(str(board)):
        trust.approve(f)
    t = make_target(mcu_config(str(board)), "board", ws)
    try:
        with pytest.raises(ConfigError) as info:
            await t.run(request("ws_1", {"main.c": HELLO}), Recorder())
    finally:
        await t.close()
    assert f"shows {ws / 'programs'} to every build" in str(info.value)
    assert "workspace" in str(info.value)
    assert os.path.isdir(ws / "programs")


def test_objcopy_and_addr2line_see_only_the_elfs_folder(tmp_path) -> None:
    """The tools VerifyBot runs on an answer's ELF run in the build's sandbox: they read
    and write the ELF's folder, and see no home and nothing else of the host."""
    need("arm-none-eabi-gcc", "bwrap")
    import subprocess

    from verifybot_tui.targets.sandbox.bubblewrap import sandboxed_tool

    run = tmp_path / "run"
    run.mkdir()
    (run / "main.c").write_text("int main(void) { return 0; }\n")
    elf = run / "fw.elf"
    subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m3", "-mthumb", "--specs=nosys.specs",
                    "-o", str(elf), str(run / "main.c")], check=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = tmp_path / "secret.elf"
    secret.write_bytes(elf.read_bytes())

    def tool(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(sandboxed_tool(list(argv), run), text=True,
                              capture_output=True, stdin=subprocess.DEVNULL, timeout=60)

    assert tool("arm-none-eabi-objcopy", "-O", "binary", str(elf), str(run / "fw.bin")
                ).returncode == 0 and (run / "fw.bin").stat().st_size > 0
    wrote = tool("arm-none-eabi-objcopy", "-O", "binary", str(elf), str(outside / "fw.bin"))
    assert wrote.returncode != 0 and not (outside / "fw.bin").exists()
    read = tool("arm-none-eabi-addr2line", "-e", str(secret), "0x0")
    assert "No such file" in read.stderr, read
    assert tool("arm-none-eabi-addr2line", "-e", str(elf), "0x0").returncode == 0
