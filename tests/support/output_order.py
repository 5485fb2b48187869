"""A program that alternates stdout and stderr, and how to read back the order seen.

Shared by the local, SSH and loop tests of "output keeps its arrival order".
The program writes its next line only once the test has received the previous
one (it waits for an ``ack_<n>`` file the receiving side creates in the run
folder), so the writes are ordered in time whatever the machine's load: a
reader that keeps arrival order must deliver exactly the written order, and a
reader that does not deliver a stream as it comes (one that reads stdout to
its end before stderr, say) leaves the program waiting and the test failing.
"""

from __future__ import annotations

from pathlib import Path

PAIRS = 12
INTERLEAVED = ("import os, sys, time\n"
               "def wait(n):\n"
               "    deadline = time.monotonic() + 5\n"
               "    while not os.path.exists(f'ack_{n}') and time.monotonic() < deadline:\n"
               "        time.sleep(0.002)\n"
               f"for i in range({PAIRS}):\n"
               "    print(f'out {i}', flush=True)\n"
               "    wait(2 * i + 1)\n"
               "    print(f'err {i}', file=sys.stderr, flush=True)\n"
               "    wait(2 * i + 2)\n")


class Acks:
    """An output callback that keeps (stream, text) and answers each complete line
    with ``ack_<count>`` in the run folder, where the program waits for it."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self.chunks: list[tuple[str, str]] = []
        self._rest = {"stdout": "", "stderr": ""}
        self.count = 0

    def __call__(self, stream: str, text: str) -> None:
        self.chunks.append((stream, text))
        *lines, self._rest[stream] = (self._rest[stream] + text).split("\n")
        for _ in lines:
            self.count += 1
            if self.folder is not None:
                (self.folder / f"ack_{self.count}").touch()


def interleaved_lines(chunks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(stream, line) in the order the callback saw them.

    Runs of chunks from one stream are joined first: an unbuffered ``print``
    writes its text and its newline separately.
    """
    runs: list[list[str]] = []
    for stream, text in chunks:
        if runs and runs[-1][0] == stream:
            runs[-1][1] += text
        else:
            runs.append([stream, text])
    return [(stream, line) for stream, text in runs for line in text.splitlines()]


def expected_interleaving(pairs: int = PAIRS) -> list[tuple[str, str]]:
    return [pair for i in range(pairs)
            for pair in (("stdout", f"out {i}"), ("stderr", f"err {i}"))]
