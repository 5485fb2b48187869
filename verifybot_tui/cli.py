"""The ``verifybot`` command: the TUI by default, and the headless commands.

``run`` drives the same loop as the TUI, answering approvals on stdin (or
``--yes``), streaming program output live (stderr to stderr, in red on a
terminal) and exiting with DESIGN.md's codes. Textual and Playwright are only
imported by the commands that need them, so the headless ones start fast.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import difflib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from verifybot_tui import __version__
from verifybot_tui.core.ansi import one_line, sanitize, visible
from verifybot_tui.core.config import MAX_TIMEOUT, Config, check_llm_spec, load_config
from verifybot_tui.core.editor import NO_EDITOR, cannot_start, edit_files
from verifybot_tui.core.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
    EXIT_USAGE,
    ConfigError,
    VerifyBotError,
)
from verifybot_tui.core.events import (
    AnswerDone,
    AnswerText,
    ApprovalNeeded,
    CodeReady,
    Decision,
    FeedbackDecision,
    FeedbackReady,
    Finished,
    Judged,
    JudgeDecision,
    JudgementNeeded,
    Notice,
    Output,
    PermissionNeeded,
    PromptSent,
    RunFinished,
    RunStarted,
    SessionStarted,
    ThinkingText,
    VerdictReached,
)
from verifybot_tui.core.outcome import Status
from verifybot_tui.core.workspace import check_workspace

COMMANDS = ("run", "login", "probe", "extract", "history", "doctor", "selftest", "recipe",
            "config")


# -- argument parsing ------------------------------------------------------------


def _common(p: argparse.ArgumentParser, *, workspace: bool = True) -> None:
    p.add_argument("--config", metavar="PATH", help="config file (default: ./config.toml, "
                   "else the user config dir)")
    if workspace:
        p.add_argument("--workspace", metavar="DIR", help="where programs/, outputs/, raw_md/, "
                       "context/ and history.db live (default: [run] workspace)")


TARGET_HELP = "a [targets.NAME] table (default: [run] default_target, local)"
LLM_HELP = "an [llm.NAME] table, or replay:PATH (default: [run] default_llm, chatgpt)"
TRUST_HELP = ("trust an SSH host key seen for the first time, for scripts "
              "(default: show its fingerprint and ask)")


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


def build_parser(command: str | None) -> argparse.ArgumentParser:
    if command is None:
        p = argparse.ArgumentParser(
            prog="verifybot",
            description="VerifyBot: ask a chat LLM for a program, approve it, run it here or on "
                        "a Raspberry Pi, feed the errors back. Without a command: the TUI. "
                        f"Commands: {', '.join(COMMANDS)} (verifybot COMMAND --help).")
        p.add_argument("prompt", nargs="?",
                       help="a first prompt to send when the app starts (default: none)")
        p.add_argument("--target", metavar="NAME", help=TARGET_HELP)
        p.add_argument("--llm", metavar="NAME", help=LLM_HELP)
        p.add_argument("--version", action="version", version=f"verifybot {__version__}")
        _common(p)
        return p
    p = argparse.ArgumentParser(prog=f"verifybot {command}")
    if command == "recipe":
        from verifybot_tui.recipes_cli import add_args

        p.description = ("Task recipes: `recipe run FILE... [--parallel N] [--junit PATH] "
                         "[--json]`, `recipe new [SESSION]`.")
        add_args(p)
        return p
    _ARGS[command](p)
    _common(p, workspace=command not in ("login", "doctor", "config"))
    return p


def _run_args(p: argparse.ArgumentParser) -> None:
    p.description = "Run the verify loop headless for one prompt."
    p.add_argument("prompt", help="what the program should do")
    p.add_argument("--target", metavar="NAME", help=TARGET_HELP)
    p.add_argument("--llm", metavar="NAME", help=LLM_HELP)
    p.add_argument("--max-retries", type=int, metavar="N",
                   help="attempts after the first one (default: [run] max_retries, 3)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="seconds a program may run (default: [run] timeout, 30)")
    _running_flags(p, yes="accept every version and every install without asking "
                          "(default: ask on stdin)",
                   json="print the run record as JSON on stdout (default: off)")
    p.add_argument("--show-thinking", action="store_true",
                   help="print an API model's reasoning (extended thinking) dimmed on stderr "
                        "as it arrives, apart from the answer (default: off; the transcript "
                        "keeps it either way)")
    _verification_args(p)


def _running_flags(p: argparse.ArgumentParser, *, yes: str, json: str) -> None:
    """The switches of the commands that run a program (run, extract --run)."""
    p.add_argument("--yes", action="store_true", help=yes)
    p.add_argument("--json", action="store_true", help=json)
    p.add_argument("--trust-new-host", action="store_true", help=TRUST_HELP)


def _login_args(p: argparse.ArgumentParser) -> None:
    p.description = "Open a visible browser to log in to the chat site once."
    p.add_argument("--llm", metavar="NAME", help=LLM_HELP)
    p.add_argument("--timeout", type=float, default=600, metavar="S",
                   help="how long to wait for the login (default: 600)")


def _probe_args(p: argparse.ArgumentParser) -> None:
    p.description = "Print (and save as context/<target>.md) a target's context."
    p.add_argument("--target", metavar="NAME", help=TARGET_HELP)
    p.add_argument("--trust-new-host", action="store_true", help=TRUST_HELP)


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
    p.add_argument("--target", metavar="NAME", help=TARGET_HELP)
    _running_flags(p, yes="with --run: run without asking (default: ask on stdin)",
                   json="print the blocks as JSON (default: off)")


def _history_args(p: argparse.ArgumentParser) -> None:
    p.description = "List sessions and their attempts."
    p.add_argument("--json", action="store_true",
                   help="print the sessions as JSON (default: off)")


def _bridge_args(command: str) -> Callable[[argparse.ArgumentParser], None]:
    def add(p: argparse.ArgumentParser) -> None:
        from verifybot_tui.selftest import add_bridge_args

        add_bridge_args(p, command)
    return add


_ARGS = {"run": _run_args, "login": _login_args, "probe": _probe_args,
         "extract": _extract_args, "history": _history_args, "doctor": _bridge_args("doctor"),
         "selftest": _bridge_args("selftest"), "config": _config_args}


def _config(args: argparse.Namespace, *, writes: bool = False) -> Config:
    """The config with --workspace applied; a workspace that cannot work exits 2 here
    (``writes``: the command will write into it, so it must be writable)."""
    cfg = load_config(getattr(args, "config", None))
    ws = getattr(args, "workspace", None)
    if ws:
        cfg.run.workspace = str(Path(ws).expanduser().resolve())
    check_workspace(cfg.workspace, write=writes)  # a file or /proc: exit 2, every command
    return cfg


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
        _err(f"'{argv[0]}' is not a command; did you mean {meant}? "
             f"(verifybot {meant} --help). To send it as a prompt: verifybot -- '{argv[0]}'")
        return EXIT_USAGE
    parser = build_parser(command)
    try:
        args = parser.parse_args(argv[1:] if command else argv)
    except SystemExit as e:  # argparse exits 2 on usage errors, 0 on --help
        return int(e.code or 0)
    if command is None and (why := _needs_terminal()) is not None:
        _err(why)
        return EXIT_USAGE
    try:
        if command is None:
            return _tui(args)
        return asyncio.run(_COMMANDS[command](args))
    except VerifyBotError as e:
        _err(f"error: {e}")
        return e.exit_code
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_INTERRUPTED


# -- terminal helpers ----------------------------------------------------------------


def _err(text: str) -> None:
    print(f"verifybot: {text}", file=sys.stderr, flush=True)


def _colour(stream: TextIO, code: str, text: str) -> str:
    if stream.isatty() and not os.environ.get("NO_COLOR"):
        return f"\x1b[{code}m{text}\x1b[0m"
    return text


class _Stdin:
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


class _Printer:
    """Shows the loop's events on the terminal and answers its questions from stdin.

    The CLI's ``core.events.EventHandler``: one method per event.
    """

    def __init__(self, *, json_mode: bool, stdin: _Stdin, show_thinking: bool = False) -> None:
        self.stdin = stdin
        self.show_thinking = show_thinking
        self._thought = ""  # the reasoning of the current answer printed so far
        self._printed = 0  # how much of it is on stderr already
        self.info = sys.stderr
        # With --json, stdout carries only the record: the program's stdout goes to stderr.
        self.prog_out = sys.stderr if json_mode else sys.stdout

    def say(self, text: str) -> None:
        print(_colour(self.info, "2", f"[verifybot] {one_line(text)}"), file=self.info,
              flush=True)

    # -- core.events.EventHandler ------------------------------------------------------

    async def on_session_started(self, ev: SessionStarted) -> None:
        self.say(f"session {ev.session_id}: target {ev.target}, llm {ev.llm}; "
                 f"transcript {ev.transcript}")

    async def on_notice(self, ev: Notice) -> None:
        colour = {"warning": "33", "error": "31"}.get(ev.level, "2")
        print(_colour(self.info, colour, f"[verifybot] {one_line(ev.text)}"), file=self.info,
              flush=True)

    async def on_prompt_sent(self, ev: PromptSent) -> None:
        self._end_thinking()
        self._thought, self._printed = "", 0
        self.say(f"sending the {ev.kind} prompt ({len(ev.text.splitlines())} lines); "
                 "waiting for the answer")

    async def on_answer_text(self, ev: AnswerText) -> None:
        self._end_thinking()  # the CLI shows the answer's code, not the answer as it streams

    async def on_thinking_text(self, ev: ThinkingText) -> None:
        """With --show-thinking, the model's reasoning dimmed on stderr, marked as thinking,
        a line as soon as it is complete (an escape sequence split across two chunks is
        whole by then, so the sanitiser sees it whole); never on stdout, never the answer."""
        if not self.show_thinking:
            return  # the transcript keeps it, apart from the answer
        if not self._thought:
            print(_colour(self.info, "2", "[verifybot] thinking (not part of the answer):"),
                  file=self.info, flush=True)
        if not ev.text.startswith(self._thought[:self._printed]):
            self._printed = 0  # the backend restarted its reasoning: print it again
        self._thought = ev.text
        self._print_thinking(ev.text.rfind("\n") + 1)

    def _print_thinking(self, upto: int) -> None:
        if upto > self._printed:
            lines = visible(sanitize(self._thought[self._printed:upto], keep_colours=False))
            self.info.write(_colour(self.info, "2", lines.rstrip("\n")) + "\n")
            self.info.flush()
            self._printed = upto

    def _end_thinking(self) -> None:
        """The reasoning's last line (it has no newline) before anything else is said."""
        if self._thought and self.show_thinking:
            self._print_thinking(len(self._thought))

    async def on_answer_done(self, ev: AnswerDone) -> None:
        self._end_thinking()
        self.say(f"answer received ({len(ev.markdown)} characters)")

    async def on_code_ready(self, ev: CodeReady) -> None:
        for f, saved in zip(ev.files, ev.saved, strict=True):
            mark = " (runs)" if f.name == ev.entry else ""
            print(_colour(self.info, "1", f"--- {one_line(saved)}{mark} ---"), file=self.info)
            print(sanitize(f.content, keep_colours=False).rstrip("\n"), file=self.info)
        print(_colour(self.info, "1", "---"), file=self.info, flush=True)

    async def on_approval_needed(self, ev: ApprovalNeeded) -> None:
        ev.decision.set_result(await self.approve(ev))

    async def on_permission_needed(self, ev: PermissionNeeded) -> None:
        ev.answer.set_result(await self.stdin.confirm(ev.question))

    async def on_feedback_ready(self, ev: FeedbackReady) -> None:
        ev.decision.set_result(FeedbackDecision(True, ev.prompt))

    async def on_run_started(self, ev: RunStarted) -> None:
        self.say(f"running attempt {ev.attempt} on {ev.target}")

    async def on_output(self, ev: Output) -> None:
        if ev.stream == "stderr":
            sys.stderr.write(_colour(sys.stderr, "31", sanitize(ev.text)))
            sys.stderr.flush()
        else:
            self.prog_out.write(sanitize(ev.text))
            self.prog_out.flush()

    async def on_run_finished(self, ev: RunFinished) -> None:
        r = ev.result
        status = "timed out" if r.timed_out else f"exit status {r.exit_code}"
        self.say(f"{status} after {r.duration:.1f} s; output saved as {ev.output_file}")

    async def on_verdict_reached(self, ev: VerdictReached) -> None:
        v = ev.verdict
        mark = _colour(self.info, "32" if v.ok else "31", "PASS" if v.ok else "FAIL")
        print(f"[verifybot] {mark} attempt {ev.attempt}: {one_line(v.reason)}", file=self.info,
              flush=True)

    async def on_judged(self, ev: Judged) -> None:
        j = ev.judgement
        ok = j.verdict == "PASS"
        mark = _colour(self.info, "32" if ok else "33", f"JUDGE {j.line}")
        print(f"[verifybot] {mark} (attempt {ev.attempt}, judge {j.judge})", file=self.info,
              flush=True)

    async def on_judgement_needed(self, ev: JudgementNeeded) -> None:
        ev.decision.set_result(await self.judge_decision(ev))

    async def judge_decision(self, ev: JudgementNeeded) -> JudgeDecision:
        j = ev.judgement
        self.say(ev.reasons)
        if j is not None and j.verdict == "UNPARSABLE":
            print(sanitize(j.answer, keep_colours=False).rstrip("\n"), file=self.info)
        follow = j is not None and j.verdict != "UNPARSABLE"
        question = ("[v]erified, [f]ailure (sent back with a note), [s]top"
                    + (", Enter: as the judge says" if follow else "") + ": ")
        while True:
            answer = await self.stdin.readline(question)
            if answer is None:
                self.say("stdin is closed: " + ("following the judge" if follow else
                                                "sending it back as a failure"))
                return JudgeDecision("follow" if follow else "fail")
            choice = answer.strip().lower()[:1]
            if choice == "" and follow:
                return JudgeDecision("follow")
            if choice == "v":
                return JudgeDecision("accept")
            if choice == "s":
                return JudgeDecision("stop")
            if choice == "f":
                note = await self.stdin.readline("Note for the LLM (empty for none): ")
                return JudgeDecision("fail", note=(note or "").strip())
            self.say("answer v, f or s" + (" (or Enter)" if follow else ""))

    async def on_finished(self, ev: Finished) -> None:
        colour = "32" if ev.exit_code == EXIT_SUCCESS else "31"
        text = f"[verifybot] {ev.status}" + (f": {one_line(ev.message)}" if ev.message else "")
        print(_colour(self.info, colour, text), file=self.info, flush=True)

    async def approve(self, ev: ApprovalNeeded) -> Decision:
        files = {f.name: f.content for f in ev.files}
        edited: dict[str, str] = {}  # what the user changed, shown and confirmed first
        while True:
            what = "the edited version" if edited else f"attempt {ev.attempt}"
            answer = await self.stdin.readline(
                f"Run {what}? [a]ccept, [e]dit, [r]eject, [s]top: ")
            if answer is None:
                self.say("stdin is closed: stopping (use --yes to run without asking)")
                return Decision("stop")
            choice = answer.strip().lower()[:1]
            if choice == "a":
                return Decision("edit", files=edited) if edited else Decision("accept")
            if choice == "s":
                return Decision("stop")
            if choice == "r":
                note = await self.stdin.readline("Note for the LLM (empty for none): ")
                return Decision("reject", note=note or "")
            if choice == "e":
                try:
                    result = await asyncio.to_thread(edit_files, {**files, **edited},
                                                     subprocess.call)
                except OSError as e:
                    self.say(cannot_start(e))
                    continue
                if result is None:
                    self.say(f"{NO_EDITOR}, to edit")
                    continue
                edited = {name: text for name, text in result.items() if text != files[name]}
                # As in the app: the user sees what will run before it runs.
                self._show_diff(files, edited)
                continue
            self.say("answer a, e, r or s")

    def _show_diff(self, files: dict[str, str], edited: dict[str, str]) -> None:
        if not edited:
            self.say("no changes: the version as proposed")
            return
        for name, text in edited.items():
            for line in difflib.unified_diff(files[name].splitlines(), text.splitlines(),
                                             f"{name} (proposed)", f"{name} (edited)",
                                             lineterm=""):
                code = "32" if line.startswith("+") else "31" if line.startswith("-") else ""
                clean = sanitize(line, keep_colours=False)
                print(_colour(self.info, code, clean) if code else clean, file=self.info)
        self.info.flush()


# -- commands ------------------------------------------------------------------------


EXIT_HANGUP = 128 + signal.SIGHUP  # the terminal was closed: as a shell reports it
_signals = {"hangup": False}


def _quiet_terminal() -> None:
    """After a hang-up the terminal is gone: writes to it would fail (EIO) and stop the
    loop before it wrote its status, so stdout and stderr go to /dev/null from now."""
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    except OSError:
        pass


def _install_stop_signals(on_stop: Any) -> None:
    """Ctrl+C, TERM and a closed terminal (HUP) stop the program's tree and the loop,
    which writes INTERRUPTED. A second one during the grace period KILLs the trees at
    once (nothing is left running), gives the loop a moment to write its status, then
    exits whatever happens."""
    loop = asyncio.get_running_loop()
    count = {"n": 0}

    def handler(sig: int) -> None:
        if sig == signal.SIGHUP:
            if _signals["hangup"]:
                return  # the shell and the kernel both send one: not a second Ctrl+C
            _signals["hangup"] = True
            _quiet_terminal()
        count["n"] += 1
        if count["n"] > 1:  # a second one: no more waiting
            from verifybot_tui.targets.local import kill_all_now

            kill_all_now()
            loop.call_later(3.0, os._exit, EXIT_HANGUP if _signals["hangup"]
                            else EXIT_INTERRUPTED)
            return
        if sig != signal.SIGHUP:  # after a hangup nobody reads the terminal
            _err("stopping: the running program and the loop (Ctrl+C again to kill it now)")
        on_stop(Status.INTERRUPTED)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, handler, sig)


async def cmd_run(args: argparse.Namespace) -> int:
    cfg = _config(args, writes=True)  # first: bad config = no start
    from verifybot_tui.llm import make_llm
    from verifybot_tui.targets import choose_target, make_target
    from verifybot_tui.verify_setup import build_verification

    if args.max_retries is not None and args.max_retries < 0:
        raise ConfigError("--max-retries must be 0 or more")
    if args.timeout is not None and not 0 < args.timeout <= MAX_TIMEOUT:
        raise ConfigError(f"--timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds, "
                          f"got {args.timeout!r}")
    ws = cfg.workspace
    stdin = _Stdin()
    printer = _Printer(json_mode=args.json, stdin=stdin, show_thinking=args.show_thinking)
    target_name, why = choose_target(cfg, args.prompt, args.target)
    llm = make_llm(cfg, args.llm or cfg.run.default_llm, ws)
    target = make_target(cfg, target_name, ws, prompter=stdin,
                         trust_new_host=args.trust_new_host)
    if why:
        printer.say(why)
    try:
        verification = build_verification(
            cfg, llm_spec=args.llm or cfg.run.default_llm, judge=args.judge,
            expect=args.expect, criteria_file=args.criteria, workspace=ws)
    except BaseException:
        await _close(llm, target)
        raise
    try:
        return await _drive(args, cfg, llm, target, printer, args.prompt,
                            max_retries=args.max_retries, timeout=args.timeout,
                            verification=verification)
    finally:
        if verification.judge_llm is not None:
            await _close(verification.judge_llm)


async def _drive(args: argparse.Namespace, cfg: Config, llm: Any, target: Any,
                 printer: _Printer, prompt: str, **loop_args: Any) -> int:
    """Run the loop for one prompt with Ctrl+C handling; close everything; the exit code."""
    from verifybot_tui.core.history import History
    from verifybot_tui.core.loop import VerifyLoop, drain

    history = History(cfg.workspace)
    loop = VerifyLoop(config=cfg, llm=llm, target=target, history=history,
                      auto_accept=True if args.yes else None,
                      auto_install=True if args.yes else None, workspace=cfg.workspace,
                      **loop_args)
    _install_stop_signals(loop.stop)
    try:
        finished = await drain(loop.events(prompt), printer)
    finally:
        await _close(llm, target)
        history.close()
    if finished is None:
        return EXIT_FAILED
    if _signals["hangup"]:
        return EXIT_HANGUP  # stdout may be gone with the terminal: nothing more is printed
    if args.json:
        print(json.dumps(finished.record, indent=2))
    return finished.exit_code


async def _close(*things: Any) -> None:
    for thing in things:
        try:
            await asyncio.wait_for(thing.close(), 15)
        except Exception as e:  # closing must not hide the run's own result
            _err(f"while closing {getattr(thing, 'name', thing)}: {e}")


async def cmd_login(args: argparse.Namespace) -> int:
    cfg = _config(args)
    name = args.llm or cfg.run.default_llm
    check_llm_spec(cfg, name, replay=False)  # a replay has nothing to log in to
    if cfg.llm[name].kind != "browser":
        from verifybot_tui.core.config import key_env

        print(f"{name} is an API provider (kind {cfg.llm[name].kind}): it needs no login. "
              f"Its key is read from ${key_env(cfg.llm[name])}; `verifybot doctor` checks it.",
              file=sys.stderr)
        return EXIT_SUCCESS
    from verifybot_tui.doctor import LOGIN_STAMP, needs_display
    from verifybot_tui.llm.browser.chromium import profile_dir
    from verifybot_tui.llm.browser.login import login

    if why := needs_display():
        # A login needs a window the user can type into: say so before a browser fails.
        raise ConfigError(f"`verifybot login` opens a browser window, but {why}. Log in from "
                          "a desktop session (or over `ssh -X`), then use the same profile "
                          f"here: [llm.{name}] profile_dir = \"{profile_dir(cfg.llm[name])}\"")
    print(f"Opening {cfg.llm[name].url} in a browser window: log in there as you normally "
          f"do. The window closes by itself once the chat page shows (within "
          f"{args.timeout:g} s).", file=sys.stderr)
    await login(cfg.llm[name], cfg.workspace, timeout=args.timeout)
    profile = profile_dir(cfg.llm[name])
    with contextlib.suppress(OSError):
        (profile / LOGIN_STAMP).write_text(time.strftime("%Y-%m-%d %H:%M:%S\n"))
    print(f"Logged in to {name}; the profile {profile} keeps the login. Now ask away: "
          f"verifybot --llm {name}", file=sys.stderr)
    return EXIT_SUCCESS


async def cmd_probe(args: argparse.Namespace) -> int:
    from verifybot_tui.targets import make_target

    cfg = _config(args, writes=True)
    name = args.target or cfg.run.default_target
    target = make_target(cfg, name, cfg.workspace, prompter=_Stdin(),
                         trust_new_host=args.trust_new_host)
    try:
        await target.connect()
        text = await target.probe()
    finally:
        await _close(target)
    print(text)
    _err(f"saved as {cfg.workspace / 'context' / (name + '.md')}")
    return EXIT_SUCCESS


async def cmd_extract(args: argparse.Namespace) -> int:
    from verifybot_tui.core.extract import extract
    from verifybot_tui.llm.replay import parse_answers

    path = Path(args.file)
    limit_mb = _config(args).run.max_answer_mb
    try:
        if path.stat().st_size > limit_mb * 1024 * 1024:
            raise ConfigError(f"{path} is larger than [run] max_answer_mb = {limit_mb:g} "
                              "(no answer is that big); raise max_answer_mb to extract it")
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path} is not UTF-8 text (an invalid byte at offset {e.start}); "
                          "save it as UTF-8") from None
    # A raw_md transcript or a replay file holds '## Answer N' sections: the code
    # is in the answers, not in the prompts, outputs and saved files around them.
    answers = parse_answers(text)
    if answers and args.answer is not None:
        if not 1 <= args.answer <= len(answers):
            raise ConfigError(f"{path} holds answers 1 to {len(answers)}; "
                              f"--answer {args.answer} is not one of them")
        numbered = [(args.answer, answers[args.answer - 1])]
    elif answers:
        numbered = list(enumerate(answers, 1))
    else:
        if args.answer is not None:
            raise ConfigError(f"{path} has no '## Answer N' sections: it is one answer; "
                              "leave out --answer")
        numbered = [(0, text)]
    if args.run:
        n, answer = numbered[-1]
        return await _extract_run(args, path, answer, n)
    found = [(n, extract(answer)) for n, answer in numbered]
    if args.json:
        if answers:
            print(json.dumps([{"answer": n, **dataclasses.asdict(ex)} for n, ex in found],
                             indent=2))
        else:
            print(json.dumps(dataclasses.asdict(found[0][1]), indent=2))
    else:
        for n, ex in found:
            if n:
                print(f"=== answer {n} of {len(answers)} ===")
            _print_extraction(ex)
    return EXIT_SUCCESS if any(ex.programs for _, ex in found) else EXIT_FAILED


def _print_extraction(ex: Any) -> None:
    if not ex.blocks:
        print("no code blocks")
    for i, b in enumerate(ex.blocks, 1):
        state = "program" if b.runnable else f"not run: {b.reason}"
        print(f"--- block {i} (line {b.line}): {b.language or 'unknown'}, "
              f"{b.filename or 'no file name'}, {state} ---")
        print(b.code.rstrip("\n"))
    for note in ex.notes:
        print(f"note: {note}")
    if ex.timeout:
        print(f"TIMEOUT: {ex.timeout:g}")
    if ex.dependencies:
        print(f"DEPENDENCIES: {', '.join(ex.dependencies)}")


async def _extract_run(args: argparse.Namespace, path: Path, answer: str, n: int) -> int:
    """--run: the loop with this one answer and no retries, so nothing is done twice."""
    from verifybot_tui.llm.replay import ReplayLLM
    from verifybot_tui.targets import make_target

    cfg = _config(args, writes=True)
    ws = cfg.workspace
    stdin = _Stdin()
    printer = _Printer(json_mode=args.json, stdin=stdin)
    with tempfile.TemporaryDirectory(prefix="verifybot-extract-") as tmp:
        one = path
        if n:  # one answer of a transcript: the replay reads it as a whole file
            one = Path(tmp) / f"{path.stem}_answer_{n}.md"
            one.write_text(answer, encoding="utf-8")
        llm = ReplayLLM(one, whole_file=True)
        target = make_target(cfg, args.target or cfg.run.default_target, ws, prompter=stdin,
                             trust_new_host=args.trust_new_host)
        what = f"answer {n} of {path.name}" if n else path.name
        return await _drive(args, cfg, llm, target, printer, f"Run the code of {what}",
                            max_retries=0)


async def cmd_history(args: argparse.Namespace) -> int:
    from verifybot_tui.core.history import History, status_text
    from verifybot_tui.core.recorder import sweep

    cfg = _config(args)
    db = cfg.workspace / "history.db"
    if not db.exists():
        if args.json:
            print("[]")
        else:
            print(f"no history yet in {cfg.workspace}")
        return EXIT_SUCCESS
    history = History(cfg.workspace)
    try:
        sweep(history, cfg.workspace)  # a session whose process is gone is INTERRUPTED
        sessions = history.sessions()
        for s in sessions:
            s["attempts"] = history.attempts(s["id"])
    finally:
        history.close()
    if args.json:
        print(json.dumps(sessions, indent=2))
        return EXIT_SUCCESS
    for s in sessions:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s["started_at"]))
        print(one_line(f"#{s['id']} {when} {status_text(s):<12} {s['target']:<8} "
                       f"{s['prompt'][:60]!r}"))
        for a in s["attempts"]:
            files = ", ".join(a["files"])
            verdict = f"{a['verdict']}: {a['reason']}" if a["verdict"] else ""
            print(one_line(f"    attempt {a['n']}: {a['status']:<12} {files}  {verdict[:80]}"))
    return EXIT_SUCCESS


async def cmd_doctor(args: argparse.Namespace) -> int:
    from verifybot_tui.doctor import run_doctor, run_doctor_page

    if args.page:  # a saved page, offline: no config, no profile, no network
        site = args.site if isinstance(args.site, str) else "chatgpt"
        return await run_doctor_page(Path(args.page), site, as_json=args.json)
    try:
        cfg = _config(args)
    except ConfigError as e:
        print(f"FAIL config: {e}")
        return EXIT_USAGE
    if args.json:
        print("FAIL --json goes with --page FILE.html (the other doctor checks print lines)")
        return EXIT_USAGE
    if args.site:
        if isinstance(args.site, str):
            print(f"FAIL --site {args.site}: a site name goes with --page FILE.html; alone, "
                  f"--site probes the live site of --llm NAME")
            return EXIT_USAGE
        from verifybot_tui.llm.browser.site_probe import probe_site

        name = args.llm or cfg.run.default_llm
        check_llm_spec(cfg, name, replay=False)
        ask = None if args.yes else _Stdin().confirm
        return await probe_site(cfg.llm[name], cfg.workspace, confirm=ask)
    return await run_doctor(cfg)


async def cmd_selftest(args: argparse.Namespace) -> int:
    from verifybot_tui.selftest import run_selftest

    cfg = _config(args)
    return await run_selftest(cfg, args.llm or cfg.run.default_llm)


async def cmd_config(args: argparse.Namespace) -> int:
    from verifybot_tui.core.config_transfer import export_text, import_file

    if args.action == "import":
        if not args.path:
            raise ConfigError("config import needs the file to install: "
                              "verifybot config import PATH")
        dest, backup = import_file(Path(args.path).expanduser())
        _err(f"installed {args.path} as {dest}"
             + (f"; the old config is kept as {backup}" if backup else ""))
        return EXIT_SUCCESS
    text = export_text(_config(args))
    if not args.path:
        sys.stdout.write(text)
        return EXIT_SUCCESS
    out = Path(args.path).expanduser()
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    _err(f"wrote {out} (secrets are not in it: only the names of their variables)")
    return EXIT_SUCCESS


async def cmd_recipe(args: argparse.Namespace) -> int:
    from verifybot_tui.recipes_cli import cmd_recipe as run_recipe_command

    return await run_recipe_command(args, _config(args))


_COMMANDS = {"run": cmd_run, "login": cmd_login, "probe": cmd_probe, "extract": cmd_extract,
             "history": cmd_history, "doctor": cmd_doctor, "selftest": cmd_selftest,
             "recipe": cmd_recipe, "config": cmd_config}


def _tui(args: argparse.Namespace) -> int:
    cfg = _config(args, writes=True)
    from verifybot_tui.tui.app import VerifyBotApp

    app = VerifyBotApp(config=cfg, prompt=args.prompt,
                       target=args.target or cfg.run.default_target,
                       llm=args.llm or cfg.run.default_llm)
    _tui_hangup(app)
    app.run()
    if _signals["hangup"]:
        return EXIT_HANGUP
    return int(app.return_code or 0)


def _tui_hangup(app: Any) -> None:
    """A closed terminal (SIGHUP) ends the app as Ctrl+C ends `run`: the program's tree
    stopped, the session written as INTERRUPTED, exit 129 (Textual leaves HUP alone,
    and its default would kill VerifyBot with the program still running)."""

    async def hang_up() -> None:
        session = app.session
        loop = session.loop
        if loop is not None and loop.running:
            loop.stop(Status.INTERRUPTED)
            deadline = time.monotonic() + 10
            while loop.running and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
        app.exit(return_code=EXIT_HANGUP)

    def on_hup(signum: int, frame: Any) -> None:
        if _signals["hangup"]:
            return  # the shell and the kernel both send one
        _signals["hangup"] = True
        _quiet_terminal()
        # The handler runs on the main thread, which runs the app's event loop.
        asyncio.get_event_loop().call_soon_threadsafe(lambda: asyncio.ensure_future(hang_up()))

    signal.signal(signal.SIGHUP, on_hup)
