"""The terminal the commands talk to: messages on stderr, colour, questions on stdin.

Kept below both ``common`` (the config, the stop signals) and ``approval`` (files
from others, asked about on the terminal), which each need it: neither imports the
other's way to the terminal back.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from typing import TextIO

from verifybot_tui.core.base.ansi import visible


def err(text: str) -> None:
    """A message on stderr; it may quote foreign text (a server's, a file's): made safe."""
    print(f"verifybot: {visible(text)}", file=sys.stderr, flush=True)


def colour(stream: TextIO, code: str, text: str) -> str:
    if stream.isatty() and not os.environ.get("NO_COLOR"):
        return f"\x1b[{code}m{text}\x1b[0m"
    return text


class Stdin:
    """Line reads from stdin that never block the event loop or the exit.

    A daemon thread does the blocking read, so Ctrl+C during a question still
    stops the loop cleanly and the process can exit without a pending read.
    """

    def __init__(self) -> None:
        self.eof = False
        self.stopped = False  # a stop signal came: no question is asked or read any more
        self._waiting: asyncio.Future[str] | None = None

    def stop(self) -> None:
        """End the question being asked (it reads as no answer) and every later one."""
        self.stopped = True
        fut = self._waiting
        if fut is not None and not fut.done():
            fut.get_loop().call_soon_threadsafe(_settle, fut, "")

    async def readline(self, question: str) -> str | None:
        if self.eof or self.stopped:
            return None
        print(question, end="", file=sys.stderr, flush=True)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[str] = loop.create_future()
        self._waiting = fut

        def read() -> None:
            line = sys.stdin.readline()
            try:
                loop.call_soon_threadsafe(_settle, fut, line)
            except RuntimeError:
                pass  # the loop has closed: the process is ending

        threading.Thread(target=read, daemon=True).start()
        try:
            line = await fut
        finally:
            self._waiting = None
        if self.stopped:
            print(file=sys.stderr)
            return None  # typed after the stop, or nothing: not an answer either way
        if not line:
            self.eof = True
            print(file=sys.stderr)
            return None
        return line.rstrip("\n")

    async def confirm(self, question: str) -> bool:
        answer = await self.readline(f"{question} [y/N] ")
        return answer is not None and answer.strip().lower() in ("y", "yes")

    async def secret(self, question: str) -> str | None:
        if self.stopped:
            return None
        if not sys.stdin.isatty():
            return await self.readline(f"{question} ")
        import getpass

        from verifybot_tui.core.base.offload import in_thread

        return await in_thread(getpass.getpass, f"{question} ")


def _settle(fut: asyncio.Future[str], line: str) -> None:
    if not fut.done():
        fut.set_result(line)
