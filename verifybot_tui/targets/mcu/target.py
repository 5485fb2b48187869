"""The mcu target: build firmware here, run it in QEMU or on a real board, read its UART.

The same Target protocol as the local and SSH targets, so the loop, the app and
the history treat a board like any machine: ``run`` puts the answer's files in a
fresh run folder, builds them (a compiler error is a failed build with file:line),
checks the ELF fits the board, runs it (``backend = "qemu"``: the emulator here;
``"probe"``: a real board, flashed and read over serial, here or on the Pi that
``via`` names) and returns the UART output as stdout, with what went wrong seen
from outside the firmware (a fault, a hang, silence) as stderr and the diagnosis.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import (
    OutputCallback,
    ReportsState,
    RunRequest,
    RunResult,
    Target,
)
from verifybot_tui.core.settings.config import Config, TargetConfig
from verifybot_tui.targets.local.run_folder import safe_name
from verifybot_tui.targets.local.target import LocalTarget
from verifybot_tui.targets.mcu import build
from verifybot_tui.targets.mcu.boards import Board, load_board
from verifybot_tui.targets.mcu.build_steps import Built
from verifybot_tui.targets.mcu.context import board_context
from verifybot_tui.targets.mcu.elfcheck import check_elf
from verifybot_tui.targets.mcu.qemu import FirmwareRun, run_qemu
from verifybot_tui.targets.mcu.real.probe import run_on_board
from verifybot_tui.targets.probe_local import save_context


class McuTarget(ReportsState):
    kind = "mcu"

    def __init__(self, config: TargetConfig, workspace: Path, settings: Config | None = None,
                 via: Target | None = None) -> None:
        self.config = config
        self.name = config.name
        self.workspace = Path(workspace).absolute()
        base = settings.path.parent if settings and settings.path else None
        self.board: Board = load_board(config.board, base)
        if config.backend == "qemu" and not self.board.qemu:
            raise TargetError(f"board {self.board.name}: no emulator models it; use "
                              "backend = \"probe\" with a real board")
        self.local = LocalTarget(config, self.workspace, settings)  # builds, flash tools
        self.via = via
        self._closed = asyncio.Event()
        self._active = 0  # runs under way; close() waits for them to have stopped
        self._idle = asyncio.Event()
        self._idle.set()
        self.state = "connected" if via is None else "disconnected"
        self.notes: list[str] = []  # said at a start (a leftover place released), for the log

    async def connect(self) -> None:
        if self.config.backend == "labgrid":  # before the prompt, as an SSH target's connect
            from verifybot_tui.targets.mcu.farm.preflight import check_before_run

            await check_before_run(self.config, self.notes)
        if self.via is not None:
            self.state = "connecting"
            try:
                await self.via.connect()
            except BaseException:
                self.state = "error"
                raise
        self.state = "connected"

    async def close(self) -> None:
        self._closed.set()  # a run in the emulator ends at once, and says why
        await self.local.close()
        await asyncio.wait([asyncio.ensure_future(self._idle.wait())], timeout=10)
        if self.via is not None:
            await self.via.close()

    async def probe(self) -> str:
        where = (f"serial {self.config.serial} at {self.config.baud} baud, flashed with "
                 f"{self.config.flash}" + (f", on {self.config.via}" if self.config.via else ""))
        if self.config.backend == "labgrid":
            # The LLM gets the board (above), nothing of the farm: no coordinator address,
            # no place names or tags (they are the team's, and no help to write firmware).
            where = "a board of a shared test farm, given to this run"
        text = board_context(self.board, backend=self.config.backend, where=where)
        if self.via is not None:
            text += "\n\n" + await self.via.probe()
        save_context(self.workspace, self.name, text)
        return text

    async def missing_modules(self, modules: list[str], python: str | None = None) -> list[str]:
        return []  # firmware imports no Python modules

    async def install(self, packages: list[str], on_output: OutputCallback) -> str:
        raise TargetError("an mcu target installs no Python packages")

    async def run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        self._closed.clear()  # a run after a close() is a new use of the target
        self._active += 1
        self._idle.clear()
        try:
            return await self._run(request, on_output)
        finally:
            self._active -= 1
            if not self._active:
                self._idle.set()

    async def _run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        started = time.monotonic()
        for note in self.notes:  # what the start did (a leftover place released)
            on_output("note", note)
        self.notes.clear()
        workdir = self._fresh_workdir(request.run_id)
        names = self._write_files(workdir, request)
        if not build.buildable(names):
            why = (f"nothing to build for the {self.board.mcu}: an mcu target builds C or C++ "
                   f"firmware (.c, .cpp, .s files, an Arduino sketch .ino, or a Makefile), and "
                   f"the answer holds {', '.join(names) or 'no file'}\n")
            on_output("stderr", why)
            return RunResult(exit_code=None, stdout="", stderr=why, duration=0.0,
                             compile_failed=True, workdir=str(workdir))
        building = time.monotonic()
        built = await build.build(self.local, self.board, workdir, names, on_output,
                                  compiler=request.compiler, flags=request.flags,
                                  semihosting=self.config.backend == "qemu")
        built.result.build_seconds = round(time.monotonic() - building, 3)
        parts = f" [parts: {built.parts}]" if built.parts else ""
        if built.elf is None:
            built.result.command = built.command + parts
            built.result.workdir = str(workdir)
            return built.result
        info = check_elf(built.elf, self.board)
        command = f"{built.command}{parts} [{info.summary(self.board)}]"
        if info.problems:
            why = f"the firmware cannot run on the {self.board.mcu}: " + "; ".join(info.problems)
            on_output("stderr", why + "\n")
            notes = "".join(f"note: {w}\n" for w in info.warnings)
            return RunResult(exit_code=None, stdout="", stderr=why + "\n" + notes,
                             duration=time.monotonic() - started, build_stderr=built.warnings,
                             build_seconds=built.result.build_seconds, command=command,
                             workdir=str(workdir), diagnosis=why)
        if self.config.backend == "qemu":
            try:
                fw = await run_qemu(self.board, built.elf, info.vectors, workdir,
                                    request.timeout, on_output, self._closed,
                                    sandbox=self.config.sandbox,
                                    env=self.local.program_env())
            except OSError as e:
                why = f"cannot start {self.board.qemu[0]}: {e} (verifybot doctor says what to " \
                      "install)"
                on_output("stderr", why + "\n")
                return RunResult(exit_code=None, stdout="", stderr=why + "\n",
                                 duration=time.monotonic() - started, command=command,
                                 workdir=str(workdir), target_error=why)
        elif self.config.backend == "labgrid":
            from verifybot_tui.targets.mcu.farm.run import run_on_place

            fw = await run_on_place(self, built.elf, workdir, request, on_output)
        else:
            fw = await run_on_board(self, built.elf, workdir, request, on_output)
        return self._result(fw, built, info.warnings, command, workdir, on_output, started)

    def _result(self, fw: FirmwareRun, built: Built, elf_warnings: list[str],
                command: str, workdir: Path, on_output: OutputCallback,
                started: float) -> RunResult:
        if fw.ended_by == "closed" or fw.broken:
            why = fw.diagnosis if fw.broken else "stopped: the target was closed"
            if fw.broken:
                on_output("stderr", why + "\n")
            return RunResult(exit_code=None, stdout=fw.uart, stderr="", duration=fw.duration,
                             command=command, workdir=str(workdir), target_error=why)
        told = [fw.diagnosis] if fw.diagnosis else []
        told += [f"note: {n}" for n in (*elf_warnings, *fw.notes)]
        stderr = "".join(line + "\n" for line in told)
        if stderr:
            on_output("stderr", stderr)
        if (fw.diagnosis or fw.exit_code != 0) and built.warnings.strip():
            # already shown as the build ran; the LLM reads them with the failure (a warning
            # such as "set but not used" is often the bug)
            stderr += ("The build's warnings (one may be the cause):\n"
                       + built.warnings.strip() + "\n")
        return RunResult(
            exit_code=fw.exit_code, stdout=fw.uart, stderr=stderr,
            duration=time.monotonic() - started, timed_out=fw.timed_out,
            build_stderr=built.warnings, build_unchecked=built.unchecked,
            build_seconds=built.result.build_seconds, command=f"{command} && {fw.command}",
            workdir=str(workdir), stdout_bytes=fw.uart_bytes,
            stderr_bytes=len(stderr.encode()), diagnosis=fw.diagnosis, escaped=fw.escaped)

    # -- files ------------------------------------------------------------------------

    def _fresh_workdir(self, run_id: str) -> Path:
        safe = safe_name(run_id).replace("/", "_") or "run"
        workdir = self.workspace / "runs" / safe
        if workdir.exists():
            shutil.rmtree(workdir)
        workdir.mkdir(parents=True)
        return workdir

    @staticmethod
    def _write_files(workdir: Path, request: RunRequest) -> list[str]:
        names: list[str] = []
        for pf in request.files:
            name = safe_name(pf.name)
            path = workdir / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(pf.content, encoding="utf-8")
            names.append(name)
        return names
