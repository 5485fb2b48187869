"""The SSH target: runs programs on a Raspberry Pi over one kept-open asyncssh connection.

One connection serves every action (a command on it costs milliseconds, a new
connection a tenth of a second or far more over Wi-Fi with a password), with
keepalives so a dropped link is noticed instead of hanging a read forever.
Each program runs as the leader of its own process group and records the
group's id in its run folder, so a timeout, a cancel or close can stop the
whole tree: an SSH signal first, then ``kill -<pgid>`` over a fresh channel.
Beyond the group: each run carries a marker variable ``VERIFYBOT_RUN=<token>``
(kept in ``.vb_run``), and after the group is stopped every process of our user
on the Pi whose environment holds it had escaped (a setsid double fork): it is
named in the verdict and killed. Where the Pi runs user sessions (probed once
per connection: ``systemd-run --user --scope true`` works), each run also lives
in its own transient scope, which holds even a process that wiped its
environment; its leftovers are killed with the scope.
"""

from __future__ import annotations

import asyncio
import codecs
import posixpath
import re
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import asyncssh

from verifybot_tui.core.answers.languages import (
    build_argv,
    compile_argv,
    include_dirs,
    language_for_filename,
    language_named,
)
from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import (
    OutputCallback,
    Prompter,
    ReportsState,
    RunRequest,
    RunResult,
)
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets import probe_ssh
from verifybot_tui.targets import ssh_scripts as scripts
from verifybot_tui.targets.capture import OutputCapture
from verifybot_tui.targets.containment import markers as containment
from verifybot_tui.targets.installs.venv import (
    FIND_SPECS,
    VENV_DIR,
    InstallError,
    create_venv_argv,
    output_tail,
    pip_install_argv,
)
from verifybot_tui.targets.probe_local import save_context
from verifybot_tui.targets.ssh_connect import Settings, open_connection, resolve_settings

_PI_WORDS = re.compile(
    r"\b(raspberry\s*pi|raspi|rpi|pi\s*(?:zero|[345])(?![.,]?\d)|gpio\d*|i2c|spi|uart|"
    r"sensor\s+pins?|gpiozero|smbus2?|spidev|pigpio|lgpio|picamera2?|sense\s*hat|"
    r"neopixels?|ds18b20|dht(?:11|22)|bcm\s*\d+|(?:on|to)\s+(?:my|the)\s+pi)\b"
    r"|\bRPi\.GPIO\b",
    re.IGNORECASE)


def names_pi(prompt: str) -> bool:
    """Whether a prompt is about Pi hardware, so the loop should pick the SSH target."""
    return bool(_PI_WORDS.search(prompt))


EXIT_NOT_FOUND = 127  # what a shell reports for a missing command
_leftover_sh = scripts.leftover_sh  # the names the tests and older callers know
_group_kill_sh = scripts.group_kill_sh
scope_unit = scripts.scope_unit
scope_prefix = scripts.scope_prefix


def _safe_rel(name: str) -> str:
    """A file name confined to its folder (the loop already confines them; belt and braces)."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("/", "..", ".")]
    return "/".join(parts) or "unnamed"


@dataclass
class _Outcome:
    """One remote process's end: what the run and install paths both need."""

    exit_code: int | None = None
    stdout: OutputCapture = field(default_factory=OutputCapture)
    stderr: OutputCapture = field(default_factory=OutputCapture)
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    timed_out: bool = False
    cancelled: bool = False
    target_error: str | None = None
    duration: float = 0.0
    files_changed: list[str] = field(default_factory=list)
    escaped: list[str] = field(default_factory=list)  # "PID (name) killed": left the group


def _ignore(stream: str, text: str) -> None:
    pass


class _Session(asyncssh.SSHClientSession[bytes]):
    """Both outputs of one remote program, read in one place in the order they arrive.

    SSH carries stdout and stderr over one channel (stderr as "extended data"),
    so one session's ``data_received`` sees every chunk of either in the order
    the server sent them; each is decoded, kept in the bounded capture and passed
    on at once. While the callback works the channel's window is not reopened,
    so a flood waits on the Pi rather than in memory here.

    The after-run check's report follows the program's output on stdout between
    two lines carrying the report token (see ssh_scripts), which the program
    never sees (its own marker is another); it is split off here
    and never shown as output. Only bytes that could be the start of that line
    are held back, and only until the next chunk says whether they are. A report
    counts only once the program's exit status (or signal) has come: the watcher
    reports after the program's end, so report lines before it are the program's
    output. A second report is a warning (``second_report``), not a report.
    """

    def __init__(self, out: _Outcome, on_output: OutputCallback, problems: list[str],
                 token: str) -> None:
        self.out = out
        self.on_output = on_output
        self.problems = problems
        self._decoders = {name: codecs.getincrementaldecoder("utf-8")(errors="replace")
                          for name in ("stdout", "stderr")}
        self._flushed = False
        self.errors: list[Exception] = []  # the callback's, raised once the run is over
        self._start, self._end = scripts.report_start(token), scripts.report_end(token)
        self._held = b""  # stdout bytes that may begin the report's first line
        self.report: bytearray | None = None
        self.reported = asyncio.Event()  # the whole report came
        self.ended = asyncio.Event()  # the program's exit status came, or the channel closed
        self.exited = False  # the program's exit status (or signal) came
        self.second_report = False  # report lines came again after the report

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        if datatype == asyncssh.EXTENDED_DATA_STDERR:
            self.out.stderr_bytes += len(data)
            self._deliver("stderr", self._decoders["stderr"].decode(data))
        elif self.report is not None:
            self._add_report(data)
        else:
            self._program_stdout(self._held + data)

    def _program_stdout(self, data: bytes) -> None:
        at = data.find(self._start) if self.exited else -1
        if at >= 0:
            self._held = b""
            self._stdout(data[:at])
            self.report = bytearray()
            self._add_report(data[at + len(self._start):])
            return
        cut = data.rfind(b"\x1e", max(0, len(data) - len(self._start) + 1))
        if cut >= 0 and self._start.startswith(data[cut:]):
            data, self._held = data[:cut], data[cut:]
        else:
            self._held = b""
        self._stdout(data)

    def _stdout(self, data: bytes) -> None:
        self.out.stdout_bytes += len(data)
        self._deliver("stdout", self._decoders["stdout"].decode(data))

    def _add_report(self, data: bytes) -> None:
        assert self.report is not None
        if self.reported.is_set():
            # Written after the check by what it could not kill: not the program's. A
            # second report means someone else holds the token: said, never taken.
            self.second_report = self.second_report or self._start in data
            return
        self.report += data
        if self._end in self.report:
            del self.report[self.report.index(self._end):]
            self.reported.set()
            self.ended.set()

    def warn(self, text: str) -> None:
        """A warning about the run, in its output (not the program's words)."""
        self._deliver("stderr", f"[verifybot] warning: {text}\n")

    def report_text(self) -> str:
        return bytes(self.report or b"").decode("utf-8", "replace")

    def exit_status_received(self, status: int) -> None:
        self.exited = True
        self.ended.set()

    def exit_signal_received(self, signal: str, core_dumped: bool, msg: str, lang: str) -> None:
        self.exited = True
        self.ended.set()

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self.problems.append(str(exc) or type(exc).__name__)
        self.ended.set()
        self.flush()

    def flush(self) -> None:
        """Pass on the end of a character split across the last chunk, once."""
        if self._flushed:
            return
        self._flushed = True
        if self._held:
            self._stdout(self._held)
            self._held = b""
        for stream, decoder in self._decoders.items():
            self._deliver(stream, decoder.decode(b"", final=True))

    def _deliver(self, stream: str, text: str) -> None:
        """Keep and pass on; a failing callback must not break the SSH connection's reader."""
        if not text:
            return
        (self.out.stdout if stream == "stdout" else self.out.stderr).add(text)
        try:
            self.on_output(stream, text)
        except Exception as e:  # noqa: BLE001 - re-raised by SSHTarget._exec
            self.errors.append(e)
            self.on_output = _ignore


class SSHTarget(ReportsState):
    """A machine reached over SSH (a Raspberry Pi, usually); see the module docstring."""

    kind = "ssh"
    keepalive_interval = 5.0
    keepalive_count_max = 3
    stop_grace = 2.0
    compile_timeout = 120.0
    install_timeout = 900.0

    def __init__(self, config: TargetConfig, workspace: Path, prompter: Prompter | None = None,
                 trust_new_host: bool = False) -> None:
        self.name = config.name or "pi"
        self.config = config
        self.workspace = Path(workspace)
        self.prompter = prompter
        self.trust_new_host = trust_new_host
        self.state = "disconnected"
        self.last_error: str | None = None
        self.remote_dir = ""  # absolute, known once connected
        self.settings: Settings | None = None
        self._conn: asyncssh.SSHClientConnection | None = None
        self._connecting: asyncio.Task | None = None
        self._generation = 0
        self._typed_password: str | None = None  # only in memory, for reconnects
        self._has_venv = False
        self._scopes = False  # the Pi runs user sessions: each run gets a systemd scope
        self._orphans: list[str] = []  # run folders whose program may outlive a lost link
        self._stops: set[asyncio.Event] = set()
        self._closing = False  # close() is stopping the runs: they end as target errors

    # -- connection -------------------------------------------------------------------

    async def connect(self) -> None:
        await self._connection()

    def connect_soon(self) -> None:
        """Start connecting in the background (the TUI shows the state meanwhile)."""
        if self._conn is None and (self._connecting is None or self._connecting.done()):
            self._connecting = asyncio.get_running_loop().create_task(self._open())
            self._connecting.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _connection(self) -> asyncssh.SSHClientConnection:
        if self._conn is not None:
            if not self._conn.is_closed():
                return self._conn
            self._conn = None  # lost before its callback could say so
        self.connect_soon()
        assert self._connecting is not None
        return await asyncio.shield(self._connecting)

    def _lost(self, generation: int, exc: Exception | None) -> None:
        if generation != self._generation:
            return
        self._conn = None
        if exc is not None:
            self.state = "error"
            self.last_error = f"Connection to {self._where} lost: {exc}"
        elif self.state != "error":
            self.state = "disconnected"

    @property
    def _where(self) -> str:
        return self.settings.where if self.settings else self.config.host

    async def _open(self) -> asyncssh.SSHClientConnection:
        self.state = "connecting"
        self._generation += 1
        generation = self._generation
        try:
            settings, password = resolve_settings(self.config, self.workspace)
            self.settings = settings
            conn, used = await open_connection(
                settings, password=self._typed_password or password, prompter=self.prompter,
                trust_new_host=self.trust_new_host,
                on_lost=lambda exc: self._lost(generation, exc),
                keepalive_interval=self.keepalive_interval,
                keepalive_count_max=self.keepalive_count_max)
            if used and used != password:
                self._typed_password = used
            try:
                await self._learn_remote_dir(conn)
            except BaseException:
                conn.abort()
                raise
        except TargetError as e:
            self.state, self.last_error = "error", e.message
            raise
        except (asyncssh.Error, OSError) as e:
            self.state = "error"
            self.last_error = f"SSH connection to {self._where} failed: {e}"
            raise TargetError(self.last_error) from None
        self._conn = conn
        self.state, self.last_error = "connected", None
        await self._reap_orphans(conn)
        return conn

    async def _learn_remote_dir(self, conn: asyncssh.SSHClientConnection) -> None:
        r = await conn.run('printf "%s" "$HOME"', timeout=15, encoding="utf-8")
        home = str(r.stdout or "").strip() or "."
        rd = self.config.remote_dir.strip() or "~/verifybot"
        if rd == "~":
            rd = home
        elif rd.startswith("~/"):
            rd = posixpath.join(home, rd[2:])
        elif not rd.startswith("/"):
            rd = posixpath.join(home, rd)
        self.remote_dir = posixpath.normpath(rd)
        venv_py = posixpath.join(self.remote_dir, VENV_DIR, "bin", "python")
        r = await conn.run(f"test -x {shlex.quote(venv_py)}", timeout=15)
        self._has_venv = r.exit_status == 0
        self._scopes = await self._probe_scopes(conn)

    @staticmethod
    async def _probe_scopes(conn: asyncssh.SSHClientConnection) -> bool:
        """Whether ``systemd-run --user --scope`` works there (a Pi with user sessions)."""
        try:
            r = await conn.run(scripts.SCOPE_PROBE, timeout=15)
        except (TimeoutError, asyncssh.Error, OSError):
            return False
        return r.exit_status == 0

    async def _reap_orphans(self, conn: asyncssh.SSHClientConnection) -> None:
        orphans, self._orphans = self._orphans, []
        for run_dir in orphans:
            try:
                await conn.run(f"cd {shlex.quote(run_dir)} && {_group_kill_sh(self.stop_grace)}; "
                               f"{_leftover_sh(self._scopes)}", timeout=self.stop_grace + 10)
            except (TimeoutError, asyncssh.Error, OSError):
                self._orphans.append(run_dir)

    async def close(self) -> None:
        self._closing = True
        for event in list(self._stops):
            event.set()
        deadline = time.monotonic() + self.stop_grace + 8
        while self._stops and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
            try:
                await asyncio.wait_for(conn.wait_closed(), 5)
            except (TimeoutError, OSError, asyncssh.Error):
                pass
        self.state = "disconnected"
        self._closing = False

    def stop(self) -> None:
        """Stop whatever runs now; its run() returns with ``cancelled`` set."""
        for event in list(self._stops):
            event.set()

    # -- probe ------------------------------------------------------------------------

    def _python(self, override: str | None = None) -> str:
        if override:
            return override
        if self._has_venv:
            return posixpath.join(self.remote_dir, VENV_DIR, "bin", "python")
        return "python3"

    async def probe(self) -> str:
        conn = await self._connection()
        facts = await probe_ssh.gather_facts(conn, shlex.quote(self.remote_dir), self._python())
        markdown = probe_ssh.render(self.name, self._where, self.remote_dir, facts)
        save_context(self.workspace, self.name, markdown)
        return markdown

    # -- running ----------------------------------------------------------------------

    async def run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        await self._connection()
        run_dir = posixpath.join(self.remote_dir, "runs", _safe_rel(request.run_id))
        lang = language_named(request.language) or language_for_filename(request.entry)
        if lang is None or not lang.run:
            text = f"cannot run {request.language!r} programs on the SSH target\n"
            on_output("stderr", text)
            return RunResult(exit_code=EXIT_NOT_FOUND, stdout="", stderr=text, duration=0.0,
                             workdir=run_dir, stderr_bytes=len(text.encode()))
        files, before = self._payload(request)
        python = self._python(request.python)
        entry = _safe_rel(request.entry)
        names = {_safe_rel(f.name) for f in request.files}
        exe = "prog" if "prog" not in names else "prog.out"
        sources = [n for n in sorted(names) if language_for_filename(n) is lang]
        if entry not in sources:
            sources.insert(0, entry)
        if lang.compile:
            argv = compile_argv(lang, entry=entry, sources=sources, exe=exe,
                                compiler=request.compiler, flags=request.flags,
                                includes=include_dirs(names))
            built = await self._exec(argv, run_dir, max(request.timeout, self.compile_timeout),
                                     on_output, files=files)
            if built.exit_code != 0 or built.target_error:
                return self._result(built, shlex.join(argv), run_dir, compile_failed=True)
            command = shlex.join(argv) + " && "
            files, before = None, None  # the build's folder: its own snapshot, after the build
        else:
            command = ""
        argv = build_argv(lang.run, entry=entry, sources=sources, exe=exe, python=python)
        outcome = await self._exec(argv, run_dir, request.timeout, on_output, snapshot=True,
                                   files=files, before=before)
        result = self._result(outcome, command + shlex.join(argv), run_dir)
        if lang.compile:
            result.build_stderr = built.stderr.text  # the warnings of a build that passed
        return result

    def _payload(self, request: RunRequest) -> tuple[bytes, dict[str, tuple[int, float]]]:
        """The files as one tar (the saved version and the run folder's copy), and the run
        folder as it will be before the program starts (what find would show)."""
        mtime = int(time.time()) - 1
        rel_run = posixpath.join("runs", _safe_rel(request.run_id))
        entries: list[tuple[str, bytes]] = []
        before: dict[str, tuple[int, float]] = {}
        for f in request.files:
            data = f.content.encode("utf-8")
            name = _safe_rel(f.name)
            entries += [(_safe_rel(f.saved_name), data), (posixpath.join(rel_run, name), data)]
            before[name] = (len(data), float(mtime))
        return scripts.tar_of(entries, mtime), before

    def _result(self, o: _Outcome, command: str, run_dir: str,
                compile_failed: bool = False) -> RunResult:
        return RunResult(
            exit_code=o.exit_code, stdout=o.stdout.text, stderr=o.stderr.text,
            duration=o.duration, timed_out=o.timed_out, cancelled=o.cancelled,
            compile_failed=compile_failed, files_changed=o.files_changed,
            command=f"cd {shlex.quote(run_dir)} && {command}",
            target_error=o.target_error, workdir=run_dir,
            stdout_bytes=o.stdout_bytes, stderr_bytes=o.stderr_bytes, escaped=o.escaped)

    def _files_sh(self, run_dir: str, token: str, archive: bytes) -> str:
        """A fresh run folder (no file of an older run is mistaken for new) from the tar."""
        home, rel = shlex.quote(self.remote_dir), shlex.quote(
            posixpath.relpath(run_dir, self.remote_dir))
        return (f"cd {home} 2>/dev/null || {{ mkdir -p {home} && cd {home}; }} || exit 127; "
                f"[ ! -e {rel} ] || rm -rf {rel}; {scripts.files_sh(archive)}")

    def _launch_script(self, argv: list[str], run_dir: str, snapshot: bool,
                       token: str = "", files: bytes = b"", before_file: bool = True) -> str:
        """Files in, the watcher started, then the program exec'd as its group's leader.

        sshd already makes the command's shell a session (and group) leader, so
        ``exec`` keeps that group and its id is ``$$``; on a server that does
        not, ``setsid`` makes one. See ssh_scripts for the watcher.
        """
        cmd = shlex.join(argv)
        if token and self._scopes:
            cmd = scope_prefix(token) + cmd
        unpack = self._files_sh(run_dir, token, files) if files else ""
        before = f"{scripts.SNAPSHOT} > .vb_before; " if snapshot and before_file else ""
        env = "export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1; "
        watch = ""
        if token:
            env += f"printf '%s\\n' {shlex.quote(token)} > .vb_run; "
            check = scripts.check_sh(self.stop_grace, self._scopes, snapshot, before_file)
            watcher = shlex.quote(scripts.watcher_sh(check, run_dir))
            watch = (f"exec 3<&0; vbw={watcher}; {scripts.START_APART}"
                     f"export {containment.MARKER}={shlex.quote(token)}; ")
        if self._has_venv:
            # A shell script's `python3` then finds what `install` put there.
            venv = shlex.quote(posixpath.join(self.remote_dir, VENV_DIR))
            env += f'export VIRTUAL_ENV={venv} PATH={venv}/bin:"$PATH"; '
        first = scripts.READ_REPORT_TOKEN if token else ""
        return (f"{first}{unpack}cd {shlex.quote(run_dir)} || exit 127; {env}{before}"
                "read -r _ _ _ _ vbpg _ < /proc/$$/stat 2>/dev/null; "
                f'if [ "$vbpg" = "$$" ]; then echo $$ > .vb_pgid; {watch}'
                f"exec {cmd} </dev/null 3<&-; "
                f"else {watch}exec setsid sh -c 'echo $$ > .vb_pgid; exec \"$@\" </dev/null' "
                f"sh {cmd} 3<&-; fi")

    async def _exec(self, argv: list[str], run_dir: str, timeout: float,
                    on_output: OutputCallback, snapshot: bool = False, files: bytes | None = None,
                    before: dict[str, tuple[int, float]] | None = None) -> _Outcome:
        """Run one program remotely with output streamed; stop its tree on timeout or cancel.

        One channel: the files on its stdin, the program, and the watcher's report
        of what it left (see ssh_scripts); the run ends with that report, at the
        program's own exit, even while something it started still holds stdout.
        """
        out = _Outcome()
        started = time.monotonic()
        token = containment.new_token()  # the run's marker: the program sees it
        report_token = containment.new_token()  # the report's: only the watcher has it
        problems: list[str] = []
        try:
            conn = await self._connection()
            proc, session = await conn.create_session(
                lambda: _Session(out, on_output, problems, report_token),
                self._launch_script(argv, run_dir, snapshot, token, files or b"",
                                    before_file=before is None), encoding=None)
            # No EOF after it: the channel's stdin closing marks the program's end.
            proc.write(scripts.channel_stdin(report_token, files or b""))
        except (asyncssh.Error, OSError) as e:
            out.target_error = f"Could not start the program on {self._where}: {e}"
            return out
        done = asyncio.ensure_future(proc.wait_closed())
        await self._wait_run(conn, proc, session, run_dir, done, problems, timeout, out)
        out.duration = time.monotonic() - started
        await self._finish(conn, proc, session, run_dir, done, problems, out, snapshot, before)
        if session.errors:
            raise session.errors[0]
        return out

    async def _wait_run(self, conn: asyncssh.SSHClientConnection, proc: asyncssh.SSHClientChannel,
                        session: _Session, run_dir: str, done: asyncio.Future,
                        problems: list[str], timeout: float, out: _Outcome) -> None:
        """Until the report (or the channel's end); on timeout, stop or close: stop the tree."""
        stop = asyncio.Event()
        self._stops.add(stop)
        stopper = asyncio.ensure_future(stop.wait())
        reported = asyncio.ensure_future(session.reported.wait())
        try:
            finished, _ = await asyncio.wait({done, reported, stopper}, timeout=timeout,
                                             return_when=asyncio.FIRST_COMPLETED)
            if done not in finished and reported not in finished:
                out.timed_out = stopper not in finished
                out.cancelled = stopper in finished and not self._closing
                if stopper in finished and self._closing:
                    out.target_error = "stopped: the target was closed"
                await self._stop(conn, proc, session, run_dir, done, problems)
        except asyncio.CancelledError:
            await asyncio.shield(self._stop(conn, proc, session, run_dir, done, problems))
            raise
        finally:
            stopper.cancel()
            reported.cancel()
            self._stops.discard(stop)
            if session.reported.is_set() and not done.done():
                # A moment for a second report to show (said as a warning), then close:
                # what still holds the program's stdout is not the program.
                await asyncio.wait({done}, timeout=0.3)
                proc.close()
                await asyncio.wait({done}, timeout=2.0)
            session.flush()

    async def _finish(self, conn: asyncssh.SSHClientConnection, proc: asyncssh.SSHClientChannel,
                      session: _Session, run_dir: str, done: asyncio.Future, problems: list[str],
                      out: _Outcome, snapshot: bool,
                      before: dict[str, tuple[int, float]] | None) -> None:
        """Exit status and the report's findings, or the lost connection said as such."""
        if done.done() and not done.cancelled() and done.exception() is not None:
            problems.append(str(done.exception()))
        no_status = proc.get_exit_status() is None and proc.get_exit_signal() is None
        ended_by_us = out.timed_out or out.cancelled or out.target_error
        report = session.report_text() if session.reported.is_set() else None
        if report is not None and scripts.files_failed(report):
            out.target_error = f"Could not put the files on {self._where}: {out.stderr.text}"
            return
        if self._conn is not conn or conn.is_closed() or (
                no_status and not ended_by_us and report is None):
            if self._conn is conn:  # the channel died first; the connection follows
                self._lost(self._generation, ConnectionError("the channel closed with no exit "
                                                             "status"))
                conn.abort()
            why = self.last_error or "; ".join(problems) or f"Connection to {self._where} lost"
            out.target_error = (f"{why}. The output so far is kept; the next action reconnects "
                                f"and stops the program if it still runs there.")
            self._orphans.append(run_dir)
            return
        if not (out.timed_out or out.cancelled or out.target_error):
            out.exit_code = proc.get_returncode()
        if report is None:  # no watcher's report (it could not start): check from outside
            report = await self._after(conn, run_dir, snapshot, before is None)
        self._read_report(report, out, snapshot, before)
        if session.second_report:
            session.warn("a second after-run report came: something on the Pi holds the "
                         "report token, so what the run left may not all be named")

    @staticmethod
    def _read_report(report: str, out: _Outcome, snapshot: bool,
                     before: dict[str, tuple[int, float]] | None) -> None:
        text = report.replace("vb-killed-leftovers\n", "")
        out.escaped, text = scripts.parse_leftovers(text)
        if snapshot:
            out.files_changed = scripts.changed_files(text, before)

    async def _stop(self, conn: asyncssh.SSHClientConnection, proc: asyncssh.SSHClientChannel,
                    session: _Session, run_dir: str, done: asyncio.Future,
                    problems: list[str]) -> None:
        """SSH TERM, grace, SSH KILL, then kill the recorded group over a new channel.

        Once the program is gone the watcher checks what it left and reports:
        that report (or the channel's end) is waited for, within bounds.
        """
        ended = asyncio.ensure_future(session.ended.wait())
        try:
            for signal_name, wait in (("TERM", self.stop_grace), ("KILL", 1.0)):
                try:
                    proc.send_signal(signal_name)
                except (asyncssh.Error, OSError):
                    break
                finished, _ = await asyncio.wait({ended, done}, timeout=wait)
                if finished:
                    break
            if not ended.done() and not done.done() and self._conn is conn:
                try:
                    await conn.run(f"cd {shlex.quote(run_dir)} && "
                                   f"{_group_kill_sh(self.stop_grace)}",
                                   timeout=self.stop_grace + 10)
                except (TimeoutError, asyncssh.Error, OSError) as e:
                    problems.append(f"stopping failed: {e}")
            reported = asyncio.ensure_future(session.reported.wait())
            await asyncio.wait({reported, done}, timeout=self.stop_grace + 10)
            reported.cancel()
        finally:
            ended.cancel()
        if not session.reported.is_set():
            proc.close()  # a detached child may still hold the pipes: stop reading them
            try:
                await asyncio.wait_for(asyncio.shield(done), 2.0)
            except TimeoutError:
                done.cancel()

    async def _after(self, conn: asyncssh.SSHClientConnection, run_dir: str, snapshot: bool,
                     before_file: bool) -> str:
        """The watcher's check run over a channel of its own (when no report came)."""
        cmd = (f"cd {shlex.quote(run_dir)} || exit 0; "
               f"{scripts.check_sh(self.stop_grace, self._scopes, snapshot, before_file)}")
        try:
            r = await conn.run(cmd, timeout=self.stop_grace + 30, encoding="utf-8",
                               errors="replace")
        except (TimeoutError, asyncssh.Error, OSError):
            return ""
        return str(r.stdout or "")

    # -- packages ---------------------------------------------------------------------

    async def missing_modules(self, modules: list[str], python: str | None = None) -> list[str]:
        if not modules:
            return []
        conn = await self._connection()
        interpreter = self._python(python)
        cmd = "cd / && " + shlex.join([interpreter, "-c", FIND_SPECS, *modules])
        try:
            r = await conn.run(cmd, timeout=60, encoding="utf-8", errors="replace")
        except (TimeoutError, asyncssh.Error, OSError) as e:
            raise TargetError(f"Could not check Python modules on {self._where}: {e}") from None
        if r.exit_status != 0:
            raise TargetError(f"{interpreter} on {self._where} failed while checking modules "
                              f"(exit {r.exit_status}): {output_tail(str(r.stderr or ''), 5)}")
        return [m for m in str(r.stdout or "").split() if m]

    async def _step(self, argv: list[str], cwd: str, on_output: OutputCallback) -> _Outcome:
        on_output("stdout", f"$ {shlex.join(argv)}\n")
        done = await self._exec(argv, cwd, self.install_timeout, on_output)
        if done.target_error:
            raise TargetError(done.target_error)
        return done

    async def install(self, packages: list[str], on_output: OutputCallback) -> str:
        """pip install into remote_dir/venv (made with --system-site-packages), else --user.

        The fallback serves a Pi without python3-venv; on Raspberry Pi OS Bookworm
        a --user install also needs --break-system-packages (PEP 668).
        """
        conn = await self._connection()
        home = self.remote_dir
        folder = posixpath.join(home, VENV_DIR)
        venv_py = posixpath.join(folder, "bin", "python")
        try:
            await conn.run(f"mkdir -p {shlex.quote(home)}", timeout=30, check=True)
        except (TimeoutError, asyncssh.Error, OSError) as e:
            raise TargetError(f"Could not create {home} on {self._where}: {e}") from None
        if not self._has_venv:
            made = await self._step(create_venv_argv("python3", folder), home, on_output)
            self._has_venv = made.exit_code == 0
            if not self._has_venv:
                on_output("stderr", "no venv (is python3-venv installed?): trying pip --user\n")
        if not packages:
            return venv_py if self._has_venv else "python3"
        if self._has_venv:
            python = venv_py
            done = await self._step(pip_install_argv(venv_py, packages), home, on_output)
        else:
            python = "python3"
            argv = pip_install_argv("python3", packages) + ["--user"]
            done = await self._step(argv, home, on_output)
            if done.exit_code != 0 and "externally-managed" in done.stderr.text + done.stdout.text:
                done = await self._step(argv + ["--break-system-packages"], home, on_output)
        if done.exit_code != 0:
            why = "timed out" if done.timed_out else f"failed (exit {done.exit_code})"
            said = output_tail(done.stdout.text + "\n" + done.stderr.text)
            raise InstallError(f"pip install {' '.join(packages)} on {self._where} {why}; pip "
                               f"said:\n{said}")
        return python
