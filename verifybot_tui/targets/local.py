"""The local target: run a program on this machine, stream it, stop its whole tree.

Each run gets a fresh folder ``<workspace>/runs/<run_id>/`` holding the
program's files. The program starts in its own session with stdin closed, so an
``input()`` ends at once with EOFError instead of hanging, and so every process
it starts can be found again: by the session id and process group it inherits,
and by walking parent links in /proc (which also finds a child that moved to
its own group with ``setpgid``). A timeout, a cancel, or simply the program
ending stops whatever of that tree is still running: TERM, a grace period, then
KILL. A program that detaches itself with ``setsid`` *and* reparents away
(a double fork) escapes all of this; targets.containment adds what catches that
where the machine allows it (a cgroup per run), a parent-death signal, and a
record of each live run so the next start can clean up after a SIGKILL.
"""

from __future__ import annotations

import asyncio
import codecs
import ctypes
import fcntl
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from verifybot_tui.core.answers import languages
from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import (
    OutputCallback,
    ReportsState,
    RunRequest,
    RunResult,
)
from verifybot_tui.core.settings.config import Config, TargetConfig
from verifybot_tui.core.settings.secrets import program_env
from verifybot_tui.core.store.workspace import PRIVATE_DIR, private_dir, write_private
from verifybot_tui.targets import live_runs
from verifybot_tui.targets.capture import OutputCapture
from verifybot_tui.targets.containment import cgroups
from verifybot_tui.targets.containment.leftovers import (
    await_sandbox_end,
    leftover_check,
    sandbox_ended,
)
from verifybot_tui.targets.containment.markers import MARKER, new_token
from verifybot_tui.targets.containment.proctable import ticks_now
from verifybot_tui.targets.containment.subreaper import become_subreaper, reap_while_running
from verifybot_tui.targets.containment.tree import LIVE_ROOTS, LIVE_TOKENS, stop_tree
from verifybot_tui.targets.installs import npm, venv
from verifybot_tui.targets.probe_local import probe_local
from verifybot_tui.targets.sandbox import bubblewrap, limits, view
from verifybot_tui.targets.sandbox.init_script import BUILT, GO, build_then_run, escaped_in_sandbox

COMPILE_TIMEOUT = 120.0
INSTALL_TIMEOUT = 900.0
CHECK_TIMEOUT = 60.0
SNAPSHOT_LIMIT = 5000  # files looked at for files_changed; a run that makes more is cut
EXIT_NOT_FOUND = 127  # what a shell reports for a missing command


def _noop(stream: str, text: str) -> None:
    pass


PR_SET_PDEATHSIG = 1
_libc: ctypes.CDLL | None = None


def _prctl_pdeathsig(parent: int) -> None:
    """In the child before exec: die by SIGKILL when the parent (VerifyBot) dies."""
    if _libc is not None:
        _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(137)


def preexec(cgroup: Path | None, guard: limits.Guard | None = None) -> object:
    """The function the child runs before exec (None where nothing applies): the
    parent-death signal, the run's cgroups, and (``guard``) its limits' rlimits."""
    if not sys.platform.startswith("linux"):
        return None
    global _libc
    if _libc is None:  # loaded in the parent: nothing is loaded after the fork
        _libc = ctypes.CDLL(None, use_errno=True)
    procs = [str(cgroup / "cgroup.procs")] if cgroup else []
    rlimits = guard.limits.rlimits() if guard is not None else []
    parent = os.getpid()

    def run() -> None:
        _prctl_pdeathsig(parent)
        for path in procs:
            try:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            except OSError:
                pass  # the run goes on uncontained; the leftover check says so
        limits.set_rlimits(rlimits)
    return run


# -- one process, streamed ----------------------------------------------------------


class _Reader(asyncio.SubprocessProtocol):
    """Both pipes of one process, read in one place in the order their data arrives.

    Two readers (one task per pipe) would each see its own pipe in order but
    could hand the callback a later stderr chunk before an earlier stdout one;
    here every chunk of either pipe passes through ``pipe_data_received`` on the
    event loop, one after the other, as the loop sees the pipes become readable.
    Each chunk is decoded, kept in the bounded capture and passed on at once,
    so no queue can grow: while the callback works, the pipes simply wait.
    ``exited`` is set when the process itself exits (a background child can keep
    the pipes open long after); ``closed`` once both pipes reached their end.
    """

    STREAMS = {1: "stdout", 2: "stderr"}

    def __init__(self, loop: asyncio.AbstractEventLoop, on_output: OutputCallback) -> None:
        self.on_output = on_output
        self.exited: asyncio.Future[None] = loop.create_future()
        self.closed: asyncio.Future[None] = loop.create_future()
        self.captures = {name: OutputCapture() for name in self.STREAMS.values()}
        self.counts = {name: 0 for name in self.STREAMS.values()}
        self.errors: list[Exception] = []
        self._decoders = {name: codecs.getincrementaldecoder("utf-8")(errors="replace")
                          for name in self.STREAMS.values()}
        self._open = set(self.STREAMS.values())
        self._done = False

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        stream = self.STREAMS.get(fd)
        if stream is None or self._done:
            return
        raw = data.encode() if isinstance(data, str) else data
        self.counts[stream] += len(raw)
        self._deliver(stream, self._decoders[stream].decode(raw))

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        stream = self.STREAMS.get(fd)
        if stream is None or stream not in self._open:
            return
        self._open.discard(stream)
        if not self._done:
            self._deliver(stream, self._decoders[stream].decode(b"", final=True))
        if not self._open and not self.closed.done():
            self.closed.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)

    def split(self) -> tuple[dict[str, OutputCapture], dict[str, int]]:
        """The output so far (a build's, in the sandbox the program shares with it) is
        done: a character begun is given up as at a pipe's end, and what follows
        (the program's) is kept apart. Returns the captures and byte counts so far."""
        for stream in list(self._open):
            self._deliver(stream, self._decoders[stream].decode(b"", final=True))
        captures, counts = self.captures, self.counts
        self.captures = {name: OutputCapture() for name in self.STREAMS.values()}
        self.counts = {name: 0 for name in self.STREAMS.values()}
        return captures, counts

    def finish(self) -> None:
        """No more output is passed on (the run is over); a pipe an escaped child still
        holds gives up the bytes of a character it had begun."""
        for stream in list(self._open):
            self._deliver(stream, self._decoders[stream].decode(b"", final=True))
        self._done = True

    def _deliver(self, stream: str, text: str) -> None:
        """Keep and pass on; a failing callback is kept, never allowed to stop the reading.

        Were the reading to stop, the program would block on a full pipe until its
        timeout; the callback's error is raised once the run is over instead.
        """
        if not text:
            return
        self.captures[stream].add(text)
        try:
            self.on_output(stream, text)
        except Exception as e:  # noqa: BLE001 - re-raised by _exec
            self.errors.append(e)
            self.on_output = _noop


async def _start(loop: asyncio.AbstractEventLoop, reader: Callable[[], _Reader],
                 argv: list[str], cwd: Path, env: dict[str, str], cgroup: Path | None,
                 stdin: int = subprocess.DEVNULL, guard: limits.Guard | None = None
                 ) -> tuple[asyncio.SubprocessTransport, _Reader, bool]:
    """Start the program in its own session; True if a stop came meanwhile.

    A stop (Ctrl+C, a hang-up, a quit) that lands after the fork but before the
    pipes are connected would make asyncio KILL only the first process and then
    wait for pipes its children still hold. So the start is finished whatever
    comes, and the caller, told of the stop, stops the whole tree and passes it on.

    Until the caller records the new root (right after this returns), the child is
    known by its marker: another run ending meanwhile (``recipe run --parallel``,
    ``compare``) would otherwise take it for an orphan adopted from its own tree.
    """
    token = env.get(MARKER) or new_token()
    env = {**env, MARKER: token}
    fresh = token not in LIVE_TOKENS
    LIVE_TOKENS.add(token)
    spawn = asyncio.ensure_future(loop.subprocess_exec(
        reader, *argv, cwd=cwd, env=env, stdin=stdin,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=preexec(cgroup, guard)))
    cancelled = False
    try:
        while not spawn.done():
            try:
                await asyncio.wait([spawn])
            except asyncio.CancelledError:
                cancelled = True
    finally:
        if fresh:
            LIVE_TOKENS.discard(token)
    if spawn.cancelled() or (cancelled and spawn.exception() is not None):
        raise asyncio.CancelledError
    transport, protocol = spawn.result()  # an OSError (cannot exec) goes to the caller
    return transport, protocol, cancelled


@dataclass
class _Outcome:
    exit_code: int | None
    stdout: str
    stderr: str
    duration: float
    timed_out: bool
    stdout_bytes: int
    stderr_bytes: int
    interrupted: bool = False  # stopped from outside (close()) rather than by the timeout
    escaped: list[str] = field(default_factory=list)  # found in the cgroup after the stop
    limit: str = ""  # the limit the run hit, in words ("" none)


@dataclass
class _Build:
    """A compile step run first in the program's own sandbox (one sandbox, not two:
    each costs a run about 20 ms). ``on_built`` is called once the build passed,
    before the program starts; ``outcome`` is then the build's own. It stays None
    where the build failed, timed out or was stopped: the run's outcome is the build's."""

    argv: list[str]
    timeout: float
    on_built: Callable[[], None]
    outcome: _Outcome | None = None


def _result(run: _Outcome, command: str, workdir: Path, *, compile_failed: bool = False,
            files_changed: list[str] | None = None) -> RunResult:
    """The RunResult of a finished (build or program) process."""
    return RunResult(
        exit_code=run.exit_code, stdout=run.stdout, stderr=run.stderr,
        duration=run.duration, timed_out=run.timed_out, compile_failed=compile_failed,
        files_changed=files_changed or [], command=command, workdir=str(workdir),
        stdout_bytes=run.stdout_bytes, stderr_bytes=run.stderr_bytes, escaped=run.escaped,
        target_error="stopped: the target was closed" if run.interrupted else None,
        diagnosis=run.limit)


def _wrapped(argv: list[str], sandbox: list[str] | None, build: _Build | None
             ) -> tuple[list[str], int, int]:
    """The argv to start, the end we read the sandbox's reports on and the child's stdin.

    The sandbox's init reports on a pipe; with a build in the same sandbox, on a socket
    that carries the build's status to us and "go" back. Unsandboxed, orphans are
    adopted by us (a subreaper), not by init."""
    if sandbox and build is not None:
        ours, theirs = socket.socketpair()
        return ([*sandbox, *build_then_run(build.argv, argv)],
                ours.detach(), theirs.detach())
    if sandbox:
        report, stdin = os.pipe()
        return [*sandbox, *argv], report, stdin
    become_subreaper()
    return argv, subprocess.DEVNULL, subprocess.DEVNULL


class LocalTarget(ReportsState):
    """Runs programs here, in ``<workspace>/runs/<run_id>/``."""

    kind = "local"

    def __init__(self, config: TargetConfig, workspace: Path,
                 settings: Config | None = None) -> None:
        self.config = config
        self.settings = settings  # the whole config: which variables are secrets
        self.name = config.name or "local"
        self.workspace = Path(workspace).absolute()  # runs start in their own folder
        self.state = "connected"
        self._running: set[int] = set()  # session leaders of live runs
        self._closing: set[int] = set()

    async def connect(self) -> None:
        # What a SIGKILLed VerifyBot's local runs left behind dies before anything new runs.
        live_runs.sweep_live(self.workspace)
        self.state = "connected"

    async def close(self) -> None:
        roots = list(self._running)
        self._closing.update(roots)
        await asyncio.gather(*(stop_tree(root) for root in roots))

    async def probe(self) -> str:
        return await probe_local(self.name, self.workspace, self.python_for())

    def python_for(self, override: str | None = None) -> str:
        return venv.python_for_runs(self.workspace, override)

    def _env(self, python: str) -> dict[str, str]:
        env = view.scrub_env(program_env(os.environ, self.settings))
        env.pop(self.config.password_env, None)
        for key in ("VIRTUAL_ENV", "PYTHONHOME", "__PYVENV_LAUNCHER__"):
            env.pop(key, None)
        env["PATH"] = venv.clean_path(env.get("PATH", os.defpath))
        ws_venv = venv.venv_dir(self.workspace)
        if Path(python).is_relative_to(ws_venv):
            # A shell script's `python3` then finds what `install` put there.
            env["PATH"] = f"{ws_venv / 'bin'}{os.pathsep}{env['PATH']}"
            env["VIRTUAL_ENV"] = str(ws_venv)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ among the run's files
        return env

    def program_env(self) -> dict[str, str]:
        """The environment of what an answer brings (here: QEMU for the mcu target):
        no secret variable, no agent socket."""
        return self._env(self.python_for())

    async def _exec(self, argv: list[str], cwd: Path, on_output: OutputCallback,
                    timeout: float | None, env: dict[str, str],
                    sandbox: list[str] | None = None, build: _Build | None = None
                    ) -> _Outcome:
        """Run one process (in ``sandbox``, a bubblewrap prefix, when given, within the
        target's limits) and stop whatever it started once it ends or times out; with
        ``build`` (sandbox only), the build first, in the same sandbox, then the process
        on its own timeout."""
        loop = asyncio.get_running_loop()
        started, since = time.monotonic(), ticks_now()
        argv, report, stdin = _wrapped(argv, sandbox, build)
        cgroup = cgroups.new_cgroup()
        guard = limits.Guard(limits.Limits.of(self.config), cgroup) if sandbox else None
        cgroup = guard.cgroup if guard is not None else cgroup  # root: one with pids.max
        env = {**env, MARKER: new_token()}  # see _leftover_check
        try:
            transport, protocol, cancelled = await _start(
                loop, lambda: _Reader(loop, on_output), argv, cwd, env, cgroup, stdin, guard)
        except BaseException:
            _close(report)
            if cgroup:
                cgroups.remove_cgroup(cgroup)
            raise
        finally:
            _close(stdin)
        root, token = transport.get_pid(), env[MARKER]
        self._running.add(root)
        LIVE_ROOTS.add(root)
        LIVE_TOKENS.add(token)
        live = live_runs.record_live(self.workspace, root, cgroup, token)
        reaper = None if sandbox else asyncio.ensure_future(reap_while_running())
        if guard is not None:
            guard.watch(cwd, lambda: asyncio.ensure_future(stop_tree(root)))
        try:
            settle = (lambda: sandbox_ended(cgroup, token)) if sandbox else None
            if sandbox and build is not None and not cancelled:
                cancelled, started, timeout = await _build_first(
                    transport, protocol, report, build, started, timeout)
            timed_out = await _wait_and_stop(root, protocol, cancelled, timeout, settle)
        finally:
            if reaper is not None:
                reaper.cancel()
            if guard is not None:
                guard.stop_watch()
            LIVE_TOKENS.discard(token)
            escaped = [] if report < 0 else escaped_in_sandbox(report)
            _close(report)
            ended = bool(sandbox) and await_sandbox_end(cgroup, token)
            escaped += leftover_check(cgroup, token, since, ended)
            protocol.finish()
            transport.close()
            self._running.discard(root)
            LIVE_ROOTS.discard(root)
            live_runs.clear_live(live)
        return self._outcome(root, transport, protocol, started, timed_out, escaped, guard)

    def _outcome(self, root: int, transport: asyncio.SubprocessTransport, protocol: _Reader,
                 started: float, timed_out: bool, escaped: list[str],
                 guard: limits.Guard | None) -> _Outcome:
        """What one ended process came to, with the limit it hit (if any)."""
        interrupted = root in self._closing
        self._closing.discard(root)
        if protocol.errors:
            raise protocol.errors[0]
        code = transport.get_returncode()
        stderr = protocol.captures["stderr"].text
        hit = guard.finish(code, stderr, code != 0) if guard is not None else ""
        return _Outcome(
            exit_code=None if timed_out or interrupted else code,
            stdout=protocol.captures["stdout"].text, stderr=stderr,
            duration=time.monotonic() - started, timed_out=timed_out,
            stdout_bytes=protocol.counts["stdout"], stderr_bytes=protocol.counts["stderr"],
            interrupted=interrupted, escaped=escaped, limit=hit)

    async def command(self, argv: list[str], cwd: Path, on_output: OutputCallback,
                      timeout: float, *, read_only: Sequence[str | Path] = (),
                      writable: Sequence[Path] = (), sandboxed: bool = True) -> RunResult:
        """One command here for another target (a firmware's build step, the answer's own
        ``make``): streamed, its whole tree stopped on a timeout or a cancel, as a program
        is, and in the sandbox with ``cwd`` as its only writable folder and ``read_only``
        and the board cache shown. ``sandboxed=False`` is for VerifyBot's own tools that
        need the host's devices (a flash tool and the serial port). ``writable``: folders
        besides ``cwd`` it may write to (a compiler wrapper's log, kept out of the run)."""
        shown = [*read_only, self.workspace / view.BOARD_CACHE,
                 *view.tool_roots([shutil.which(argv[0]) or argv[0]])]
        box = self._sandbox(cwd, shown, writable) if sandboxed else None
        done = await self._exec(argv, cwd, on_output, timeout, self._env(self.python_for()),
                                box)
        return _result(done, shlex.join(argv), cwd)

    # -- Target protocol ------------------------------------------------------------

    async def run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        workdir = self._fresh_workdir(request.run_id)
        written = self._write_files(workdir, request)
        lang = languages.language_named(request.language)
        entry = self._safe_name(request.entry)
        if lang is None:
            return self._not_started(f"cannot run {request.language!r} programs: the local "
                                     f"target knows {', '.join(_lang_names())}", workdir, on_output)
        python = self.python_for(request.python)
        env = self._env(python)
        exe = "prog" if "prog" not in written else "prog.out"
        tool = python if lang.name == "python" else (
            request.compiler if lang.compile and request.compiler else lang.tool)
        found = tool if os.sep in tool else shutil.which(tool, path=env["PATH"])
        if not found or not os.access(found, os.X_OK):
            return self._not_started(f"{tool} is not installed on this machine", workdir,
                                     on_output)
        sandbox = self._sandbox(workdir, view.tool_roots(
            [found, python, shutil.which(lang.tool, path=env["PATH"]) or ""]))
        sources = [name for name in written if languages.language_for_filename(name) is lang]
        if entry not in sources:
            sources.insert(0, entry)
        argv = languages.build_argv(lang.run, entry=entry, sources=sources, exe=exe,
                                    python=python)
        command, built, stage = "", None, None
        before: dict[str, tuple[int, int]] = {}
        if lang.compile:
            cargv = languages.compile_argv(lang, entry=entry, sources=sources, exe=exe,
                                           compiler=request.compiler, flags=request.flags,
                                           includes=languages.include_dirs(list(written)))
            command = shlex.join(cargv)
            written[exe] = None
        if lang.compile and sandbox is not None:
            # Built and run in one sandbox: the run folder is looked at in between.
            stage = _Build(cargv, COMPILE_TIMEOUT, lambda: before.update(_snapshot(workdir)))
        elif lang.compile:
            try:
                built = await self._exec(cargv, workdir, on_output, COMPILE_TIMEOUT, env)
            except OSError as e:
                return self._not_started(f"cannot start {lang.tool}: {e}", workdir, on_output)
            if built.timed_out or built.exit_code != 0:
                return _result(built, command, workdir, compile_failed=True)
        if stage is None:
            before = _snapshot(workdir)
        try:
            done = await self._exec(argv, workdir, on_output, request.timeout, env, sandbox,
                                    stage)
        except OSError as e:
            tool = lang.tool if stage is not None else argv[0]
            return self._not_started(f"cannot start {tool}: {e}", workdir, on_output)
        if stage is not None:
            if stage.outcome is None:
                return _result(done, command, workdir, compile_failed=True)
            built = stage.outcome
        return _ran(done, f"{command} && {shlex.join(argv)}" if command else shlex.join(argv),
                    workdir, before, set(written), built)

    async def missing_modules(self, modules: list[str], python: str | None = None) -> list[str]:
        if not modules:
            return []
        interpreter = self.python_for(python)
        argv = venv.isolated_argv(interpreter, venv.FIND_SPECS, *modules)
        try:
            out = await self._exec(argv, Path("/"), _noop, CHECK_TIMEOUT,
                                   self._env(interpreter))
        except OSError as e:
            raise TargetError(f"Cannot run {interpreter} to check modules: {e}") from None
        if out.exit_code != 0:
            raise TargetError(f"{interpreter} failed while checking modules "
                              f"(exit {out.exit_code}): {venv.output_tail(out.stderr, 5)}")
        return [line for line in out.stdout.split() if line]

    async def install(self, packages: list[str], on_output: OutputCallback) -> str:
        self.workspace.mkdir(parents=True, exist_ok=True)
        python = venv.venv_python(self.workspace)
        env = self._env(str(python))
        if not python.exists():
            base = venv.base_python()
            argv = venv.create_venv_argv(base, str(venv.venv_dir(self.workspace)))
            on_output("stdout", f"$ {shlex.join(argv)}\n")
            try:
                made = await self._exec(argv, self.workspace, on_output, INSTALL_TIMEOUT, env)
            except OSError as e:
                raise TargetError(f"Cannot create the venv with {base}: {e}") from None
            if made.exit_code != 0 or not python.exists():
                raise TargetError(
                    f"Cannot create the workspace venv with {base} (exit {made.exit_code}); "
                    f"on Debian/Raspberry Pi OS install python3-venv. "
                    f"{venv.output_tail(made.stdout + made.stderr, 10)}")
        if not packages:
            return str(python)
        venv.check_index_names(packages)
        argv = venv.pip_install_argv(str(python), packages)
        on_output("stdout", f"$ {shlex.join(argv)}\n")
        # From an empty folder: nothing where pip runs can pass for a package it was named.
        with tempfile.TemporaryDirectory(prefix="verifybot-pip-") as empty:
            done = await self._exec(argv, Path(empty), on_output, INSTALL_TIMEOUT, env)
        if done.exit_code != 0:
            why = "timed out" if done.timed_out else f"failed (exit {done.exit_code})"
            raise venv.InstallError(
                f"pip install {' '.join(packages)} {why}; pip said:\n"
                f"{venv.output_tail(done.stdout + chr(10) + done.stderr)}")
        return str(python)

    async def missing_node_packages(self, names: list[str]) -> list[str]:
        return npm.missing(self.workspace, names)

    async def install_node_packages(self, specs: list[str], on_output: OutputCallback) -> None:
        await npm.install(self.workspace, specs, on_output, self._exec,
                          self._env(self.python_for()), INSTALL_TIMEOUT)

    def _sandbox(self, workdir: Path, read_only: Sequence[str | Path] = (),
                 writable: Sequence[Path] = ()) -> list[str] | None:
        """The bubblewrap prefix for a run in ``workdir`` (None: sandbox off, or none
        here), showing ``read_only`` and the workspace venv; ``sandbox = "require"``
        without a sandbox refuses (TargetError) rather than run unsandboxed."""
        if self.config.sandbox == "off":
            return None
        shown = [*read_only, venv.venv_dir(self.workspace), npm.modules_dir(self.workspace)]
        box = bubblewrap.sandbox_argv(workdir, self.config.network, shown, writable,
                                       limited=limits.Limits.of(self.config))
        if box is None and self.config.sandbox == "require":
            raise TargetError(bubblewrap.no_sandbox_message(self.name))
        return box

    # -- files --------------------------------------------------------------------

    def _fresh_workdir(self, run_id: str) -> Path:
        safe = self._safe_name(run_id).replace("/", "_") or "run"
        workdir = self.workspace / "runs" / safe
        if workdir.exists():
            shutil.rmtree(workdir)
        private_dir(workdir.parent)
        workdir.mkdir(mode=PRIVATE_DIR)
        os.chmod(workdir, PRIVATE_DIR)  # whatever the umask: only we read the run folder
        return workdir

    @staticmethod
    def _safe_name(name: str) -> str:
        """A relative path inside the run folder (the extractor confines names too)."""
        parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts
                 if p not in ("", ".", "..", "/")]
        return "/".join(parts) or "main"

    def _write_files(self, workdir: Path, request: RunRequest) -> dict[str, None]:
        """Names written, in the answer's order (the compiler sees sources in that order)."""
        written: dict[str, None] = {}
        for pf in request.files:
            name = self._safe_name(pf.name)
            path = workdir / name
            private_dir(path.parent)
            write_private(path, pf.content)
            written[name] = None
        return written

    def _not_started(self, message: str, workdir: Path, on_output: OutputCallback) -> RunResult:
        text = message + "\n"
        on_output("stderr", text)
        return RunResult(exit_code=EXIT_NOT_FOUND, stdout="", stderr=text, duration=0.0,
                         workdir=str(workdir), stderr_bytes=len(text.encode()))


async def _wait_and_stop(root: int, protocol: _Reader, cancelled: bool,
                         timeout: float | None,
                         settle: Callable[[], Awaitable[bool]] | None = None) -> bool:
    """Wait for the program to end (or time out: True), then stop its whole tree;
    ``settle``, once it ended by itself, first lets a sandbox wind down on its own
    (True: all of it is gone, so there is nothing to stop)."""
    timed_out = stopped = False
    try:
        try:
            if cancelled:
                raise asyncio.CancelledError
            await asyncio.wait_for(asyncio.shield(protocol.exited), timeout)
        except TimeoutError:
            timed_out = True
        settled = False
        if settle is not None and not timed_out:
            settled = await asyncio.shield(settle())
        # Ended or timed out: nothing it started may outlive it (a sandbox seen gone
        # as a whole has nothing left to stop: that costs a scan of /proc).
        if not settled:
            await asyncio.shield(stop_tree(root))
        stopped = True
        # Pipes close once every holder is dead; one that escaped keeps them open.
        await asyncio.wait([protocol.closed], timeout=1.0)
    finally:
        if not stopped:
            await asyncio.shield(stop_tree(root))
    return timed_out


def _ran(done: _Outcome, command: str, workdir: Path, before: dict[str, tuple[int, int]],
         written: set[str], built: _Outcome | None) -> RunResult:
    """A program's result: the files it changed in its run folder (not those we wrote)
    and the warnings of a build that passed."""
    after = _snapshot(workdir)
    changed = sorted(name for name, stat in after.items()
                     if before.get(name) != stat and name not in written)
    result = _result(done, command, workdir, files_changed=changed)
    if built is not None:
        result.build_stderr = built.stderr
        result.build_seconds = round(built.duration, 3)
    return result


async def _build_first(transport: asyncio.SubprocessTransport, protocol: _Reader, report: int,
                       build: _Build, started: float, timeout: float | None
                       ) -> tuple[bool, float, float | None]:
    """The build's part of a build-then-run sandbox: (cancelled, the program's start,
    its timeout). A build that passed starts the program's own time; one that failed
    is the run's outcome, on the build's own time. A cancel here is passed on to the
    stop that follows, which stops the build's tree and then raises."""
    try:
        passed = await _await_build(transport, protocol, report, build, started)
    except asyncio.CancelledError:
        return True, started, timeout
    if passed:
        return False, time.monotonic(), timeout
    return False, started, max(0.0, build.timeout - (time.monotonic() - started))


async def _await_build(transport: asyncio.SubprocessTransport, protocol: _Reader,
                       report: int, build: _Build, started: float) -> bool:
    """Wait (up to the build's timeout) for the sandbox's "built STATUS" line; once
    the build passed, take in all it wrote, keep its outcome, call ``on_built`` and
    say "go". False: it failed, timed out or the sandbox ended without a word."""
    line = asyncio.ensure_future(_status_line(report))
    try:
        await asyncio.wait([line, protocol.exited], timeout=build.timeout,
                           return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not line.done():
            line.cancel()
    text = line.result() if line.done() and not line.cancelled() else ""
    if text.strip() != f"{BUILT}0":
        return False
    await _drained(transport)
    captures, counts = protocol.split()
    build.outcome = _Outcome(
        exit_code=0, stdout=captures["stdout"].text, stderr=captures["stderr"].text,
        duration=time.monotonic() - started, timed_out=False,
        stdout_bytes=counts["stdout"], stderr_bytes=counts["stderr"])
    build.on_built()
    try:
        os.write(report, GO)
    except OSError:
        return False  # the sandbox is gone: its end says the rest
    return True


async def _status_line(fd: int) -> str:
    """One line from the sandbox init's socket, read byte by byte (nothing past it is
    taken: what follows is the init's report of what it killed)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[str] = loop.create_future()
    data = bytearray()
    os.set_blocking(fd, False)

    def readable() -> None:
        while not done.done():
            try:
                byte = os.read(fd, 1)
            except BlockingIOError:
                return
            except OSError:
                byte = b""
            if not byte or byte == b"\n" or len(data) > 64:
                done.set_result(data.decode("ascii", "replace"))
            else:
                data.extend(byte)

    loop.add_reader(fd, readable)
    try:
        return await done
    finally:
        loop.remove_reader(fd)


async def _drained(transport: asyncio.SubprocessTransport, rounds: int = 1000) -> None:
    """Until the output pipes hold nothing unread: the build has ended, so what is in
    them is its own, and the program (not started yet) adds nothing meanwhile."""
    fds = []
    for n in (1, 2):
        pipe = transport.get_pipe_transport(n)
        if pipe is not None and pipe.get_extra_info("pipe") is not None:
            fds.append(pipe.get_extra_info("pipe").fileno())
    buf = bytearray(4)
    for _ in range(rounds):
        waiting = 0
        for fd in fds:
            try:
                fcntl.ioctl(fd, termios.FIONREAD, buf)
            except OSError:
                continue
            waiting += int.from_bytes(buf, sys.byteorder)
        if not waiting:
            return
        await asyncio.sleep(0)


def _close(fd: int) -> None:
    """Close one end of the sandbox's report pipe (DEVNULL, a negative number: none)."""
    if fd >= 0:
        os.close(fd)


def _lang_names() -> list[str]:
    return [lang.name for lang in languages.LANGUAGES]


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """relative path -> (mtime_ns, size) of the files in a run folder, bounded."""
    found: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for filename in filenames:
            path = os.path.join(dirpath, filename)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            found[os.path.relpath(path, folder)] = (st.st_mtime_ns, st.st_size)
            if len(found) >= SNAPSHOT_LIMIT:
                return found
    return found
