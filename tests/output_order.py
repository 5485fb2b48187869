"""A program that alternates stdout and stderr, and how to read back the order seen.

Shared by the local and SSH target tests of "output keeps its arrival order".
"""

from __future__ import annotations

INTERLEAVED = ("import sys, time\n"
               "for i in range(12):\n"
               "    print(f'out {i}', flush=True)\n"
               "    time.sleep(0.03)\n"
               "    print(f'err {i}', file=sys.stderr, flush=True)\n"
               "    time.sleep(0.03)\n")


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


def expected_interleaving(pairs: int = 12) -> list[tuple[str, str]]:
    return [pair for i in range(pairs)
            for pair in (("stdout", f"out {i}"), ("stderr", f"err {i}"))]
