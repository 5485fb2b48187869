"""One remote program's life: started on its channel, waited for, stopped, its leftovers named.

A run, a build and an install step all go this way (``execute``): one channel
carries the files in, the program's output and the watcher's report out; a
timeout, a stop or a close stops the whole tree (an SSH signal, then the
recorded group over a channel of its own); a link lost mid-run keeps the output
and leaves the run folder to be cleaned on the next connection.
"""

from __future__ import annotations

import asyncio
import shlex
import time

import asyncssh

from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.targets import ssh_scripts as scripts
from verifybot_tui.targets.containment.markers import new_token
from verifybot_tui.targets.ssh.channel import ProgramSession
from verifybot_tui.targets.ssh.connection import SSHConnection
from verifybot_tui.targets.ssh.launch import launch_script
from verifybot_tui.targets.ssh.outcome import Outcome


async def execute(link: SSHConnection, argv: list[str], run_dir: str, timeout: float,
                  on_output: OutputCallback, snapshot: bool = False, files: bytes | None = None,
                  before: dict[str, tuple[int, float]] | None = None) -> Outcome:
    """Run one program remotely with output streamed; stop its tree on timeout or cancel.

    One channel: the files on its stdin, the program, and the watcher's report
    of what it left (see ssh_scripts); the run ends with that report, at the
    program's own exit, even while something it started still holds stdout.
    """
    out = Outcome()
    started = time.monotonic()
    token = new_token()  # the run's marker: the program sees it
    report_token = new_token()  # the report's: only the watcher has it
    problems: list[str] = []
    try:
        conn = await link.connection()
        proc, session = await conn.create_session(
            lambda: ProgramSession(out, on_output, problems, report_token),
            launch_script(link, argv, run_dir, snapshot, token, files or b"",
                          before_file=before is None), encoding=None)
        # No EOF after it: the channel's stdin closing marks the program's end.
        proc.write(scripts.channel_stdin(report_token, files or b""))
    except (asyncssh.Error, OSError) as e:
        out.target_error = f"Could not start the program on {link.where}: {e}"
        return out
    done = asyncio.ensure_future(proc.wait_closed())
    await _wait_run(link, conn, proc, session, run_dir, done, problems, timeout, out)
    out.duration = time.monotonic() - started
    await _finish(link, conn, proc, session, run_dir, done, problems, out, snapshot, before)
    if session.errors:
        raise session.errors[0]
    return out


async def _wait_run(link: SSHConnection, conn: asyncssh.SSHClientConnection,
                    proc: asyncssh.SSHClientChannel, session: ProgramSession, run_dir: str,
                    done: asyncio.Future, problems: list[str], timeout: float,
                    out: Outcome) -> None:
    """Until the report (or the channel's end); on timeout, stop or close: stop the tree."""
    stop = asyncio.Event()
    link.stops.add(stop)
    stopper = asyncio.ensure_future(stop.wait())
    reported = asyncio.ensure_future(session.reported.wait())
    try:
        finished, _ = await asyncio.wait({done, reported, stopper}, timeout=timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        if done not in finished and reported not in finished:
            out.timed_out = stopper not in finished
            out.cancelled = stopper in finished and not link.closing
            if stopper in finished and link.closing:
                out.target_error = "stopped: the target was closed"
            await _stop(link, conn, proc, session, run_dir, done, problems)
    except asyncio.CancelledError:
        await asyncio.shield(_stop(link, conn, proc, session, run_dir, done, problems))
        raise
    finally:
        stopper.cancel()
        reported.cancel()
        link.stops.discard(stop)
        if session.reported.is_set() and not done.done():
            # A moment for a second report to show (said as a warning), then close:
            # what still holds the program's stdout is not the program.
            await asyncio.wait({done}, timeout=0.3)
            proc.close()
            await asyncio.wait({done}, timeout=2.0)
        session.flush()


async def _finish(link: SSHConnection, conn: asyncssh.SSHClientConnection,
                  proc: asyncssh.SSHClientChannel, session: ProgramSession, run_dir: str,
                  done: asyncio.Future, problems: list[str], out: Outcome, snapshot: bool,
                  before: dict[str, tuple[int, float]] | None) -> None:
    """Exit status and the report's findings, or the lost connection said as such."""
    if done.done() and not done.cancelled() and done.exception() is not None:
        problems.append(str(done.exception()))
    no_status = proc.get_exit_status() is None and proc.get_exit_signal() is None
    ended_by_us = out.timed_out or out.cancelled or out.target_error
    report = session.report_text() if session.reported.is_set() else None
    if report is not None and scripts.files_failed(report):
        out.target_error = f"Could not put the files on {link.where}: {out.stderr.text}"
        return
    if link.conn is not conn or conn.is_closed() or (
            no_status and not ended_by_us and report is None):
        if link.conn is conn:  # the channel died first; the connection follows
            link.drop(ConnectionError("the channel closed with no exit status"))
            conn.abort()
        why = link.last_error or "; ".join(problems) or f"Connection to {link.where} lost"
        out.target_error = (f"{why}. The output so far is kept; the next action reconnects "
                            f"and stops the program if it still runs there.")
        link.orphans.append(run_dir)
        return
    if not (out.timed_out or out.cancelled or out.target_error):
        out.exit_code = proc.get_returncode()
    if report is None:  # no watcher's report (it could not start): check from outside
        report = await _after(link, conn, run_dir, snapshot, before is None)
    _read_report(report, out, snapshot, before)
    if session.second_report:
        session.warn("a second after-run report came: something on the Pi holds the "
                     "report token, so what the run left may not all be named")


def _read_report(report: str, out: Outcome, snapshot: bool,
                 before: dict[str, tuple[int, float]] | None) -> None:
    """What the watcher found: the processes that escaped, the files the run wrote."""
    text = report.replace("vb-killed-leftovers\n", "")
    out.escaped, text = scripts.parse_leftovers(text)
    if snapshot:
        out.files_changed = scripts.changed_files(text, before)


async def _stop(link: SSHConnection, conn: asyncssh.SSHClientConnection,
                proc: asyncssh.SSHClientChannel, session: ProgramSession, run_dir: str,
                done: asyncio.Future, problems: list[str]) -> None:
    """SSH TERM, grace, SSH KILL, then kill the recorded group over a new channel.

    Once the program is gone the watcher checks what it left and reports:
    that report (or the channel's end) is waited for, within bounds.
    """
    ended = asyncio.ensure_future(session.ended.wait())
    try:
        for signal_name, wait in (("TERM", link.stop_grace), ("KILL", 1.0)):
            try:
                proc.send_signal(signal_name)
            except (asyncssh.Error, OSError):
                break
            finished, _ = await asyncio.wait({ended, done}, timeout=wait)
            if finished:
                break
        if not ended.done() and not done.done() and link.conn is conn:
            try:
                await conn.run(f"cd {shlex.quote(run_dir)} && "
                               f"{scripts.group_kill_sh(link.stop_grace)}",
                               timeout=link.stop_grace + 10)
            except (TimeoutError, asyncssh.Error, OSError) as e:
                problems.append(f"stopping failed: {e}")
        reported = asyncio.ensure_future(session.reported.wait())
        await asyncio.wait({reported, done}, timeout=link.stop_grace + 10)
        reported.cancel()
    finally:
        ended.cancel()
    if not session.reported.is_set():
        proc.close()  # a detached child may still hold the pipes: stop reading them
        try:
            await asyncio.wait_for(asyncio.shield(done), 2.0)
        except TimeoutError:
            done.cancel()


async def _after(link: SSHConnection, conn: asyncssh.SSHClientConnection, run_dir: str,
                 snapshot: bool, before_file: bool) -> str:
    """The watcher's check run over a channel of its own (when no report came)."""
    cmd = (f"cd {shlex.quote(run_dir)} || exit 0; "
           f"{scripts.check_sh(link.stop_grace, link.scopes, snapshot, before_file)}")
    try:
        r = await conn.run(cmd, timeout=link.stop_grace + 30, encoding="utf-8",
                           errors="replace")
    except (TimeoutError, asyncssh.Error, OSError):
        return ""
    return str(r.stdout or "")
