"""A process's two pipes, read in one place: the output streamed to the caller as it
comes and kept, bounded, for the run's result (the local target's runs and QEMU's).
"""

from __future__ import annotations

import asyncio
import codecs

from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.targets.capture import OutputCapture


def noop(stream: str, text: str) -> None:
    """An output callback that takes nothing (a check whose output is only kept)."""


class OutputReader(asyncio.SubprocessProtocol):
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
        except Exception as e:  # noqa: BLE001 - re-raised by Processes.exec
            self.errors.append(e)
            self.on_output = noop
