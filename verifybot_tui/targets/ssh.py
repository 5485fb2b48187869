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
from verifybot_tui.targets import containment, probe_ssh
from verifybot_tui.targets.capture import OutputCapture
from verifybot_tui.targets.probe_local import save_context
from verifybot_tui.targets.ssh_connect import Settings, open_connection, resolve_settings
from verifybot_tui.targets.venv import (
    FIND_SPECS,
    VENV_DIR,
    InstallError,
    create_venv_argv,
    output_tail,
    pip_install_argv,
)

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
# Files VerifyBot itself keeps in a run folder; never reported as the program's output files.
_OWN = ".vb_"
_SNAPSHOT = ("find . -type f ! -name '.vb_*' ! -path '*/__pycache__/*' "
             "-printf '%P\\t%s\\t%T@\\n' 2>/dev/null")
_MARK = "--vb-after--"
_SCOPE_PROBE = "systemd-run --user --scope --quiet true"


def scope_unit(token: str) -> str:
    """The transient systemd scope of one run (token: ``containment.new_token()``)."""
    return f"verifybot-{token}.scope"


def scope_prefix(token: str) -> str:
    """What runs the program in its own user scope (where the Pi has user sessions).

    ``systemd-run --scope`` moves itself into the scope and execs the command, so
    the pid, process group and environment stay the program's own.
    """
    return (f"systemd-run --user --scope --quiet --collect "
            f"--unit={shlex.quote(scope_unit(token))} -- ")


def _leftover_sh(scope: bool) -> str:
    """Name and KILL what of the run still lives once its group was stopped.

    Found by the run's marker (``.vb_run``) in /proc/*/environ of our user
    (``grep -z`` reads the NUL-separated variables), and with ``scope`` by the
    run's systemd scope. Prints ``vb-escaped PID NAME`` per process found and
    ``vb-unkillable PID NAME`` for one still alive after the KILLs.
    """
    find = ('vb_marked() { [ -n "$tok" ] && grep -lzxF "VERIFYBOT_RUN=$tok" '
            '/proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }; ')
    if scope:
        find += ('vb_cg=$(systemctl --user show -p ControlGroup --value "verifybot-$tok.scope" '
                 '2>/dev/null); '
                 'vb_found() { { vb_marked; [ -n "$vb_cg" ] && '
                 'cat "/sys/fs/cgroup$vb_cg/cgroup.procs" 2>/dev/null; } | sort -u; }; ')
    else:
        find += 'vb_found() { vb_marked; }; '
    kill_scope = ('systemctl --user kill -s KILL "verifybot-$tok.scope" 2>/dev/null; '
                  if scope else '')
    return ('tok=$(cat .vb_run 2>/dev/null); ' + find +
            'for p in $(vb_found); do [ "$p" = "$$" ] && continue; '
            'echo "vb-escaped $p $(cat /proc/$p/comm 2>/dev/null)"; done; '
            'i=0; while [ $i -lt 20 ]; do left=; '
            'for p in $(vb_found); do [ "$p" = "$$" ] || { left=1; kill -KILL "$p" 2>/dev/null; }; '
            'done; [ -z "$left" ] && break; ' + kill_scope +
            'sleep 0.05; i=$((i+1)); done; '
            'for p in $(vb_found); do [ "$p" = "$$" ] && continue; '
            'echo "vb-unkillable $p $(cat /proc/$p/comm 2>/dev/null)"; done')


def _parse_leftovers(text: str) -> tuple[list[str], str]:
    """('PID (name) killed' / 'PID (name) NOT killable' lines, the rest of the text)."""
    found: dict[str, str] = {}
    unkillable: set[str] = set()
    rest = []
    for line in text.splitlines(keepends=True):
        kind, _, what = line.strip().partition(" ")
        if kind in ("vb-escaped", "vb-unkillable"):
            pid, _, name = what.partition(" ")
            found.setdefault(pid, name or "?")
            if kind == "vb-unkillable":
                unkillable.add(pid)
        else:
            rest.append(line)
    named = [f"{pid} ({name}) {'NOT killable' if pid in unkillable else 'killed'}"
             for pid, name in found.items()]
    return named, "".join(rest)


def _group_kill_sh(grace: float) -> str:
    """Kill the group recorded in .vb_pgid while it has live members (TERM, grace, KILL).

    Zombies waiting for init to reap them still count for ``kill -0``; ``ps``
    tells them apart, so a group of only zombies costs no grace period.
    """
    steps = max(1, int(grace / 0.1))
    return ('pg=$(cat .vb_pgid 2>/dev/null); '
            'vb_live() { ps -e -o pgid=,stat= 2>/dev/null | '
            'awk -v g="$pg" \'$1 == g && $2 !~ /^Z/ {f = 1} END {exit !f}\'; }; '
            'command -v ps >/dev/null 2>&1 || vb_live() { kill -0 -"$pg" 2>/dev/null; }; '
            'if [ -n "$pg" ] && vb_live; then '
            'kill -TERM -"$pg" 2>/dev/null; i=0; '
            f'while [ $i -lt {steps} ] && vb_live; do sleep 0.1; i=$((i+1)); done; '
            'kill -KILL -"$pg" 2>/dev/null; echo vb-killed-leftovers; fi')


def _safe_rel(name: str) -> str:
    """A file name confined to its folder (the loop already confines them; belt and braces)."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("/", "..", ".")]
    return "/".join(parts) or "unnamed"


def _parse_snapshot(text: str) -> dict[str, tuple[str, str]]:
    found = {}
    for line in text.splitlines():
        bits = line.split("\t")
        if len(bits) == 3:
            found[bits[0]] = (bits[1], bits[2])
    return found


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
    """

    def __init__(self, out: _Outcome, on_output: OutputCallback, problems: list[str]) -> None:
        self.out = out
        self.on_output = on_output
        self.problems = problems
        self._decoders = {name: codecs.getincrementaldecoder("utf-8")(errors="replace")
                          for name in ("stdout", "stderr")}
        self._flushed = False
        self.errors: list[Exception] = []  # the callback's, raised once the run is over

    def data_received(self, data: bytes, datatype: asyncssh.DataType) -> None:
        if datatype == asyncssh.EXTENDED_DATA_STDERR:
            stream = "stderr"
            self.out.stderr_bytes += len(data)
        else:
            stream = "stdout"
            self.out.stdout_bytes += len(data)
        self._deliver(stream, self._decoders[stream].decode(data))

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self.problems.append(str(exc) or type(exc).__name__)
        self.flush()

    def flush(self) -> None:
        """Pass on the end of a character split across the last chunk, once."""
        if self._flushed:
            return
        self._flushed = True
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
            r = await conn.run(_SCOPE_PROBE, timeout=15)
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

    async def _put_files(self, conn: asyncssh.SSHClientConnection, request: RunRequest,
                         run_dir: str) -> None:
        # A fresh folder, like the local target's: no file of an older run is mistaken for new.
        await conn.run(f"rm -rf {shlex.quote(run_dir)} && mkdir -p {shlex.quote(run_dir)}",
                       timeout=60, check=True)
        async with conn.start_sftp_client() as sftp:
            made: set[str] = {run_dir}
            for f in request.files:
                data = f.content.encode("utf-8")
                for path in (posixpath.join(self.remote_dir, _safe_rel(f.saved_name)),
                             posixpath.join(run_dir, _safe_rel(f.name))):
                    parent = posixpath.dirname(path)
                    if parent not in made:
                        await sftp.makedirs(parent, exist_ok=True)
                        made.add(parent)
                    async with sftp.open(path, "wb") as fh:
                        await fh.write(data)

    async def run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        conn = await self._connection()
        run_dir = posixpath.join(self.remote_dir, "runs", _safe_rel(request.run_id))
        started = time.monotonic()
        lang = language_named(request.language) or language_for_filename(request.entry)
        if lang is None or not lang.run:
            text = f"cannot run {request.language!r} programs on the SSH target\n"
            on_output("stderr", text)
            return RunResult(exit_code=EXIT_NOT_FOUND, stdout="", stderr=text, duration=0.0,
                             workdir=run_dir, stderr_bytes=len(text.encode()))
        try:
            await self._put_files(conn, request, run_dir)
        except (asyncssh.Error, OSError) as e:
            return self._lost_before_start(e, run_dir, started)
        python = self._python(request.python)
        entry = _safe_rel(request.entry)
        names = {_safe_rel(f.name) for f in request.files}
        exe = "prog" if "prog" not in names else "prog.out"
        sources = [n for n in sorted(names) if language_for_filename(n) is lang]
        if entry not in sources:
            sources.insert(0, entry)
        if lang.compile:
            argv = compile_argv(lang, entry=entry, sources=sources, exe=exe,
                                compiler=request.compiler, flags=request.flags)
            built = await self._exec(argv, run_dir, max(request.timeout, self.compile_timeout),
                                     on_output)
            if built.exit_code != 0 or built.target_error:
                return self._result(built, shlex.join(argv), run_dir, compile_failed=True)
            command = shlex.join(argv) + " && "
        else:
            command = ""
        argv = build_argv(lang.run, entry=entry, sources=sources, exe=exe, python=python)
        outcome = await self._exec(argv, run_dir, request.timeout, on_output, snapshot=True)
        result = self._result(outcome, command + shlex.join(argv), run_dir)
        if lang.compile:
            result.build_stderr = built.stderr.text  # the warnings of a build that passed
        return result

    def _lost_before_start(self, e: Exception, run_dir: str, started: float) -> RunResult:
        return RunResult(exit_code=None, stdout="", stderr="", workdir=run_dir,
                         duration=time.monotonic() - started,
                         target_error=f"Could not put the files on {self._where}: {e}")

    def _result(self, o: _Outcome, command: str, run_dir: str,
                compile_failed: bool = False) -> RunResult:
        return RunResult(
            exit_code=o.exit_code, stdout=o.stdout.text, stderr=o.stderr.text,
            duration=o.duration, timed_out=o.timed_out, cancelled=o.cancelled,
            compile_failed=compile_failed, files_changed=o.files_changed,
            command=f"cd {shlex.quote(run_dir)} && {command}",
            target_error=o.target_error, workdir=run_dir,
            stdout_bytes=o.stdout_bytes, stderr_bytes=o.stderr_bytes, escaped=o.escaped)

    def _launch_script(self, argv: list[str], run_dir: str, snapshot: bool,
                       token: str = "") -> str:
        """cd, snapshot the folder, then exec the program as its own process group's leader.

        sshd already makes the command's shell a session (and group) leader, so
        ``exec`` keeps that group and its id is ``$$``; on a server that does
        not, ``setsid`` makes one.
        """
        cmd = shlex.join(argv)
        if token and self._scopes:
            cmd = scope_prefix(token) + cmd
        before = f"{_SNAPSHOT} > .vb_before; " if snapshot else ""
        env = "export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1; "
        if token:
            env += (f"printf '%s\\n' {shlex.quote(token)} > .vb_run; "
                    f"export {containment.MARKER}={shlex.quote(token)}; ")
        if self._has_venv:
            # A shell script's `python3` then finds what `install` put there.
            venv = shlex.quote(posixpath.join(self.remote_dir, VENV_DIR))
            env += f'export VIRTUAL_ENV={venv} PATH={venv}/bin:"$PATH"; '
        return (f"cd {shlex.quote(run_dir)} || exit 127; {env}{before}"
                "read -r _ _ _ _ vbpg _ < /proc/$$/stat 2>/dev/null; "
                f'if [ "$vbpg" = "$$" ]; then echo $$ > .vb_pgid; exec {cmd} </dev/null; '
                f"else exec setsid sh -c 'echo $$ > .vb_pgid; exec \"$@\" </dev/null' sh {cmd}; fi")

    async def _exec(self, argv: list[str], run_dir: str, timeout: float,
                    on_output: OutputCallback, snapshot: bool = False) -> _Outcome:
        """Run one program remotely with output streamed; stop its tree on timeout or cancel."""
        out = _Outcome()
        started = time.monotonic()
        try:
            conn = await self._connection()
            token = containment.new_token()
            problems: list[str] = []
            proc, session = await conn.create_session(
                lambda: _Session(out, on_output, problems),
                self._launch_script(argv, run_dir, snapshot, token), encoding=None)
        except (asyncssh.Error, OSError) as e:
            out.target_error = f"Could not start the program on {self._where}: {e}"
            return out
        done = asyncio.ensure_future(proc.wait_closed())
        stop = asyncio.Event()
        self._stops.add(stop)
        stopper = asyncio.ensure_future(stop.wait())
        try:
            finished, _ = await asyncio.wait({done, stopper}, timeout=timeout,
                                             return_when=asyncio.FIRST_COMPLETED)
            if done not in finished:
                out.timed_out = stopper not in finished
                out.cancelled = stopper in finished and not self._closing
                if stopper in finished and self._closing:
                    out.target_error = "stopped: the target was closed"
                await self._stop(conn, proc, run_dir, done, problems)
        except asyncio.CancelledError:
            await asyncio.shield(self._stop(conn, proc, run_dir, done, problems))
            raise
        finally:
            stopper.cancel()
            self._stops.discard(stop)
            session.flush()
            out.duration = time.monotonic() - started
        if done.done() and not done.cancelled() and done.exception() is not None:
            problems.append(str(done.exception()))
        no_status = proc.get_exit_status() is None and proc.get_exit_signal() is None
        ended_by_us = out.timed_out or out.cancelled or out.target_error
        if self._conn is not conn or conn.is_closed() or (no_status and not ended_by_us):
            if self._conn is conn:  # the channel died first; the connection follows
                self._lost(self._generation, ConnectionError("the channel closed with no exit "
                                                             "status"))
                conn.abort()
            why = self.last_error or "; ".join(problems) or f"Connection to {self._where} lost"
            out.target_error = (f"{why}. The output so far is kept; the next action reconnects "
                                f"and stops the program if it still runs there.")
            self._orphans.append(run_dir)
        else:
            if not (out.timed_out or out.cancelled or out.target_error):
                out.exit_code = proc.get_returncode()
            await self._after(conn, run_dir, out, snapshot)
        if session.errors:
            raise session.errors[0]
        return out

    async def _stop(self, conn: asyncssh.SSHClientConnection, proc: asyncssh.SSHClientChannel,
                    run_dir: str, done: asyncio.Future, problems: list[str]) -> None:
        """SSH TERM, grace, SSH KILL, then kill the recorded group over a new channel."""
        for signal_name, wait in (("TERM", self.stop_grace), ("KILL", 1.0)):
            try:
                proc.send_signal(signal_name)
            except (asyncssh.Error, OSError):
                break
            try:
                await asyncio.wait_for(asyncio.shield(done), wait)
                break
            except TimeoutError:
                continue
        if self._conn is conn:
            try:
                await conn.run(f"cd {shlex.quote(run_dir)} && {_group_kill_sh(self.stop_grace)}",
                               timeout=self.stop_grace + 10)
            except (TimeoutError, asyncssh.Error, OSError) as e:
                problems.append(f"stopping failed: {e}")
        proc.close()  # a detached child may still hold the pipes: stop reading them
        try:
            await asyncio.wait_for(asyncio.shield(done), 2.0)
        except TimeoutError:
            done.cancel()

    async def _after(self, conn: asyncssh.SSHClientConnection, run_dir: str, out: _Outcome,
                     snapshot: bool) -> None:
        """Kill what the program left running in its group; list the files it wrote."""
        cmd = (f"cd {shlex.quote(run_dir)} || exit 0; {_group_kill_sh(self.stop_grace)}; "
               f"{_leftover_sh(self._scopes)}")
        if snapshot:
            cmd += f"; cat .vb_before 2>/dev/null; echo {_MARK}; {_SNAPSHOT}"
        try:
            r = await conn.run(cmd, timeout=self.stop_grace + 30, encoding="utf-8",
                               errors="replace")
        except (TimeoutError, asyncssh.Error, OSError):
            return
        text = str(r.stdout or "").replace("vb-killed-leftovers\n", "")
        out.escaped, text = _parse_leftovers(text)
        if snapshot and _MARK in text:
            before_text, after_text = text.split(_MARK + "\n", 1)
            before, after = _parse_snapshot(before_text), _parse_snapshot(after_text)
            out.files_changed = sorted(p for p, meta in after.items()
                                       if before.get(p) != meta and not p.startswith(_OWN))

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
