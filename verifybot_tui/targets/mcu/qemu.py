"""A firmware run in QEMU: paused start, serial first, capture until the end, always stopped.

QEMU starts with its CPU halted (-S) and its GDB stub on a private socket; the
serial port is its stdout pipe, open before the first instruction runs, so no
early byte is lost. The stub sets breakpoints on the fault vectors the ELF's
vector table names (whatever start-up code the firmware brought), then lets the
CPU go. The run ends at the first of: the UART's end line, the program's exit
(semihosting), a fault vector hit, QEMU ending by itself (a lockup), or the
timeout, where the stub interrupts the CPU to say where it was. Whatever ended
it, QEMU is stopped by its pid (its whole process tree) before this returns,
also when the task is cancelled (Ctrl+C, a hang-up). QEMU's -d log goes to its
stderr pipe and is only counted (diagnose.QemuLog): bounded however it floods.
"""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.core.settings.secrets import program_env
from verifybot_tui.targets import live_runs
from verifybot_tui.targets.containment.leftovers import await_sandbox_end, sandbox_ended
from verifybot_tui.targets.containment.markers import MARKER, kill_marked, new_token
from verifybot_tui.targets.containment.tree import LIVE_ROOTS, stop_tree, tree_pids
from verifybot_tui.targets.local import launch
from verifybot_tui.targets.local.reader import OutputReader
from verifybot_tui.targets.mcu import diagnose, peripherals
from verifybot_tui.targets.mcu.boards import Board
from verifybot_tui.targets.mcu.elfcheck import read_symbols
from verifybot_tui.targets.mcu.gdbstub import GdbError, GdbStub
from verifybot_tui.targets.mcu.uart import END_GRACE, UartReader
from verifybot_tui.targets.sandbox import view as sandbox_env
from verifybot_tui.targets.sandbox.bubblewrap import no_sandbox_message, sandbox_argv
from verifybot_tui.targets.sandbox.init_script import escaped_in_sandbox

QEMU_GRACE = 0.5  # seconds between TERM and KILL: QEMU holds nothing worth a longer wait
SCB_CFSR = 0xE000ED28  # CFSR, HFSR, DFSR, MMFAR, BFAR follow one word apart


@dataclass
class FirmwareRun:
    exit_code: int | None
    uart: str
    uart_bytes: int
    ended_by: str  # "end-line", "exit", "fault", "timeout", "emulator", "closed"
    diagnosis: str = ""  # why it failed, from outside the firmware ("" when it did not)
    notes: list[str] = field(default_factory=list)  # e.g. unmodelled peripherals touched
    timed_out: bool = False
    broken: bool = False  # the emulator or the board's tools failed, not the firmware
    duration: float = 0.0
    command: str = ""
    escaped: list[str] = field(default_factory=list)  # left running in the sandbox, killed


# Guest time from the count of instructions run (its rate still follows the host's:
# "auto"), not from the host's clock: without it a Cortex-M's timers count on while the
# host has QEMU's CPU thread descheduled, so a load on the host changes what the firmware
# sees. QEMU 7.2's STM32 TIM2 arms its first update when ARR is written and drops it for
# good if it comes before CEN and UIE are set: ARR = 16000 gives 16 µs, which a busy host
# took between two stores (TIM2 then never interrupted, about 1 run in 10 under load).
ICOUNT = ["-icount", "shift=auto"]


def qemu_argv(board: Board, elf: Path, sock: str) -> list[str]:
    argv = [*board.qemu, "-display", "none", "-monitor", "none", "-serial", "stdio",
            "-S", "-chardev", f"socket,id=vbgdb,path={sock},server=on,wait=off",
            "-gdb", "chardev:vbgdb", "-d", "unimp,guest_errors"]
    if board.arch == "avr":
        return [*argv, "-bios", str(elf)]
    icount = [] if "-icount" in board.qemu else ICOUNT  # a board file's own choice stands
    return [*argv, *icount, "-kernel", str(elf), "-semihosting-config",
            "enable=on,target=native"]


class _Session:
    """One QEMU process: its pipes, its log, its stub."""

    def __init__(self, board: Board, elf: Path, vectors: list[int],
                 on_output: OutputCallback) -> None:
        self.board, self.elf, self.vectors = board, elf, vectors
        self.uart = UartReader(on_output)
        self.log = diagnose.QemuLog()
        self.stub: GdbStub | None = None
        self.end_found: list[str] = []  # the "end" registers' notes, read at the end line

    def on_pipe(self, stream: str, text: str) -> None:
        if stream == "stdout":
            self.uart.feed(text)
        else:
            self.log.feed(text)

    async def arm(self, sock: str, ended: asyncio.Future[None]) -> None:
        """Connect the stub, set the fault breakpoints, let the CPU run."""
        self.stub = await GdbStub.connect(sock, ended=ended)
        await self.stub.start()
        if self.board.arch == "cortex-m":
            for address in self.fault_handlers():
                await self.stub.breakpoint(address, 2)
        if self.exit_at is not None:  # main() returned: the CPU is about to halt or QEMU end
            await self.stub.breakpoint(self.exit_at, 2)
        await self.stub.cont()

    @property
    def exit_at(self) -> int | None:
        """Where exit() ends (``_exit``: avr-libc's, the package's syscalls or the answer's)."""
        address = read_symbols(self.elf).address.get("_exit")
        return None if address is None else address & ~1

    async def at_exit(self) -> bool:
        """Whether the CPU stopped at ``_exit`` (a Cortex-M also stops at its fault vectors)."""
        if self.board.arch == "avr":
            return True
        assert self.stub is not None
        pc = struct.unpack_from("<16I", await self.stub.registers())[15]
        return self.exit_at is not None and pc & ~1 == self.exit_at

    async def on_exit(self) -> FirmwareRun:
        """main() returned or exit() was called: the status is in r24:r25 (AVR) or r0."""
        assert self.stub is not None
        self.end_found = await peripherals.explain(
            [c for c in self.end_checks() if c.address >= 0], self._read)
        if self.uart.end:
            return _ended(self)  # the end line, then main() returned: the end line counts
        regs = await self.stub.registers()
        avr = self.board.arch == "avr"
        status = struct.unpack_from("<h" if avr else "<i", regs, 24 if avr else 0)[0]
        run = FirmwareRun(status, self.uart.text, self.uart.bytes, "exit")
        found = await self.explain(silent=True, timeout=False) if not self.uart.bytes else []
        if not self.uart.bytes:
            run.diagnosis = ("no output on the UART: main() returned and the CPU halted "
                             "(avr-libc's exit), and nothing was printed on the UART" if avr else
                             f"no output on the UART: the firmware exited with status "
                             f"{status}, and nothing was printed on the UART")
            run.diagnosis += "".join(f". {f}" for f in found)
        elif status:
            run.diagnosis = (f"the firmware exited with status {status} (what main() returned; "
                             "undefined for a void main()) with no end line on the UART"
                             if avr else f"the firmware exited with status {status}")
        return run

    def fault_handlers(self) -> list[int]:
        """HardFault, MemManage, BusFault, UsageFault handlers, as the ELF's table says."""
        return sorted({v & ~1 for v in self.vectors[3:7] if v and self.board.in_flash(v & ~1)})

    def where(self, address: int) -> str:
        return diagnose.where(self.board.tool("addr2line"), self.elf, address)

    async def fault(self) -> str:
        """The CPU stopped at a fault vector: kind, faulting PC and LR in source terms."""
        assert self.stub is not None
        regs = await self.stub.registers()
        r = struct.unpack_from("<16I", regs)
        sp, exc_return = r[13], r[14]
        cfsr, hfsr, _dfsr, mmfar, bfar = await self.stub.words(SCB_CFSR, 5)
        kind = diagnose.fault_kind(cfsr, hfsr, bfar, mmfar)
        try:
            frame = await self.stub.words(sp, 8) if self.board.in_ram(sp, 32) else None
        except GdbError:
            frame = None
        if frame is None:  # the CPU could not even save its registers: SP left the RAM
            return diagnose.stack_overflow(self.board, sp, self.elf.parent, kind)
        address = mmfar if cfsr >> 7 & 1 else bfar if cfsr >> 15 & 1 else None
        end = self.board.ram[0] + self.board.ram[1]
        if address is not None and end <= address < end + self.board.ram[1]:
            kind += f" (past the end of the {self.board.mcu}'s RAM at {end:#x})"
        text = (f"the firmware crashed: {kind}. Faulting instruction: PC {self.where(frame[6])}; "
                f"return address: LR {self.where(frame[5] & ~1)}")
        if exc_return & 4:
            text += " (the fault came from a thread on the process stack; PC/LR may be off)"
        return text + f". CFSR={cfsr:#010x} HFSR={hfsr:#010x}"

    async def _read(self, address: int, size: int) -> bytes | None:
        """Memory through the stub (the CPU stopped); None when it cannot be read."""
        try:
            return await self.stub.memory(address, size) if self.stub else None
        except (GdbError, OSError, TimeoutError, asyncio.IncompleteReadError):
            return None

    async def explain(self, *, silent: bool, timeout: bool) -> list[str]:
        """What the board's registers say about a silent or stuck firmware (the CPU stopped)."""
        if self.stub is None:
            return []
        checks = [*self.board.checks, *(peripherals.nvic_checks(self.board.irq_names)
                                        if self.board.arch == "cortex-m" else [])]
        chosen = peripherals.relevant(checks, read_symbols(self.elf).defined, silent=silent,
                                      timeout=timeout)
        return await peripherals.explain(chosen, self._read)

    def end_checks(self) -> list[peripherals.Check]:
        """The board's "end" checks that matter to this firmware (what QEMU does not do as
        the chip does, for a firmware that uses it)."""
        return peripherals.relevant(self.board.checks, read_symbols(self.elf).defined,
                                    silent=False, timeout=False)

    async def read_at_end_line(self, stop: asyncio.Future[str]) -> asyncio.Future[str]:
        """At the end line, while the CPU still runs (a return from main() soon ends QEMU):
        stop it, read the "end" registers, let it go on; the new stop-reply future."""
        checks = [c for c in self.end_checks() if c.address >= 0]
        if not checks or self.stub is None or stop.done():
            return stop
        stop.cancel()  # the interrupt's reply is read here, not by the waiting reader
        await asyncio.wait([stop])
        try:
            await self.stub.interrupt()
            self.end_found = await peripherals.explain(checks, self._read)
            await self.stub.cont()
        except (GdbError, OSError, TimeoutError, asyncio.IncompleteReadError):
            pass
        return asyncio.ensure_future(self.stub.wait_stop())

    async def end_notes(self, run: FirmwareRun) -> list[str]:
        """The "end" checks' notes, after any run the diagnosis did not already tell them for:
        registers read at the end line, or now if the CPU is stopped (a fault, an exit)."""
        checks = [c for c in self.end_checks() if c.says not in run.diagnosis]
        if not checks or run.ended_by in ("timeout", "closed"):
            return []
        told = [c.says for c in checks if c.address < 0]
        if run.ended_by == "fault":
            return told + await peripherals.explain(
                [c for c in checks if c.address >= 0], self._read)
        return told + [f for f in self.end_found if f not in run.diagnosis]

    async def hang_site(self) -> str:
        """Interrupt the CPU (at the timeout) and say where it was."""
        if self.stub is None:
            return ""
        try:
            await self.stub.interrupt()
            regs = await self.stub.registers()
        except (GdbError, OSError, TimeoutError, asyncio.IncompleteReadError):
            return ""
        if self.board.arch == "avr":
            pc = struct.unpack_from("<I", regs, 35)[0]
            return f"the CPU was at PC {self.where(pc)}"
        r = struct.unpack_from("<16I", regs)
        return f"the CPU was at PC {self.where(r[15])}, LR {self.where(r[14] & ~1)}"


async def run_qemu(board: Board, elf: Path, vectors: list[int], workdir: Path,
                   timeout: float, on_output: OutputCallback,
                   closed: asyncio.Event | None = None, sandbox: str = "auto",
                   env: dict[str, str] | None = None) -> FirmwareRun:
    """Run the firmware until its end, a fault or the timeout; QEMU is gone on return.

    ``closed`` set (the target's close()) ends the run at once, however far it got.
    QEMU runs in the sandbox (``sandbox``: the target's "auto", "require" or "off"),
    as the program it runs came from an answer: semihosting opens files and runs
    commands (SYS_SYSTEM) inside it, where only the run folder can be written and a
    process it starts dies with the run; ``env`` (default: this one without secrets)
    is what such a command sees."""
    closed = asyncio.Event() if closed is None else closed
    sockdir = tempfile.mkdtemp(prefix="vb-gdb-")
    try:
        return await _run_in(board, elf, vectors, workdir, timeout, on_output, closed,
                             os.path.join(sockdir, "gdb"), sandbox, env)
    finally:
        shutil.rmtree(sockdir, ignore_errors=True)


def _sandbox(board: Board, workdir: Path, sock: str, mode: str) -> list[str] | None:
    """The bubblewrap prefix for QEMU: no network, the socket's folder writable (the
    stub connects to it from outside); None with the sandbox off."""
    if mode == "off":
        return None
    qemu = shutil.which(board.qemu[0]) if board.qemu else None
    box = sandbox_argv(workdir, False, sandbox_env.tool_roots([qemu or ""]),
                       [os.path.dirname(sock)])
    if box is None and mode == "require":
        raise TargetError(no_sandbox_message("mcu (QEMU)"))
    return box


async def _run_in(board: Board, elf: Path, vectors: list[int], workdir: Path, timeout: float,
                  on_output: OutputCallback, closed: asyncio.Event, sock: str,
                  mode: str = "auto", env: dict[str, str] | None = None) -> FirmwareRun:
    argv = qemu_argv(board, elf, sock)
    if shutil.which(argv[0]) is None:  # as exec would say, not the sandbox's shell
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), argv[0])
    box = _sandbox(board, workdir, sock, mode)
    s = _Session(board, elf, vectors, on_output)
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    token = new_token()
    base = env if env is not None else sandbox_env.scrub_env(program_env(os.environ, None))
    env = {**base, MARKER: token}
    report = stdin = subprocess.DEVNULL  # the sandbox's init names what was left running
    if box is not None:
        report, stdin = os.pipe()
    try:
        transport, protocol, cancelled = await launch.start(  # the start-race-safe spawn
            loop, lambda: OutputReader(loop, s.on_pipe), [*(box or []), *argv], workdir,
            env, None, stdin)
    except BaseException:
        launch.close_fd(report)
        raise
    finally:
        launch.close_fd(stdin)
    pid = transport.get_pid()
    LIVE_ROOTS.add(pid)  # a second Ctrl+C KILLs it at once (tree.kill_all_now)
    live = live_runs.record_live(workdir.parent.parent, pid, None, token)
    escaped: list[str] = []
    try:
        if cancelled:
            raise asyncio.CancelledError
        run = await _watch(s, protocol, sock, timeout, closed)
        run.notes += await s.end_notes(run)
    finally:
        if box is not None:  # QEMU alone first: the sandbox's init then names the rest
            await asyncio.shield(_end_emulator(pid, argv[0], token))
        await asyncio.shield(stop_tree(pid, QEMU_GRACE))
        if box is not None:
            escaped = escaped_in_sandbox(report)
            launch.close_fd(report)
            await_sandbox_end(None, token)
        protocol.finish()
        transport.close()
        LIVE_ROOTS.discard(pid)
        live_runs.clear_live(live)
        if s.stub is not None:
            s.stub.close()
    s.log.close()
    run.duration = time.monotonic() - started
    run.command = " ".join(argv)
    if box is None:  # without the namespace: what semihosting started carries the marker
        escaped = [f"{n} killed" for n in kill_marked(token)[0]]
    run.escaped = escaped

    if run.exit_code is None and not run.timed_out and run.ended_by == "emulator":
        run.exit_code = transport.get_returncode()
    _add_notes(s, run)
    return run


async def _end_emulator(root: int, qemu: str, token: str) -> None:
    """Stop QEMU in its sandbox and let the sandbox end by itself: its init then names
    and kills what the firmware started (semihosting SYS_SYSTEM) before it ends, which
    a stop of the whole tree at once would kill unnamed."""
    name = os.path.basename(qemu)[:15]  # a process's comm is cut at 15 characters
    for p in tree_pids(root):
        try:
            if Path(f"/proc/{p}/comm").read_text().strip() == name:
                os.kill(p, signal.SIGTERM)
        except OSError:
            continue
    await sandbox_ended(None, token, QEMU_GRACE + 0.5)


async def _watch(s: _Session, protocol: OutputReader, sock: str, timeout: float,
                 closed: asyncio.Event) -> FirmwareRun:
    if closed.is_set():
        return FirmwareRun(None, "", 0, "closed")
    try:
        await s.arm(sock, protocol.exited)
    except (GdbError, OSError, TimeoutError, asyncio.IncompleteReadError) as e:
        await asyncio.wait([protocol.exited], timeout=1.0)
        return _emulator_failed(s, f"the emulator did not start: {e}")
    assert s.stub is not None
    stop: asyncio.Future[str] = asyncio.ensure_future(s.stub.wait_stop())
    end = asyncio.ensure_future(s.uart.ended.wait())
    shut = asyncio.ensure_future(closed.wait())
    waits: set[asyncio.Future[Any]] = {stop, end, shut, protocol.exited}
    try:
        done, _ = await asyncio.wait(waits, timeout=timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        others: set[asyncio.Future[Any]] = {stop, shut, protocol.exited}
        if end in done and not done & others:
            stop = await s.read_at_end_line(stop)
            others = {stop, shut, protocol.exited}
            # the end line: a short grace, so a fault or an exit right after it still counts
            more, _ = await asyncio.wait(others, timeout=END_GRACE,
                                         return_when=asyncio.FIRST_COMPLETED)
            done |= more
    finally:
        for w in (stop, end, shut):
            if not w.done():
                w.cancel()
    if shut in done:
        return FirmwareRun(None, s.uart.text, s.uart.bytes, "closed")
    if (end in done or s.uart.end) and not (stop in done and _stopped(stop)):
        return _ended(s)
    if stop in done and _stopped(stop):
        await asyncio.sleep(0.05)  # what the UART had already sent
        try:
            if await s.at_exit():
                return await s.on_exit()
            return FirmwareRun(1, s.uart.text, s.uart.bytes, "fault", diagnosis=await s.fault())
        except (GdbError, OSError, TimeoutError, asyncio.IncompleteReadError):
            pass  # QEMU went away meanwhile: told as its exit
    if done:  # QEMU exited (semihosting, a lockup, stopped from outside)
        await asyncio.wait([protocol.exited], timeout=1.0)
        await asyncio.sleep(0.05)  # the last bytes of the pipes
        return _exited(s, protocol)
    return await _timed_out(s, timeout)


def _stopped(stop: asyncio.Future[str]) -> bool:
    """A stop reply that says the CPU halted (a breakpoint), not that QEMU ended (W, X)."""
    return stop.exception() is None and stop.result()[:1] in ("S", "T")


def _ended(s: _Session) -> FirmwareRun:
    code = 1 if s.uart.failed else 0
    run = FirmwareRun(code, s.uart.text, s.uart.bytes, "end-line")
    if s.uart.fault_line is not None:
        run.diagnosis = _package_fault(s)
    elif code:
        run.diagnosis = _reported_failed(s)
    return run


def _reported_failed(s: _Session) -> str:
    return f"the firmware reported FAILED on the UART: {s.uart.failed_line or 'FAILED'}"


def _package_fault(s: _Session) -> str:
    """The board package's own fault report (a real board, or QEMU missing it)."""
    assert s.uart.fault_line is not None
    return diagnose.package_fault(s.uart.fault_line, s.board.tool("addr2line"), s.elf,
                                  s.board.irq_names)


def _exited(s: _Session, protocol: OutputReader) -> FirmwareRun:
    s.log.close()
    op, pc, _lr = diagnose.semihosting_abort(s.log)  # LR: stale in a leaf's inline asm
    if op:  # told as what the firmware did, not as QEMU's register dump
        text = (f"the firmware made a semihosting call the emulator does not support "
                f"(operation {op} in r0, with bkpt 0xab), and QEMU stopped")
        if pc is not None:
            text += f": the call is at PC {s.where(pc)}"
        return FirmwareRun(1, s.uart.text, s.uart.bytes, "fault", diagnosis=text)
    message, pc, lr = diagnose.lockup(s.log)
    if message:
        text = f"the CPU locked up (a fault inside the fault handler, or no usable handler): " \
               f"{message}"
        if pc is not None:
            text += f"; PC {s.where(pc)}"
        if lr is not None:
            text += f", LR {s.where(lr & ~1)}"
        return FirmwareRun(1, s.uart.text, s.uart.bytes, "fault", diagnosis=text)
    run = FirmwareRun(None, s.uart.text, s.uart.bytes, "emulator")
    if s.uart.fault_line is not None:
        run.diagnosis = _package_fault(s)
    return run


async def _timed_out(s: _Session, timeout: float) -> FirmwareRun:
    site = await s.hang_site()
    found = await s.explain(silent=not s.uart.bytes, timeout=True) if site else []
    at = f"; {site}" if site else ""
    if not s.uart.bytes:
        why = f"no output on the UART within {timeout:g} s (stopped at the timeout{at})"
    else:
        why = (f"no end line (PASSED or FAILED) on the UART within {timeout:g} s: stopped at "
               f"the timeout{at}. An endless loop, or waiting on something that never comes?")
    if found:
        why += (" " if why.endswith(("?", ".")) else ". ") + "What the registers say: " + \
            "; ".join(found)
    return FirmwareRun(None, s.uart.text, s.uart.bytes, "timeout", diagnosis=why,
                       timed_out=True)


def _emulator_failed(s: _Session, why: str) -> FirmwareRun:
    s.log.close()
    said = "; ".join(s.log.other[:5])
    return FirmwareRun(None, s.uart.text, s.uart.bytes, "emulator",
                       diagnosis=why + (f" ({said})" if said else ""), broken=True)


def _add_notes(s: _Session, run: FirmwareRun) -> None:
    below = s.log.lowest_below(s.board.ram[0]) if s.board.arch == "cortex-m" else None
    if below is not None and not run.diagnosis and run.ended_by != "closed":
        # QEMU lets some boards (the LM3S) write where nothing is: the chip would fault
        run.diagnosis = diagnose.stack_overflow(s.board, below, s.elf.parent,
                                                what="The stack reached") + (
            " (the emulator went on where the chip would have faulted)")
        run.exit_code = 1
    if run.ended_by == "emulator" and run.exit_code not in (0, None) and not run.diagnosis:
        said = "; ".join(s.log.other[:5])
        run.diagnosis = f"the firmware exited with status {run.exit_code}" + (
            f" ({said})" if said else "")
    if run.ended_by in ("emulator", "exit") and not run.diagnosis and s.uart.failed:
        run.diagnosis = _reported_failed(s)  # a FAILED line, then exit(0): still a failure
    if run.ended_by in ("emulator", "exit", "fault") and not s.uart.bytes and \
            not run.diagnosis.startswith("no output"):
        how = (f"the firmware exited with status {run.exit_code}" if run.exit_code is not None
               else "the emulator ended by itself")
        silent = f"no output on the UART: {how}, and nothing was printed on the UART"
        run.diagnosis = f"{run.diagnosis}; nothing was printed on the UART before it" \
            if run.diagnosis else silent
    for note in (s.log.unmodelled(s.board.package_touches), s.log.bad_accesses()):
        if note:
            run.notes.append(note)
