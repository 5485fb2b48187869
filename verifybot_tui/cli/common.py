"""What every command shares: the config with --workspace, messages on stderr,
questions on stdin, and the stop signals.

Kept apart from the entry (the parser and dispatch) so that the command modules
can use them without importing the entry that imports them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any, TextIO

from verifybot_tui.core.base.errors import (
    EXIT_INTERRUPTED,
    ConfigError,
)
from verifybot_tui.core.base.outcome import Status
from verifybot_tui.core.settings.config import Config, load_config
from verifybot_tui.core.settings.secrets import seal_environment
from verifybot_tui.core.store.workspace import check_workspace


def config_for(args: argparse.Namespace, *, writes: bool = False) -> Config:
    """The config with --workspace applied; a workspace that cannot work exits 2 here
    (``writes``: the command will write into it, so it must be writable)."""
    cfg = load_config(getattr(args, "config", None))
    # From here on no secret is in this process's environment (nor in /proc/PID/environ),
    # so nothing started later inherits one; VerifyBot reads them with secret_env.
    seal_environment(cfg)
    ws = getattr(args, "workspace", None)
    if ws:
        cfg.run.workspace = str(Path(ws).expanduser().resolve())
    check_workspace(cfg.workspace, write=writes)  # a file or /proc: exit 2, every command
    return cfg



def check_prompt(prompt: str, command: str) -> None:
    """A blank prompt is a usage error (exit 2), before anything is sent or recorded."""
    if not prompt.strip():
        raise ConfigError(f"the prompt is empty: say what the program should do, e.g. "
                          f"{command} \"print the first 10 prime numbers\"")


def err(text: str) -> None:
    print(f"verifybot: {text}", file=sys.stderr, flush=True)



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

    async def readline(self, question: str) -> str | None:
        if self.eof:
            return None
        print(question, end="", file=sys.stderr, flush=True)
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[str] = loop.create_future()

        def deliver(line: str) -> None:
            if not fut.done():
                fut.set_result(line)

        def read() -> None:
            loop.call_soon_threadsafe(deliver, sys.stdin.readline())

        threading.Thread(target=read, daemon=True).start()
        line = await fut
        if not line:
            self.eof = True
            print(file=sys.stderr)
            return None
        return line.rstrip("\n")

    async def confirm(self, question: str) -> bool:
        answer = await self.readline(f"{question} [y/N] ")
        return answer is not None and answer.strip().lower() in ("y", "yes")

    async def secret(self, question: str) -> str | None:
        if not sys.stdin.isatty():
            return await self.readline(f"{question} ")
        import getpass

        return await asyncio.to_thread(getpass.getpass, f"{question} ")



EXIT_HANGUP = 128 + signal.SIGHUP  # the terminal was closed: as a shell reports it



SIGNALS = {"hangup": False}



def quiet_terminal() -> None:
    """After a hang-up the terminal is gone: writes to it would fail (EIO) and stop the
    loop before it wrote its status, so stdout and stderr go to /dev/null from now."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    except OSError:
        pass



def install_stop_signals(on_stop: Any) -> None:
    """Ctrl+C, TERM and a closed terminal (HUP) stop the program's tree and the loop,
    which writes INTERRUPTED. A second one during the grace period KILLs the trees at
    once (nothing is left running), gives the loop a moment to write its status, then
    exits whatever happens."""
    loop = asyncio.get_running_loop()
    count = {"n": 0}

    def handler(sig: int) -> None:
        if sig == signal.SIGHUP:
            if SIGNALS["hangup"]:
                return  # the shell and the kernel both send one: not a second Ctrl+C
            SIGNALS["hangup"] = True
            quiet_terminal()
        count["n"] += 1
        if count["n"] > 1:  # a second one: no more waiting
            from verifybot_tui.targets.local import kill_all_now

            kill_all_now()
            loop.call_later(3.0, os._exit, EXIT_HANGUP if SIGNALS["hangup"]
                            else EXIT_INTERRUPTED)
            return
        if sig != signal.SIGHUP:  # after a hangup nobody reads the terminal
            err("stopping: the running program and the loop (Ctrl+C again to kill it now)")
        on_stop(Status.INTERRUPTED)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, handler, sig)



async def close_all(*things: Any) -> None:
    for thing in things:
        try:
            await asyncio.wait_for(thing.close(), 15)
        except Exception as e:  # closing must not hide the run's own result
            err(f"while closing {getattr(thing, 'name', thing)}: {e}")

