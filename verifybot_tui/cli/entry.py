"""The ``verifybot`` command's entry: the parser, and dispatch to the app or a command.

No arguments (or a prompt) start the TUI; a command name runs that headless
command (``cli.run``, ``cli.commands``). Textual and Playwright are only
imported by the commands that need them, so the headless ones start fast; a
mistyped command is caught here before it could be sent as a prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import importlib
import os
import shlex
import signal
import sqlite3
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from verifybot_tui import __version__
from verifybot_tui.cli.common import (
    EXIT_HANGUP,
    SIGNALS,
    check_prompt,
    config_for,
    kill_soon,
    quiet_terminal,
    start_watchdog,
)
from verifybot_tui.cli.options import last_options, shared
from verifybot_tui.cli.terminal import err
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
    EXIT_USAGE,
    VerifyBotError,
)
from verifybot_tui.core.base.outcome import Status

COMMANDS = ("run", "login", "probe", "extract", "history", "doctor", "selftest", "recipe",
            "config", "compare", "mcp")


# -- argument parsing ------------------------------------------------------------


def _verification_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--expect", action="append", default=[], metavar="KIND:SPEC",
                   help="a success criterion (repeatable): contains:TEXT, not:TEXT, "
                        "regex:RE, regex-whole:RE, exit:N, range:RE:LO..HI, "
                        "file:GLOB[:MINSIZE], no-stderr, duration:<=S, compiles-clean "
                        "(default: none; exit status 0 and sanity checks)")
    p.add_argument("--criteria", metavar="FILE",
                   help='a criteria TOML file: expect = ["KIND:SPEC", ...], sanity = true '
                        "(default: none)")
    p.add_argument("--judge", metavar="MODE",
                   help="who judges a passing run: off, same-chat, an [llm.NAME], or "
                        "replay:PATH (default: [run] judge)")


def _config_args(p: argparse.ArgumentParser) -> None:
    p.description = ("export: write the effective settings as TOML (no secrets); "
                     "import: validate a file and install it as the user config "
                     "(the old one is kept as a backup).")
    p.add_argument("action", choices=("export", "import"),
                   help="export the effective settings, or import a file (required)")
    p.add_argument("path", nargs="?", metavar="PATH",
                   help="export: the file to write (default: standard output); "
                        "import: the file to install")
    shared(p, "--trust")


def _app_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("prompt", nargs="?",
                   help="a first prompt to send when the app starts (default: none)")
    shared(p, "--target", "--llm")
    shared(p, "--trust", text="approve what files from others set that runs commands (a "
                              "board file's qemu or compiler, a recipe's risky flags) without "
                              "asking (default: the app shows each such file and asks)")
    shared(p, "--verbose", text="show every prompt in full, as sent (default: the app's last "
                                "choice; long prompts folded)")
    p.add_argument("--version", action="version", version=f"verifybot {__version__}")
    p.add_argument("--race", metavar="A,B[,C]",
                   help="race the prompt on these LLMs at once in the app: the first "
                        "VERIFIED wins, the others stop (default: off)")


def build_parser(command: str | None) -> argparse.ArgumentParser:
    if command is None:
        p = argparse.ArgumentParser(
            prog="verifybot",
            description="VerifyBot: ask a chat LLM for a program, approve it, run it here or on "
                        "a Raspberry Pi, feed the errors back. Without a command: the TUI. "
                        f"Commands: {', '.join(COMMANDS)} (verifybot COMMAND --help).")
        _app_args(p)
        last_options(p)
        return p
    p = argparse.ArgumentParser(prog=f"verifybot {command}")
    if command == "recipe":
        from verifybot_tui.cli.recipes import add_args

        p.description = ("Task recipes: `recipe run FILE... [--parallel N] [--junit PATH] "
                         "[--json]`, `recipe new [SESSION]`.")
        add_args(p)
        return p
    if command == "mcp":
        from verifybot_tui.cli.mcp import add_args as mcp_args

        mcp_args(p)
    elif command == "compare":
        from verifybot_tui.cli.compare.command import add_args as compare_args

        compare_args(p)
    else:
        _ARGS[command](p)
    last_options(p, workspace=command not in ("login", "doctor", "config"))
    return p


def _run_args(p: argparse.ArgumentParser) -> None:
    p.description = "Run the verify loop headless for one prompt."
    p.add_argument("prompt", nargs="?", default="",
                   help="what the program should do (with --resume: a follow-up, or "
                        "nothing to wait for the session's pending answer)")
    shared(p, "--target", "--llm")
    p.add_argument("--resume", type=int, metavar="N",
                   help="go on with history session N in its conversation: an answer that "
                        "was still being written when the wait ended is waited for again, "
                        "not asked again (default: a new session)")
    p.add_argument("--max-retries", type=int, metavar="N",
                   help="attempts after the first one (default: [run] max_retries, 3)")
    p.add_argument("--race", metavar="A,B[,C]",
                   help="send the prompt to these LLMs at once; the first VERIFIED wins and "
                        "the others are stopped (every version accepted; default: off)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds a program may run (default: [run] timeout, 30)")
    _running_flags(p, yes="accept every version without asking (not installs: "
                          "--install) (default: ask on stdin)",
                   json="print the run record as JSON on stdout (default: off)")
    p.add_argument("--show-thinking", action="store_true",
                   help="print an API model's reasoning (extended thinking) dimmed on stderr "
                        "as it arrives, apart from the answer (default: off; the transcript "
                        "keeps it either way)")
    shared(p, "--verbose", text="print each prompt and feedback text as it is sent to the "
                                "LLM, on stderr, escape sequences shown escaped (default: one "
                                "line per prompt; the transcript keeps them either way)")
    _verification_args(p)


def _running_flags(p: argparse.ArgumentParser, *, yes: str, json: str) -> None:
    """The switches of the commands that run a program (run, extract --run)."""
    shared(p, "--yes", text=yes)
    shared(p, "--json", text=json)
    shared(p, "--trust-new-host", "--trust", "--install")


def _login_args(p: argparse.ArgumentParser) -> None:
    p.description = "Open a visible browser to log in to the chat site once."
    shared(p, "--llm")
    p.add_argument("--timeout", type=float, default=600, metavar="S",
                   help="how long to wait for the login (default: 600)")


def _probe_args(p: argparse.ArgumentParser) -> None:
    p.description = "Print (and save as context/<target>.md) a target's context."
    shared(p, "--target", "--trust-new-host")


def _extract_args(p: argparse.ArgumentParser) -> None:
    p.description = ("Show the code blocks of a markdown answer; --run runs it once. "
                     "A raw_md transcript or a replay file shows each answer's code, "
                     "numbered.")
    p.add_argument("file", metavar="FILE.md",
                   help="one answer, a raw_md/ transcript or a replay file")
    p.add_argument("--answer", type=int, metavar="N",
                   help="of a transcript, only answer N (default: every answer; "
                        "with --run, the last)")
    p.add_argument("--run", action="store_true",
                   help="save and run the program once (default: only show it)")
    shared(p, "--target")
    _running_flags(p, yes="with --run: run without asking (default: ask on stdin)",
                   json="print the blocks as JSON (default: off)")


def _history_args(p: argparse.ArgumentParser) -> None:
    p.description = "List sessions and their attempts."
    shared(p, "--json", text="print the sessions as JSON (default: off)")
    p.add_argument("--compare", action="store_true",
                   help="list the comparisons (verifybot compare) and their cells instead "
                        "(default: the sessions)")


def _bridge_args(command: str) -> Callable[[argparse.ArgumentParser], None]:
    def add(p: argparse.ArgumentParser) -> None:
        from verifybot_tui.cli.selftest import add_bridge_args

        add_bridge_args(p, command)
    return add


_ARGS = {"run": _run_args, "login": _login_args, "probe": _probe_args,
         "extract": _extract_args, "history": _history_args, "doctor": _bridge_args("doctor"),
         "selftest": _bridge_args("selftest"), "config": _config_args}


def _absolute_replay(args: argparse.Namespace) -> None:
    """``--llm replay:PATH`` (and ``--judge``) relative to where the command runs, made
    absolute: history keeps it, and `recipe new` run from another folder must still
    find the file (it writes it relative to the recipe's own folder)."""
    for key in ("llm", "judge"):
        spec = getattr(args, key, None)
        if isinstance(spec, str) and spec.startswith("replay:"):
            path = Path(spec.removeprefix("replay:")).expanduser()
            if not path.is_absolute():
                setattr(args, key, f"replay:{Path.cwd() / path}")


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `verifybot history | head`: the reader had enough. Point stdout at
        # /dev/null so the interpreter's last flush cannot complain either.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_SUCCESS


def _typo(word: str) -> str | None:
    """The command a one-word first argument was probably meant to be."""
    if not word or word.startswith("-") or any(c.isspace() for c in word):
        return None
    close = difflib.get_close_matches(word.lower(), COMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None


def _needs_terminal() -> str | None:
    """Why the TUI cannot start here, or None: it needs a terminal on both ends."""
    missing = [name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout))
               if stream is None or not stream.isatty()]
    if not missing:
        return None
    what = "is not a terminal" if len(missing) == 1 else "are not terminals"
    return (f"the app needs a terminal, but {' and '.join(missing)} {what}. "
            "For scripts and pipes use `verifybot run PROMPT` (see verifybot run --help).")


def _main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in COMMANDS else None
    if command is None and argv and (meant := _typo(argv[0])) is not None:
        # A mistyped command must not become a prompt sent to the chat site.
        err(f"'{argv[0]}' is not a command; did you mean: verifybot "
            f"{shlex.join([meant, *argv[1:]])} (verifybot {meant} --help)? To send it as a "
            f"prompt: verifybot -- {shlex.quote(' '.join(argv))}")
        return EXIT_USAGE
    parser = build_parser(command)
    try:
        args = parser.parse_args(argv[1:] if command else argv)
    except SystemExit as e:  # argparse exits 2 on usage errors, 0 on --help
        return int(e.code or 0)
    _absolute_replay(args)
    if command is None and (why := _needs_terminal()) is not None:
        err(why)
        return EXIT_USAGE
    try:
        if command is None:
            return _tui(args)
        module, name = _COMMANDS[command]
        command_fn: Callable[[argparse.Namespace], Coroutine[Any, Any, int]] = getattr(
            importlib.import_module(module), name)
        code = asyncio.run(command_fn(args))
        _ignore_late_signals()
        return code
    except VerifyBotError as e:
        err(f"error: {e}")
        return e.exit_code
    except KeyboardInterrupt:
        err("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        raise  # the reader of our stdout went away (`| head`): main() ends quietly
    except (OSError, sqlite3.Error) as e:  # a full disk, a device that refuses a write
        err(f"error: {_disk_error(e)}. What was saved before is kept; free some space (or "
            "fix the file's permissions) and run again")
        return EXIT_FAILED


# Where each command lives, imported when it runs: the app's start (and every other
# command) skips the modules of the commands it does not run.
_COMMANDS = {"run": ("verifybot_tui.cli.run", "cmd_run"),
             "extract": ("verifybot_tui.cli.run", "cmd_extract"),
             **{name: ("verifybot_tui.cli.commands", f"cmd_{name}")
                for name in ("login", "probe", "history", "doctor", "selftest", "recipe",
                             "config")},
             "compare": ("verifybot_tui.cli.compare", "cmd_compare"),
             "mcp": ("verifybot_tui.cli.mcp", "cmd_mcp")}


def _ignore_late_signals() -> None:
    """The command is done and its status written: a stop signal now has nothing left to
    stop. Python resets its own handlers to the default (die by the signal) while it
    shuts down, so one arriving then would end the process by that signal instead of
    the exit code; ignored, it leaves the exit code as it is."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)


def _disk_error(e: BaseException) -> str:
    if isinstance(e, OSError):
        where = f" ({e.filename})" if e.filename else ""
        return f"cannot write{where}: {e.strerror or e}"
    return f"the history database: {e}"


def _tui(args: argparse.Namespace) -> int:
    if args.prompt is not None:
        check_prompt(args.prompt, "verifybot")
    cfg = config_for(args, writes=True)
    from verifybot_tui.tui.app import VerifyBotApp

    if args.race and not args.prompt:
        from verifybot_tui.core.base.errors import ConfigError

        raise ConfigError("--race A,B needs a prompt: verifybot \"PROMPT\" --race A,B")
    app = VerifyBotApp(config=cfg, prompt=None if args.race else args.prompt,
                       target=args.target or cfg.run.default_target,
                       llm=args.llm or cfg.run.default_llm, trust=args.trust)
    if args.race:
        app.initial_race = (args.prompt, args.race)
    if args.verbose:  # this start only: the palette's choice is what is remembered
        app.ui_state["verbose_prompts"] = True
    _tui_hangup(app)
    app.run()
    if SIGNALS["hangup"]:
        return EXIT_HANGUP
    return int(app.return_code or 0)


def _tui_hangup(app: Any) -> None:
    """A closed terminal (SIGHUP), SIGTERM or a SIGINT from outside end the app as Ctrl+C
    ends `run`: the program's tree stopped, the session written as INTERRUPTED, exit 129
    (HUP) or 130, within 2 s whatever the app is doing (the stop watchdog); a second
    signal kills at once. Textual leaves these signals alone, and Python's default for
    TERM would kill VerifyBot with the program still running."""
    count = {"n": 0}

    def code() -> int:
        return EXIT_HANGUP if SIGNALS["hangup"] else EXIT_INTERRUPTED

    async def stop_and_exit() -> None:
        session = app.session
        loop = session.loop
        if loop is not None and loop.running:
            loop.stop(Status.INTERRUPTED)
            deadline = time.monotonic() + 10
            while loop.running and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        app.exit(return_code=code())

    def on_signal(signum: int, frame: Any) -> None:
        if signum == signal.SIGHUP:
            if SIGNALS["hangup"]:
                return  # the shell and the kernel both send one
            SIGNALS["hangup"] = True
            quiet_terminal()
        count["n"] += 1
        if count["n"] > 1:
            kill_soon(code())
            return
        start_watchdog(code)
        # The handler runs on the main thread, which runs the app's event loop.
        asyncio.get_event_loop().call_soon_threadsafe(
            lambda: asyncio.ensure_future(stop_and_exit()))

    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
