"""What every command shares: the config with --workspace (and a folder's config.toml
approved first), the output files, and the stop signals.

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
import time
from pathlib import Path
from typing import Any

from verifybot_tui.cli.terminal import Stdin, err
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
    explicit = getattr(args, "config", None)
    cfg = None
    if not explicit:  # --config FILE is the user's own act: nothing to ask
        from verifybot_tui.cli.approval import folder_config

        cfg = folder_config(bool(getattr(args, "trust", False)))
    if cfg is None:
        cfg = load_config(explicit)
    # From here on no secret is in this process's environment (nor in /proc/PID/environ),
    # so nothing started later inherits one; VerifyBot reads them with secret_env.
    seal_environment(cfg)
    if getattr(args, "install", False):  # the user's consent to installing, for this run
        cfg.run.install = True
    ws = getattr(args, "workspace", None)
    if ws:
        cfg.run.workspace = str(Path(ws).expanduser().resolve())
    check_workspace(cfg.workspace, write=writes)  # a file or /proc: exit 2, every command
    return cfg


def output_path(value: str, option: str) -> Path:
    """Where --junit or -o writes: a folder, or a folder that does not exist, is a usage
    error (exit 2) before anything runs, not a traceback after it."""
    path = Path(value).expanduser()
    if path.is_dir():
        raise ConfigError(f"{option} {value}: is a folder; give a file name, e.g. "
                          f"{path / 'report.xml'}")
    parent = path.parent
    if not parent.is_dir():
        raise ConfigError(f"{option} {value}: the folder {parent} does not exist; create it "
                          "or give another path")
    return path


def write_output(path: Path, text: str, option: str) -> None:
    """Write a report or a recipe; a full disk or a device that refuses is a message."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise ConfigError(f"{option} {path}: cannot write it: {e.strerror or e}; "
                          "give another path (what ran is kept in the workspace)") from None


def check_prompt(prompt: str, command: str) -> None:
    """A blank prompt is a usage error (exit 2), before anything is sent or recorded."""
    if not prompt.strip():
        raise ConfigError(f"the prompt is empty: say what the program should do, e.g. "
                          f"{command} \"print the first 10 prime numbers\"")


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


STOP_DEADLINE = 1.8  # seconds from the first stop signal to the exit, whatever runs
_KILL_AT = 1.2  # ... and to KILLing the trees, so the loop can still write its status


def install_stop_signals(on_stop: Any, stdin: Stdin | None = None) -> None:
    """Ctrl+C, TERM and a closed terminal (HUP) stop the program's tree and the loop,
    which writes INTERRUPTED; a question waiting on stdin ends at once and reads nothing
    more. The process ends within 2 s whatever it is doing: a watchdog thread KILLs the
    trees at 1.2 s and exits at 1.8 s if the loop has not finished by then. A second
    signal KILLs the trees at once and exits within half a second.

    The handlers are Python's own (``signal.signal``), not the event loop's: they run
    in the main thread between two bytecodes even when the event loop is busy, and
    hand the stop to the loop with ``call_soon_threadsafe``."""
    loop = asyncio.get_running_loop()
    count = {"n": 0}

    def code() -> int:
        return EXIT_HANGUP if SIGNALS["hangup"] else EXIT_INTERRUPTED

    def handler(sig: int, frame: Any = None) -> None:
        if sig == signal.SIGHUP:
            if SIGNALS["hangup"]:
                return  # the shell and the kernel both send one: not a second Ctrl+C
            SIGNALS["hangup"] = True
            quiet_terminal()
        count["n"] += 1
        if count["n"] > 1:  # a second one: no more waiting
            kill_soon(code())
            return
        if sig != signal.SIGHUP:  # after a hangup nobody reads the terminal
            err("stopping: the running program and the loop (Ctrl+C again to kill it now)")
        if stdin is not None:
            stdin.stop()
        start_watchdog(code)
        try:
            loop.call_soon_threadsafe(on_stop, Status.INTERRUPTED)
        except RuntimeError:  # the loop has closed: nothing left to stop but us
            exit_now(code())

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


def kill_soon(code: int) -> None:
    """A second stop: every program tree KILLed at once; the loop, no longer waiting
    for it, writes its status in a moment, and the process ends within half a second
    whatever happens."""
    from verifybot_tui.targets.containment.tree import kill_all_now

    kill_all_now()

    def later() -> None:
        time.sleep(0.5)
        exit_now(code)

    threading.Thread(target=later, name="verifybot-second-stop", daemon=True).start()


def exit_now(code: int) -> None:
    """KILL every program tree of ours and leave, without waiting for anything."""
    from verifybot_tui.targets.containment.tree import kill_all_now

    kill_all_now()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def start_watchdog(code: Any) -> None:
    """The 2 s promise kept even when the loop is slow to finish: a daemon thread."""

    def watch() -> None:
        time.sleep(_KILL_AT)
        from verifybot_tui.targets.containment.tree import kill_all_now

        kill_all_now()
        time.sleep(STOP_DEADLINE - _KILL_AT)
        err("the loop did not finish in time: exiting now")
        exit_now(code())

    threading.Thread(target=watch, name="verifybot-stop-watchdog", daemon=True).start()


async def close_all(*things: Any) -> None:
    for thing in things:
        try:
            await asyncio.wait_for(thing.close(), 15)
        except Exception as e:  # closing must not hide the run's own result
            err(f"while closing {getattr(thing, 'name', thing)}: {e}")

