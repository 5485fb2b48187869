"""A recipe's compiler and flags hold for an answer's own Makefile, or compiles-clean says
it could not tell (issue 28): real make, real cross-builds, real QEMU."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from mcu_fixtures import Recorder, mcu_config, qemu_pids, request
from project import need

from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.targets import make_target
from verifybot_tui.targets.mcu.sources import own_make

MAIN = """\
#include <stdio.h>

int main(void)
{
    int unused;
    printf("PASSED\\n");
    return 0;
}
"""
CLEAN_MAIN = MAIN.replace("    int unused;\n", "")

MAKEFILE = """\
CC = arm-none-eabi-gcc
CFLAGS = -mcpu=cortex-m3 -mthumb -O1 -g EXTRA
PKG = vb_board/startup.c vb_board/fault.c vb_board/syscalls.c vb_board/uart_stellaris.c

fw: build/main.o
\tCOMPILER $(CFLAGS) -nostartfiles --specs=nano.specs -T vb_board/board.ld -o $@ $^ $(PKG)

build/main.o: src/main.c
\tmkdir -p build
\tCOMPILER $(CFLAGS) -c -o $@ $<
"""


def project(main: str, extra: str = "", compiler: str = "$(CC)") -> dict[str, str]:
    return {"Makefile": MAKEFILE.replace("EXTRA", extra).replace("COMPILER", compiler),
            "src/main.c": main}


@pytest.fixture
async def lm3s(tmp_path):
    need("arm-none-eabi-gcc", "qemu-system-arm", "make")
    t = make_target(mcu_config("lm3s6965evb"), "board", tmp_path / "ws")
    yield t
    await t.close()
    assert qemu_pids(tmp_path / "ws") == []


async def _recipe_run(t, run_id: str, files: dict[str, str]):  # type: ignore[no-untyped-def]
    req = dataclasses.replace(request(run_id, files), compiler="arm-none-eabi-gcc",
                              flags=["-Wall", "-Wextra"])
    r = await t.run(req, Recorder())
    return r, crit.evaluate([crit.parse("compiles-clean")], r)[0]


async def test_the_recipes_flags_reach_the_makefiles_compiles(lm3s):
    r, clean = await _recipe_run(lm3s, "flags_1", project(MAIN))
    assert r.exit_code == 0 and r.stdout == "PASSED\n", r.stderr
    assert "unused variable 'unused'" in r.build_stderr  # -Wall came from the recipe
    assert not clean.met and "the compiler warned" in clean.evidence
    assert "make CC=" in r.command


async def test_a_clean_makefile_build_passes_compiles_clean(lm3s):
    r, clean = await _recipe_run(lm3s, "flags_2", project(CLEAN_MAIN))
    assert r.exit_code == 0 and r.build_unchecked == "", r.stderr
    assert clean.met, clean.evidence


async def test_a_makefile_that_silences_warnings_cannot_pass_compiles_clean(lm3s):
    r, clean = await _recipe_run(lm3s, "flags_3", project(MAIN, extra="-w"))
    assert r.exit_code == 0 and r.build_stderr == ""
    assert not clean.met
    assert clean.evidence == ("could not tell whether the recipe's compiler and flags held: "
                            "the Makefile adds -w, which silences warnings")


async def test_a_makefile_that_names_its_own_compiler_cannot_pass_compiles_clean(lm3s):
    r, clean = await _recipe_run(lm3s, "flags_4", project(MAIN, compiler="arm-none-eabi-gcc"))
    assert r.exit_code == 0
    assert not clean.met
    assert "the Makefile runs the compiler itself, not $(CC): arm-none-eabi-gcc" in clean.evidence


async def test_a_makefile_that_falls_back_to_the_bare_compiler_cannot_pass_compiles_clean(lm3s):
    """$(CC) first, its errors hidden, then the bare compiler: the failed wrapped call
    made nothing and logged nothing, so the object the bare one made is a stray."""
    fallback = ("$(CC) $(CFLAGS) -c -o $@ $< 2>/dev/null || "
                "arm-none-eabi-gcc $(CFLAGS) -c -o $@ $<")
    files = project(MAIN)
    files["Makefile"] = files["Makefile"].replace("$(CC) $(CFLAGS) -c -o $@ $<", fallback)
    req = dataclasses.replace(request("fallback_1", files), compiler="arm-none-eabi-gcc",
                              flags=["-Wall", "-Werror"])
    r = await lm3s.run(req, Recorder())
    clean = crit.evaluate([crit.parse("compiles-clean")], r)[0]
    assert r.exit_code == 0 and r.stdout == "PASSED\n", r.stderr
    assert not clean.met
    assert "build/main.o was not compiled through $(CC) or $(CXX)" in clean.evidence


async def test_a_firmware_changed_after_the_wrapped_link_cannot_pass_compiles_clean(lm3s):
    files = project(CLEAN_MAIN)
    files["Makefile"] = files["Makefile"].replace(
        "-o $@ $^ $(PKG)", "-o fw.linked $^ $(PKG)\n\tcp fw.linked $@\n\tprintf x >> $@")
    r, clean = await _recipe_run(lm3s, "relinked_1", files)
    assert r.exit_code == 0 and r.stdout == "PASSED\n", r.stderr
    assert not clean.met
    assert "the firmware fw was not made by a successful call of $(CC)" in clean.evidence


async def test_the_wrappers_and_their_log_live_outside_the_run_folder(lm3s):
    r, clean = await _recipe_run(lm3s, "outside_1", project(CLEAN_MAIN))
    assert clean.met, clean.evidence
    run = Path(r.workdir)
    log = own_make.wrap_folder(run) / own_make.LOG
    assert not any(p.name in ("cc.log", "vb-cc") for p in run.rglob("*"))
    lines = log.read_text().splitlines()
    assert len(lines) == 2 and all(len(line.split("\t")[1]) == 64 for line in lines)
