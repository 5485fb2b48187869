"""Everything a session writes down: history rows, the transcript, the run record.

The loop says what happened (a prompt went out, the user rejected attempt 2, a
run was judged); the recorder decides where that goes. One owner for every
write keeps history.db, raw_md/ and outputs/ telling the same story, and keeps
the loop's steps about the conversation rather than bookkeeping.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifybot_tui.core.base import chat_text
from verifybot_tui.core.base.ansi import visible
from verifybot_tui.core.base.errors import VerifyBotError
from verifybot_tui.core.base.outcome import AttemptState, Outcome, Status
from verifybot_tui.core.base.ports import ProgramFile, RunResult
from verifybot_tui.core.loop.events import Decision, JudgeDecision
from verifybot_tui.core.store.history import History
from verifybot_tui.core.store.transcript import Transcript, wrap_fence
from verifybot_tui.core.store.workspace import Workspace, create_private, slugify

if TYPE_CHECKING:  # types only: the app's first screen loads no extraction or checks
    from verifybot_tui.core.answers.extract import Extraction
    from verifybot_tui.core.verify.criterion import Check
    from verifybot_tui.core.verify.llm_judge import Judgement
    from verifybot_tui.core.verify.sanity import Hit
    from verifybot_tui.core.verify.verdict import Verdict


class SessionRecorder:
    """The written account of one session (one prompt and its attempts)."""

    def __init__(self, history: History, workspace: Workspace) -> None:
        self.history = history
        self.workspace = workspace
        self.session_id = 0
        self.slug = ""
        self.prompt = ""
        self.prompts = 0  # prompts sent in this session, a resumed one's included
        self.started = time.time()
        self.conversation_url: str | None = None
        self.model = ""  # the model that wrote the last answer ("": not named)
        self.criteria: list[str] = []  # the session's success criteria (KIND:SPEC)
        self.judge = "off"  # who judged passing runs
        # The loop's limits, so `recipe new` can write them back.
        self.max_retries: int | None = None
        self.timeout: float | None = None
        self.attempts: list[dict[str, Any]] = []  # the run record's view of each attempt
        self._attempt_id = 0
        self._reached = False  # llm_answered() already stored
        self._transcript: Transcript | None = None
        self.max_output_bytes = 64 * 1024 * 1024  # [run] max_output_mb, set by the loop
        self.via = ""  # "mcp": an agent started the session through `verifybot mcp`

    # -- opening and closing ----------------------------------------------------

    def sweep_interrupted(self) -> None:
        """Sessions whose process died mid-run: marked INTERRUPTED, with a note (what
        their programs left running is killed by the local target on connect)."""
        sweep(self.history, self.workspace.root)

    def start(self, prompt: str, *, target: str, llm: str) -> None:
        self.prompt, self.slug = prompt, slugify(prompt)
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self.started))
        transcript = Transcript.create_new(self.workspace.raw_md, f"{stamp}_{self.slug}", ".md")
        self.session_id = self.history.start_session(
            slug=self.slug, prompt=prompt, target=target, llm=llm,
            transcript=str(transcript.path))
        self._open(transcript.path, target=target, llm=llm, resumed=False, opened=transcript)

    def resume(self, session_id: int, prompt: str, *, target: str, llm: str) -> int:
        """Reopen a finished session; return how many attempts it already made."""
        row = self.history.session(session_id)
        if row is None:
            raise VerifyBotError(
                f"there is no session {session_id} in {self.workspace.db_path}")
        self.session_id, self.slug = session_id, row["slug"]
        self.prompt = prompt or row["prompt"]  # resumed to wait for a pending answer
        path = Path(row["transcript"] or self.workspace.raw_md / f"resumed_{self.slug}.md")
        self.history.reopen_session(session_id)
        self.prompts = len(self.history.prompts(session_id))
        self._open(path, target=target, llm=llm, resumed=True)
        return len(self.history.attempts(session_id))

    def _open(self, path: Path, *, target: str, llm: str, resumed: bool,
              opened: Transcript | None = None) -> None:
        self._transcript = opened or Transcript(path)
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started))
        self.tr.write(f"\n# VerifyBot session {self.session_id}: {_one_line(self.prompt)}\n\n"
                      f"- started: {when}\n- target: {target}\n- llm: {llm}\n"
                      f"- workspace: {self.workspace.root}\n"
                      f"- resumed: {'yes' if resumed else 'no'}\n"
                      + (f"- via: {self.via}\n" if self.via else ""), sync=True)

    @property
    def tr(self) -> Transcript:
        assert self._transcript is not None, "start() or resume() first"
        return self._transcript

    @property
    def transcript_path(self) -> Path:
        return self.tr.path

    def session_row(self) -> dict[str, Any]:
        return self.history.session(self.session_id) or {}

    def internal_error(self, trace: str) -> None:
        self.tr.block("Internal error", trace, "text")

    def finish(self, outcome: Outcome, *, target: str, llm: str) -> dict[str, Any]:
        """Write the final status and the run record; return the record."""
        status, message = outcome.status, outcome.message
        record = {
            "session": self.session_id, "prompt": self.prompt, "slug": self.slug,
            "status": status, "exit_code": outcome.exit_code, "message": message,
            "prompts": self.prompts, "attempts": self.attempts,
            "target": target, "llm": llm, "model": self.model,
            "conversation_url": self.conversation_url,
            "started": self.started, "finished": time.time(),
            "criteria": self.criteria, "judge": self.judge,
            "max_retries": self.max_retries, "timeout": self.timeout,
            "transcript": self.workspace.rel(self.tr.path),
            "workspace": str(self.workspace.root),
            **({"via": self.via} if self.via else {}),
        }
        self.tr.section("Final status",
                        f"{status}: {visible(message)}\n" if message else f"{status}\n")
        self.tr.record(record)
        self.tr.close()
        # An attempt the session never closed (an internal error, an interrupt mid-step)
        # ends with the session, never RUNNING forever.
        self.history.close_open_attempts(self.session_id, status)
        self.history.finish_session(self.session_id, status)
        return record

    # -- the conversation ---------------------------------------------------------

    def context(self, target: str, text: str) -> None:
        self.tr.block(f"Context: {target}", text, "markdown")

    def prompt_sent(self, kind: str, text: str) -> int:
        self.prompts += 1
        self.tr.block(f"Prompt {self.prompts} ({kind})", text, "text")
        return self.history.add_prompt(self.session_id, kind, text)

    def conversation(self, url: str | None) -> None:
        """Where the conversation lives, kept even when the answer never came."""
        self.history.set_conversation(self.session_id, url)
        self.conversation_url = url or self.conversation_url

    def llm_answered(self) -> None:
        """The LLM answered (a first streamed word is enough): stored once per session, so a
        session whose prompt never got there is told apart from a failed one."""
        if not self._reached:
            self._reached = True
            self.history.llm_reached(self.session_id)

    def answer(self, prompt_id: int, markdown: str, url: str | None, *, renderer: str = "",
               thinking: str = "", details: str = "", model: str = "",
               model_note: str = "") -> None:
        """The answer (with the chat page that gave it); the model's thinking before it (never
        part of it), its provenance after: the model that wrote it, and a note when that is
        not the model asked for."""
        self.history.set_answer(prompt_id, markdown, model)
        self.model = model or self.model
        self.llm_answered()
        self.conversation(url)
        if thinking:
            self.tr.block(f"Thinking {self.prompts} (not part of the answer)", thinking, "text")
        via = f" (renderer {renderer})" if renderer else ""
        self.tr.block(f"Answer {self.prompts}{via}", markdown, "markdown")
        lines = [f"- model that answered: {model}"] if model else []
        lines += [f"- {model_note}"] if model_note else []
        lines += [f"- {details}"] if details else []
        if lines:
            self.tr.section(f"Provider of answer {self.prompts}", "\n".join(lines) + "\n")

    def reattached(self, prompt_id: int) -> None:
        """A resumed session waits for its pending answer (prompt ``prompt_id``) again."""
        url = self.conversation_url or self.session_row().get("conversation_url")
        self.tr.section("Waiting again for the pending answer",
                        f"- conversation: {url}\n- prompt {prompt_id} is not sent again\n")

    def answer_pending(self, prompt_id: int, url: str | None, why: str) -> None:
        """The wait for an answer ended while the site was still writing it: the
        conversation is kept, and resuming the session waits for this same answer."""
        self.conversation(url)
        if url:
            self.history.set_pending(prompt_id)
        where = f"- conversation: {url}\n" if url else "- no conversation URL to go back to\n"
        resume = (f"- `verifybot run --resume {self.session_id}` (or resuming the session in "
                  f"the app) waits for this same answer instead of asking again\n"
                  if url else "")
        self.tr.section(f"Still being written: answer {self.prompts}", f"{why}\n\n{where}{resume}")

    def extraction(self, n: int, ex: Extraction) -> None:
        lines = []
        for b in ex.blocks:
            what = "program" if b.runnable else f"not run ({b.reason})"
            lines.append(f"- line {b.line}: {b.language or 'unknown'} block, "
                         f"file {b.filename or '(no name)'}, {what}")
        lines += [f"- note: {note}" for note in ex.notes]
        if ex.timeout:
            lines.append(f"- TIMEOUT: {ex.timeout:g} s")
        if ex.dependencies:
            lines.append(f"- DEPENDENCIES: {', '.join(ex.dependencies)}")
        self.tr.section(f"Extraction {n}", "\n".join(lines or ["- no code blocks"]) + "\n")

    def tree(self, n: int, lines: list[str], how: dict[str, str]) -> None:
        """The attempt's project tree: each file carried, whole, edited (how) or removed."""
        self.attempts[-1]["tree"] = dict(how)
        self.tr.section(f"Files {n}", "\n".join(lines or ["- no files"]) + "\n")

    def edits_not_applied(self, n: int, problems: list[str]) -> None:
        """Edits that did not apply: nothing ran; the whole files are asked for."""
        self.tr.section(f"Attempt {n}: edits not applied",
                        "\n".join(f"- {p}" for p in problems)
                        + "\n- nothing ran; the whole files are asked for\n")

    def duplicate(self, n: int, message: str) -> None:
        self.tr.section(f"Attempt {n}: duplicate", message + "\n")

    def dependencies(self, text: str) -> None:
        self.tr.section("Dependencies", text + "\n")

    # -- one attempt ----------------------------------------------------------------

    def attempt(self, *, n: int, version: int, prompt_id: int, files: list[ProgramFile],
                entry: str, target: str) -> None:
        saved = _saved(files)
        self._attempt_id = self.history.add_attempt(
            self.session_id, n=n, version=version, prompt_id=prompt_id, files=saved,
            entry=entry, target=target)
        self.attempts.append({"n": n, "version": version, "files": saved})

    def decision(self, n: int, decision: Decision) -> None:
        self.history.update_attempt(self._attempt_id, decision=decision.action,
                                    note=decision.note)
        self.attempts[-1]["decision"] = decision.action
        self.tr.section(f"Decision {n}", f"{decision.action}"
                        + (f": {decision.note}" if decision.note else "") + "\n")

    def attempt_ended(self, status: Status | AttemptState) -> None:
        """An attempt that will not run (stopped or rejected at the approval point)."""
        self.history.update_attempt(self._attempt_id, status=status, finished_at=time.time())

    def edited(self, version: int, files: list[ProgramFile]) -> list[str]:
        """A hand edit is the attempt's version now; the LLM's own (the first one, if
        edited twice) is kept as its ``original``, for the history's Diff tab."""
        saved = _saved(files)
        current = self.attempts[-1]
        original = current.get("original") or {"version": current["version"],
                                                "files": current["files"]}
        self.history.update_attempt(self._attempt_id, version=version, files=saved,
                                    original=original)
        current.update(version=version, files=saved, edited=True, original=original)
        return saved

    def retargeted(self, target: str) -> None:
        self.history.update_attempt(self._attempt_id, target=target)

    def run_started(self, version: int, program: ProgramFile, target: str) -> OutputFile:
        out = OutputFile(self.workspace.outputs / f"{self.slug}_{version}.txt",
                         f"programs/{program.saved_name}", target,
                         max_bytes=self.max_output_bytes)
        self.history.update_attempt(self._attempt_id, status=AttemptState.RUNNING,
                                    output_file=out.rel)
        return out

    def run_stopped(self, n: int, out: OutputFile) -> None:
        out.footer("stopped by the user before the program ended")
        self.history.update_attempt(self._attempt_id, status=Status.STOPPED,
                                    verdict="cancelled", finished_at=time.time(),
                                    reason="stopped before the program ended")
        self.tr.section(f"Run {n}", f"stopped by the user; output in {out.rel}\n")

    def run_judged(self, n: int, out: OutputFile, *, target: str, result: RunResult,
                   verdict: Verdict, timeout: float) -> None:
        out.footer(f"{_exit_words(result)}; {result.duration:.2f} s; "
                   f"verdict: {verdict.status}: {verdict.reason}")
        status = attempt_status(verdict)
        self.history.update_attempt(self._attempt_id, status=status, verdict=verdict.status,
                                    reason=verdict.reason, exit_code=result.exit_code,
                                    finished_at=time.time())
        self.attempts[-1].update(status=status, verdict=verdict.status, reason=verdict.reason,
                                 exit_code=result.exit_code, output=out.rel, target=target)
        body = (f"- target: {target}\n- command: {result.command or '(none)'}\n"
                f"- {_exit_words(result)}\n- duration: {result.duration:.2f} s\n"
                f"- timeout: {timeout:g} s{' (reached)' if result.timed_out else ''}\n"
                f"- verdict: {verdict.status}: {verdict.reason}\n- output: {out.rel}\n\n"
                + wrap_fence(visible(chat_text.head_tail(merged_output(result))), "text"))
        self.tr.section(f"Run {n}", body)

    # -- verification -------------------------------------------------------------------

    def checked(self, n: int, checks: list[Check], held: list[Hit]) -> None:
        """A passing run's criteria (all met) and the sanity checks that fired."""
        if checks:
            self.attempts[-1]["criteria"] = [
                {"criterion": c.criterion.text, "met": c.met, "evidence": c.evidence}
                for c in checks]
        if held:
            self.attempts[-1]["sanity"] = [{"check": h.name, "reason": h.reason} for h in held]
        lines = [f"- [{'met' if c.met else 'NOT MET'}] {c.criterion.text}: {c.evidence}"
                 for c in checks]
        lines += [f"- [sanity] {h.name}: {h.reason}" for h in held]
        if lines:
            self.tr.section(f"Checks {n}", "\n".join(lines) + "\n")

    def tests(self, n: int, name: str | None, result: RunResult | None) -> None:
        """The tests written alongside: which file, and how their run ended."""
        passed = result is not None and result.exit_code == 0
        self.attempts[-1]["tests"] = {"file": name, "passed": passed,
                                      "exit_code": result.exit_code if result else None}
        if not passed:
            self.history.update_attempt(self._attempt_id, status=Status.FAILED,
                                        verdict="tests_failed")
            self.attempts[-1].update(status=Status.FAILED, verdict="tests_failed")
        if result is None:
            self.tr.section(f"Tests {n}", "- no test file in the answer\n")
            return
        self.tr.section(f"Tests {n}", f"- file: {name}\n- {_exit_words(result)}\n"
                        f"- duration: {result.duration:.2f} s\n\n"
                        + wrap_fence(visible(chat_text.head_tail(merged_output(result))), "text"))

    def judge_answer(self, prompt_id: int, markdown: str) -> None:
        """A separate judge's answer: kept with its prompt, not as the session's chat."""
        self.history.set_answer(prompt_id, markdown)
        self.tr.block(f"Judge's answer {self.prompts}", markdown, "markdown")

    def judgement(self, n: int, j: Judgement) -> None:
        self.attempts[-1]["judgement"] = {"verdict": str(j.verdict), "reason": j.reason,
                                          "judge": j.judge}
        self.history.update_attempt(self._attempt_id, verdict=f"judge_{j.verdict.lower()}",
                                    reason=j.line)
        self.tr.section(f"Judgement {n}", f"{j.line} (judge: {j.judge})\n")

    def judge_decision(self, n: int, decision: JudgeDecision, j: Judgement | None) -> None:
        """The user's word on a judgement (or on a run held by sanity checks)."""
        self.attempts[-1]["judge_decision"] = decision.action
        note = f": {decision.note}" if decision.note else ""
        self.history.update_attempt(self._attempt_id, decision=f"judge:{decision.action}",
                                    note=decision.note or None)
        if decision.action == "accept":
            self.history.update_attempt(self._attempt_id, status=Status.VERIFIED)
            self.attempts[-1]["status"] = Status.VERIFIED
        elif decision.action == "fail" or (
                decision.action == "follow" and j is not None and j.verdict != "PASS"):
            self.history.update_attempt(self._attempt_id, status=Status.FAILED)
            self.attempts[-1]["status"] = Status.FAILED
        elif decision.action == "follow" and j is not None:
            self.history.update_attempt(self._attempt_id, status=Status.VERIFIED)
            self.attempts[-1]["status"] = Status.VERIFIED
        self.tr.section(f"Judgement decision {n}", f"{decision.action}{note}\n")

    def unjudged(self, n: int) -> None:
        """A run held by sanity checks that nobody judged: it stays PASSED, with its warnings."""
        self.attempts[-1]["judge_decision"] = "none"
        self.history.update_attempt(self._attempt_id, decision="judge:none")
        self.tr.section(f"Judgement decision {n}",
                        "none: the judge is off and runs are auto-accepted, so the held run "
                        "ends PASSED (not VERIFIED) with the sanity warnings above\n")


def attempt_status(verdict: Verdict) -> Status:
    if verdict.ok:
        return Status.PASSED
    return Status.TARGET_ERROR if verdict.status == "target_error" else Status.FAILED


class OutputFile:
    """outputs/<slug>_<n>.txt written as the output arrives (a kill keeps what came).

    It keeps the program's own characters (escapes too: ``cat -v`` shows them),
    up to ``max_bytes``; past that only a count of what was cut is kept.
    """

    def __init__(self, path: Path, program: str, target: str, *,
                 max_bytes: int = 64 * 1024 * 1024) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.rel = f"outputs/{path.name}"
        self.max_bytes = max_bytes
        self.written = 0
        self.cut = 0
        self._f = open(create_private(path), "w", encoding="utf-8", errors="replace",
                       newline="")
        self._f.write(f"# {program} on {target}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
                      "# stderr lines are marked 'stderr| '\n")
        self._last_stream = "stdout"
        self._at_line_start = True

    def add(self, stream: str, text: str) -> None:
        if stream == "note":
            return  # VerifyBot's own line about the run, not the program's output
        size = len(text.encode("utf-8", "replace"))
        if self.written + size > self.max_bytes:
            room = max(self.max_bytes - self.written, 0)
            kept = text.encode("utf-8", "replace")[:room].decode("utf-8", "ignore")
            self.cut += size - len(kept.encode())
            self.written = self.max_bytes
            if not kept:
                return
            text = kept
        else:
            self.written += size
        if stream != self._last_stream and not self._at_line_start:
            self._f.write("\n")  # a line of the other stream was cut short: its own line
            self._at_line_start = True
        if stream == "stderr":
            prefixed = []
            for line in text.splitlines(keepends=True):
                prefixed.append(("stderr| " if self._at_line_start else "") + line)
                self._at_line_start = line.endswith("\n")
            self._f.write("".join(prefixed))
        else:
            self._f.write(text)
            self._at_line_start = text.endswith("\n")
        self._last_stream = stream
        self._f.flush()

    def footer(self, text: str) -> None:
        if not self._at_line_start:
            self._f.write("\n")
        if self.cut:
            self._f.write(f"# output cut: {self.cut:,} more bytes came after the first "
                          f"{self.max_bytes:,} ([run] max_output_mb)\n")
            self.cut = 0
        self._f.write(f"# {text}\n")
        self._f.flush()

    def close(self) -> None:
        self._f.close()


def _exit_words(result: RunResult) -> str:
    """"exit status: 1", or how a run with no exit status ended (never "None")."""
    if result.exit_code is not None:
        return f"exit status: {result.exit_code}"
    return result.ended


def merged_output(result: RunResult) -> str:
    parts = []
    if result.stdout.strip():
        parts.append(result.stdout.rstrip("\n"))
    if result.stderr.strip():
        parts.append("--- stderr ---\n" + result.stderr.rstrip("\n"))
    if result.target_error:
        parts.append(f"--- target error ---\n{result.target_error}")
    return "\n".join(parts) or "(no output)"


def _saved(files: list[ProgramFile]) -> list[str]:
    return [f"programs/{f.saved_name}" for f in files]


def _one_line(text: str, limit: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def sweep(history: History, workspace: Path) -> list[dict[str, Any]]:
    """What any reader of history does first: dead sessions marked INTERRUPTED.

    The processes such sessions left running are the local target's to kill
    (``targets.live_runs.sweep_live``): only local runs leave them.
    """
    if history.read_only:
        return []  # another user's workspace: browsed, never changed
    gone = history.mark_interrupted()
    for session in gone:
        _note_interrupted(session)
    return gone


def _note_interrupted(session: dict[str, Any]) -> None:
    path = session.get("transcript")
    if path and Path(path).is_file():
        with open(path, "a", encoding="utf-8") as f:
            f.write("\n## Final status\n\nINTERRUPTED: the process running this session ended "
                    "before it finished (found at the next start)\n")
