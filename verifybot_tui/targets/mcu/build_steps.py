"""A firmware build's steps run one after another, and the ``Built`` they make.

The board package's build (build.py) and an Arduino sketch's (sources/arduino.py)
run their compiler and linker commands the same way: through the runner (the
sandbox), stopping at the first that fails (a compile_failed result, gcc's
``file:line`` kept), keeping the warnings of those that passed, a missing tool
said as a failed build that names it. Below both, so neither imports the other
for it.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from verifybot_tui.core.base.ports import OutputCallback, RunResult

BUILD_TIMEOUT = 120.0


class Runner(Protocol):
    """What runs a build's commands: the local target's sandboxed ``command``."""

    async def command(self, argv: list[str], cwd: Path, on_output: OutputCallback,
                      timeout: float, *, read_only: Sequence[str | Path] = (),
                      writable: Sequence[Path] = ()) -> RunResult: ...


@dataclass
class Built:
    """A build's end: the firmware (or why there is none) and what the transcript says."""

    elf: Path | None  # None: the build failed (result says why)
    result: RunResult  # the last step's result; compile_failed on failure
    warnings: str  # every step's compiler output of a build that passed
    command: str  # the steps, joined for the transcript
    own_make: bool = False
    parts: str = ""  # which parts came from the answer, which from VerifyBot
    unchecked: str = ""  # why a recipe's compiler and flags may not have held ("" they did)


def tell(built: Built, on_output: OutputCallback, text: str) -> None:
    """Say something about the build (shown now, and kept in its result for the LLM)."""
    on_output("stderr", text)
    built.result.stderr += text


async def run_steps(runner: Runner, workdir: Path, steps: list[list[str]],
                    on_output: OutputCallback, link: bool = True,
                    read_only: Sequence[Path] = ()) -> Built:
    """Each command in turn through the runner (the sandbox); the first that fails (or
    whose tool is missing) ends the build. ``link``: the last makes ``firmware.elf``."""
    warnings: list[str] = []
    commands: list[str] = []
    result = RunResult(exit_code=0, stdout="", stderr="", duration=0.0)
    for argv in steps:
        if shutil.which(argv[0]) is None:
            return missing_tool(argv[0], workdir, on_output)
        result = await runner.command(argv, workdir, on_output, BUILD_TIMEOUT,
                                      read_only=read_only)
        commands.append(result.command)
        if result.exit_code != 0:
            result.compile_failed = True
            return Built(None, result, "".join(warnings), " && ".join(commands))
        warnings.append(result.stderr + result.stdout)
    return Built(workdir / ("firmware.elf" if link else ""), result, "".join(warnings),
                 " && ".join(commands))


def missing_tool(tool: str, workdir: Path, on_output: OutputCallback) -> Built:
    """A tool not installed here: a failed build that names it."""
    text = (f"{tool} is not installed on this machine (verifybot doctor says how to "
            "install the toolchain)\n")
    on_output("stderr", text)
    result = RunResult(exit_code=127, stdout="", stderr=text, duration=0.0,
                       compile_failed=True, workdir=str(workdir))
    return Built(None, result, "", tool)
