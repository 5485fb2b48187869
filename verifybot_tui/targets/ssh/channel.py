"""Both outputs of one remote program, read on its one channel, with the watcher's report.

The reading is asyncssh's session callbacks: kept apart from the process side
(which starts, waits for and stops the program) so the split of the report off
stdout can be fed and tested byte by byte, as asyncssh feeds it.
"""

from __future__ import annotations

import asyncio
import codecs

import asyncssh

from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.targets import ssh_scripts as scripts
from verifybot_tui.targets.ssh.outcome import Outcome


def _ignore(stream: str, text: str) -> None:
    pass


class ProgramSession(asyncssh.SSHClientSession[bytes]):
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

    def __init__(self, out: Outcome, on_output: OutputCallback, problems: list[str],
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
        except Exception as e:  # noqa: BLE001 - re-raised by process.execute
            self.errors.append(e)
            self.on_output = _ignore

