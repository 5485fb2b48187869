"""Small helpers shared by the SSH target's tests (not fixtures: plain code)."""

from __future__ import annotations

import asyncio
import os
import time

from verifybot_tui.core.base.ports import ProgramFile, RunRequest


class Answers:
    """A Prompter with fixed answers that records what it was asked."""

    def __init__(self, confirm: bool | None = None, secret: str | None = None) -> None:
        self._confirm = confirm
        self._secret = secret
        self.questions: list[str] = []

    async def confirm(self, question: str) -> bool:
        self.questions.append(question)
        if self._confirm is None:
            raise AssertionError(f"not expected to be asked: {question}")
        return self._confirm

    async def secret(self, question: str) -> str | None:
        self.questions.append(question)
        if self._secret is None:
            raise AssertionError(f"not expected to be asked: {question}")
        return self._secret


class Recorder:
    """An OutputCallback that keeps (seconds since start, stream, text)."""

    def __init__(self) -> None:
        self.t0 = time.monotonic()
        self.chunks: list[tuple[float, str, str]] = []
        self.seen = asyncio.Event()

    def __call__(self, stream: str, text: str) -> None:
        self.chunks.append((time.monotonic() - self.t0, stream, text))
        self.seen.set()

    def text(self, stream: str) -> str:
        return "".join(t for _, s, t in self.chunks if s == stream)

    def when(self, needle: str, stream: str = "stdout") -> float:
        """Seconds from the start until the stream first held ``needle``."""
        text = ""
        for t, s, chunk in self.chunks:
            if s == stream:
                text += chunk
                if needle in text:
                    return t
        raise AssertionError(f"{needle!r} never came on {stream}: {self.chunks!r}")

    async def wait_for(self, needle: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text("stdout") + self.text("stderr"):
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} never came; got {self.chunks!r}")
            self.seen.clear()
            try:
                await asyncio.wait_for(self.seen.wait(), 0.2)
            except TimeoutError:
                pass


def request(run_id: str, files: dict[str, str], entry: str | None = None,
            language: str = "python", timeout: float = 20.0, **kw) -> RunRequest:
    progs = [ProgramFile(name=n, saved_name=n.replace(".", "_1.", 1), content=c,
                         language=language) for n, c in files.items()]
    return RunRequest(run_id=run_id, files=progs, entry=entry or next(iter(files)),
                      language=language, timeout=timeout, **kw)


def pids_in(path: str) -> list[int]:
    try:
        return [int(x) for x in open(path).read().split()]
    except OSError:
        return []


def wait_until(check, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


__all__ = ["Answers", "Recorder", "request", "pids_in", "wait_until", "os"]
