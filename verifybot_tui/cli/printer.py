"""The ``run`` command's side of the loop: its events printed, its questions asked.

``run`` answers approvals on stdin (or ``--yes``) and streams program output live
(stderr to stderr, in red on a terminal); ``--json`` prints one record at the end.
This is the CLI's ``core.loop.events.EventHandler``, as the TUI's loop controller
is the app's.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import subprocess
import sys
from typing import TypeVar

from verifybot_tui.cli.terminal import Stdin, colour
from verifybot_tui.core.answers.editor import NO_EDITOR, cannot_start, edit_files
from verifybot_tui.core.base.ansi import (
    PROGRAM_MARK,
    imitates_verifybot,
    may_imitate_verifybot,
    one_line,
    sanitize,
    visible,
)
from verifybot_tui.core.base.errors import (
    EXIT_SUCCESS,
)
from verifybot_tui.core.loop import events

T = TypeVar("T")


_HOLD_MAX = 64  # characters of a line's start held back to see whether it imitates ours


class _Marker:
    """Marks the program's lines that start like VerifyBot's own (``[verifybot]
    VERIFIED``) with ``[program]``, on the stream they came on, as they stream: the
    start of a line that could still become one is held back until it can be told."""

    def __init__(self) -> None:
        self.at_start = True
        self.held = ""

    def feed(self, text: str) -> str:
        text, self.held = self.held + text, ""
        out: list[str] = []
        while text:
            if self.at_start:
                end = min((i for i in (text.find("\n"), text.find("\r")) if i >= 0),
                          default=-1)
                head = text if end < 0 else text[:end]
                if end < 0 and len(head) < _HOLD_MAX and may_imitate_verifybot(head):
                    self.held = text
                    break
                if imitates_verifybot(head):
                    out.append(PROGRAM_MARK)
            cut = min((i for i in (text.find("\n"), text.find("\r")) if i >= 0), default=-1)
            if cut < 0:
                out.append(text)
                self.at_start = False
                break
            out.append(text[:cut + 1])
            text = text[cut + 1:]
            self.at_start = True
        return "".join(out)

    def end(self) -> str:
        """The run ended: what was held back, marked if it imitates."""
        held, self.held, self.at_start = self.held, "", True
        return (PROGRAM_MARK if imitates_verifybot(held) else "") + held


def _answer(fut: asyncio.Future[T], value: T) -> None:
    """Answer a question of the loop, unless a stop has ended it meanwhile."""
    if not fut.done():
        fut.set_result(value)


# An escape sequence begun but not finished at the end of a chunk (CSI, or a lone ESC):
# held for the next chunk, within a bound (a stray ESC holds back no more than this).
_CUT_ESCAPE = re.compile(r"\x1b(?:\[[\x30-\x3f]{0,16}[\x20-\x2f]{0,4})?\Z")


class Printer:
    """Shows the loop's events on the terminal and answers its questions from stdin.

    The CLI's ``core.loop.events.EventHandler``: one method per event.
    """

    def __init__(self, *, json_mode: bool, stdin: Stdin, show_thinking: bool = False,
                 verbose: bool = False) -> None:
        self.stdin = stdin
        self.show_thinking = show_thinking
        self.verbose = verbose  # --verbose: every prompt's text as sent
        self._thought = ""  # the reasoning of the current answer printed so far
        self._printed = 0  # how much of it is on stderr already
        self.info = sys.stderr
        # With --json, stdout carries only the record: the program's stdout goes to stderr.
        self.prog_out = sys.stderr if json_mode else sys.stdout
        self._marks = {"stdout": _Marker(), "stderr": _Marker()}
        self._held: dict[str, str] = {}  # an escape sequence cut by the end of a chunk

    def say(self, text: str) -> None:
        print(colour(self.info, "2", f"[verifybot] {one_line(text)}"), file=self.info,
              flush=True)

    # -- core.loop.events.EventHandler ------------------------------------------------------

    async def on_session_started(self, ev: events.SessionStarted) -> None:
        self.say(f"session {ev.session_id}: target {ev.target}, llm {ev.llm}; "
                 f"transcript {ev.transcript}")

    async def on_notice(self, ev: events.Notice) -> None:
        code = {"warning": "33", "error": "31"}.get(ev.level, "2")
        print(colour(self.info, code, f"[verifybot] {one_line(ev.text)}"), file=self.info,
              flush=True)

    async def on_prompt_sent(self, ev: events.PromptSent) -> None:
        self._end_thinking()
        self._thought, self._printed = "", 0
        self.say(f"sending the {ev.kind} prompt ({len(ev.text.splitlines())} lines); "
                 "waiting for the answer")
        if self.verbose:
            self._print_prompt(ev)

    def _print_prompt(self, ev: events.PromptSent) -> None:
        """--verbose: the prompt exactly as sent, each line behind a bar, escapes shown
        escaped (it quotes program output); on stderr, apart from the program's output."""
        print(colour(self.info, "2", f"[verifybot] the {ev.kind} prompt as sent "
                                     f"(attempt {ev.attempt}):"), file=self.info)
        shown = visible(sanitize(ev.text, keep_colours=False))
        for line in shown.splitlines() or [""]:
            print(colour(self.info, "2", "│ ") + line, file=self.info)
        print(colour(self.info, "2", "[verifybot] end of the prompt"), file=self.info,
              flush=True)

    async def on_answer_text(self, ev: events.AnswerText) -> None:
        self._end_thinking()  # the CLI shows the answer's code, not the answer as it streams

    async def on_thinking_text(self, ev: events.ThinkingText) -> None:
        """With --show-thinking, the model's reasoning dimmed on stderr, marked as thinking,
        a line as soon as it is complete (an escape sequence split across two chunks is
        whole by then, so the sanitiser sees it whole); never on stdout, never the answer."""
        if not self.show_thinking:
            return  # the transcript keeps it, apart from the answer
        if not self._thought:
            print(colour(self.info, "2", "[verifybot] thinking (not part of the answer):"),
                  file=self.info, flush=True)
        if not ev.text.startswith(self._thought[:self._printed]):
            self._printed = 0  # the backend restarted its reasoning: print it again
        self._thought = ev.text
        self._print_thinking(ev.text.rfind("\n") + 1)

    def _print_thinking(self, upto: int) -> None:
        if upto > self._printed:
            lines = visible(sanitize(self._thought[self._printed:upto], keep_colours=False))
            self.info.write(colour(self.info, "2", lines.rstrip("\n")) + "\n")
            self.info.flush()
            self._printed = upto

    def _end_thinking(self) -> None:
        """The reasoning's last line (it has no newline) before anything else is said."""
        if self._thought and self.show_thinking:
            self._print_thinking(len(self._thought))

    async def on_answer_done(self, ev: events.AnswerDone) -> None:
        self._end_thinking()
        self.say(f"answer received ({len(ev.markdown)} characters)")

    async def on_code_ready(self, ev: events.CodeReady) -> None:
        for f, saved in zip(ev.files, ev.saved, strict=True):
            how = ev.how.get(f.name, "")
            mark = " (runs)" if f.name == ev.entry else ""
            mark += {"carried": " (unchanged, carried from the last run)", "whole": "",
                     "": "", "renamed": " (renamed)"}.get(how, f" (edited: {how})")
            print(colour(self.info, "1", f"--- {one_line(saved)}{mark} ---"), file=self.info)
            if how != "carried":  # shown when it came; the F4 of the app shows the tree
                print(sanitize(f.content, keep_colours=False).rstrip("\n"), file=self.info)
        print(colour(self.info, "1", "---"), file=self.info, flush=True)

    async def on_approval_needed(self, ev: events.ApprovalNeeded) -> None:
        _answer(ev.decision, await self.approve(ev))

    async def on_permission_needed(self, ev: events.PermissionNeeded) -> None:
        _answer(ev.answer, await self.stdin.confirm(ev.question))

    async def on_feedback_ready(self, ev: events.FeedbackReady) -> None:
        _answer(ev.decision, events.FeedbackDecision(True, ev.prompt))

    async def on_run_started(self, ev: events.RunStarted) -> None:
        self._held.clear()
        self.say(f"running attempt {ev.attempt} on {ev.target}")

    async def on_output(self, ev: events.Output) -> None:
        if ev.stream == "note":  # VerifyBot's own line about the run (a farm's place)
            self.say(ev.text)
            return
        text = self._whole(ev.stream, ev.text)
        self._write(ev.stream, self._marks["stderr" if ev.stream == "stderr" else "stdout"]
                    .feed(sanitize(text)))

    def _whole(self, stream: str, text: str) -> str:
        """The chunk with the escape sequence the last one ended in, and without the one
        it ends in: a UART's bytes come a few at a time, and ``\033[31m`` cut after
        ``\033[3`` was sanitised away as a broken sequence, leaving ``1m``."""
        text = self._held.pop(stream, "") + text
        cut = _CUT_ESCAPE.search(text)
        if cut:
            self._held[stream] = cut.group(0)
            text = text[:cut.start()]
        return text

    def _write(self, stream: str, text: str) -> None:
        if not text:
            return
        if stream == "stderr":
            sys.stderr.write(colour(sys.stderr, "31", text))
            sys.stderr.flush()
        else:
            self.prog_out.write(text)
            self.prog_out.flush()

    def _end_output(self) -> None:
        for stream, marker in self._marks.items():
            self._write(stream, marker.end())

    async def on_run_finished(self, ev: events.RunFinished) -> None:
        self._end_output()
        r = ev.result
        status = r.ended
        self.say(f"{status} after {r.duration:.1f} s; output saved as {ev.output_file}")

    async def on_verdict_reached(self, ev: events.VerdictReached) -> None:
        v = ev.verdict
        mark = colour(self.info, "32" if v.ok else "31", "PASS" if v.ok else "FAIL")
        print(f"[verifybot] {mark} attempt {ev.attempt}: {one_line(v.reason)}", file=self.info,
              flush=True)

    async def on_judged(self, ev: events.Judged) -> None:
        j = ev.judgement
        ok = j.verdict == "PASS"
        mark = colour(self.info, "32" if ok else "33", f"JUDGE {one_line(j.line)}")
        print(f"[verifybot] {mark} (attempt {ev.attempt}, judge {one_line(j.judge)})",
              file=self.info,
              flush=True)

    async def on_judgement_needed(self, ev: events.JudgementNeeded) -> None:
        _answer(ev.decision, await self.judge_decision(ev))

    async def judge_decision(self, ev: events.JudgementNeeded) -> events.JudgeDecision:
        j = ev.judgement
        self.say(ev.reasons)
        if j is not None and j.verdict == "UNPARSABLE":
            print(sanitize(j.answer, keep_colours=False).rstrip("\n"), file=self.info)
        follow = j is not None and j.verdict != "UNPARSABLE"
        question = ("[v]erified, [f]ailure (sent back with a note), [s]top"
                    + (", Enter: as the judge says" if follow else "") + ": ")
        while True:
            answer = await self.stdin.readline(question)
            if answer is None and self.stdin.stopped:
                return events.JudgeDecision("stop")
            if answer is None:
                self.say("stdin is closed: " + ("following the judge" if follow else
                                                "sending it back as a failure"))
                return events.JudgeDecision("follow" if follow else "fail")
            choice = answer.strip().lower()[:1]
            if choice == "" and follow:
                return events.JudgeDecision("follow")
            if choice == "v":
                return events.JudgeDecision("accept")
            if choice == "s":
                return events.JudgeDecision("stop")
            if choice == "f":
                note = await self.stdin.readline("Note for the LLM (empty for none): ")
                return events.JudgeDecision("fail", note=(note or "").strip())
            self.say("answer v, f or s" + (" (or Enter)" if follow else ""))

    async def on_finished(self, ev: events.Finished) -> None:
        self._end_output()
        code = "32" if ev.exit_code == EXIT_SUCCESS else "31"
        text = f"[verifybot] {ev.status}" + (f": {one_line(ev.message)}" if ev.message else "")
        print(colour(self.info, code, text), file=self.info, flush=True)

    async def approve(self, ev: events.ApprovalNeeded) -> events.Decision:
        files = {f.name: f.content for f in ev.files}
        edited: dict[str, str] = {}  # what the user changed, shown and confirmed first
        while True:
            what = "the edited version" if edited else f"attempt {ev.attempt}"
            answer = await self.stdin.readline(
                f"Run {what}? [a]ccept, [e]dit, [r]eject, [s]top: ")
            if answer is None and self.stdin.stopped:
                return events.Decision("stop")
            if answer is None:
                self.say("stdin is closed: stopping (use --yes to run without asking)")
                return events.Decision("stop")
            choice = answer.strip().lower()[:1]
            if choice == "a":
                return (events.Decision("edit", files=edited) if edited
                        else events.Decision("accept"))
            if choice == "s":
                return events.Decision("stop")
            if choice == "r":
                note = await self.stdin.readline("Note for the LLM (empty for none): ")
                return events.Decision("reject", note=note or "")
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
                print(colour(self.info, code, clean) if code else clean, file=self.info)
        self.info.flush()

