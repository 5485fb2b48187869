"""Crashes told as what they are: a stack that outgrew the RAM is a stack overflow, with the
function whose frame did it, whether the CPU faulted (the STM32F405: its registers could not
even be saved) or the emulator let the write pass (the LM3S6965, where the chip would fault).
Real cross-builds, real QEMU; the verdict and the cause checked.
"""

from __future__ import annotations

import pytest
from mcu_fixtures import Recorder, request

from verifybot_tui.core.verify.verdict import judge

# A 1 MB local array: SP goes below the start of RAM at fill()'s first store.
STACK_OVERFLOW = """\
#include <stdio.h>

static int fill(int n)
{
    volatile char big[1 << 20];
    big[0] = (char)n;
    big[n] = 1;
    return big[0] + big[n];
}

int main(void)
{
    printf("start\\n");
    printf("%d\\n", fill(5));
    printf("PASSED\\n");
    return 0;
}
"""


@pytest.mark.parametrize("board", ["netduinoplus2", "lm3s6965evb"])
async def test_a_stack_overflow_is_told_as_one_with_its_function(mcu, board):
    r = await mcu(board).run(request(f"overflow_{board}", {"main.c": STACK_OVERFLOW}),
                              Recorder())
    assert r.stdout.startswith("start\n")
    assert r.exit_code == 1 and not judge(r, []).ok
    assert r.diagnosis.startswith("the firmware crashed: a stack overflow. ")
    assert "below the start of the" in r.diagnosis
    assert "The biggest stack frame is fill() (main.c:3): 1,048,576 bytes" in r.diagnosis
    assert "exit" not in r.diagnosis


async def test_the_cpu_that_faulted_says_it_could_not_stack(mcu):
    r = await mcu("netduinoplus2").run(request("overflow_fault", {"main.c": STACK_OVERFLOW}),
                                        Recorder())
    assert "could not save its registers for the fault" in r.diagnosis
    assert "bus error while stacking" in r.diagnosis


async def test_a_lockup_is_told_as_a_lockup(mcu):
    """A fault with no HardFault handler (its entry 0): the CPU locks up, and says so."""
    from test_mcu_projects import LINK_LD, OWN_MAIN, STARTUP_S

    main = OWN_MAIN.replace("    say(greeting);", "    say(greeting);\n    __builtin_trap();")
    r = await mcu("lm3s6965evb").run(request("lockup", {"startup.s": STARTUP_S,
                                                        "link.ld": LINK_LD, "main.c": main}),
                                     Recorder())
    assert r.stdout == "own start-up, own script\n" and not judge(r, []).ok
    assert r.diagnosis.startswith("the CPU locked up (a fault inside the fault handler, or no "
                                  "usable handler): qemu: fatal: Lockup")
    assert "exit" not in r.diagnosis
