"""The verify loop: ask, extract, approve, run, judge, feed back, repeat.

One async object that both front ends drive. ``events()`` runs the loop in a
task and yields what happens; where the user must decide, the event carries
a future and the loop waits for it. ``stop()`` cancels the task: the target
kills the running program's whole tree, and the loop still writes its final
status, so a stopped or interrupted session is as readable as a finished one.

One attempt is a pipeline of small steps, each returning a small result:
ask -> extract -> dedupe -> approve -> dependencies -> execute -> judge. A step
that ends the session returns an ``Outcome``; one that needs another answer
returns the next ``Turn`` (the prompt to send). Every write to history, the
transcript and the run record goes through the session's ``SessionRecorder``.
"""

from __future__ import annotations

import asyncio
import re
import time
import traceback
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from verifybot_tui.core.answers.deps import not_an_index_name, requirements, wanted_packages
from verifybot_tui.core.answers.extract import Extraction, extract
from verifybot_tui.core.answers.languages import language_named
from verifybot_tui.core.answers.programs import digest, save_version
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_SUCCESS,
    AnswerPending,
    LLMError,
    TargetError,
    VerifyBotError,
)
from verifybot_tui.core.base.offload import in_thread
from verifybot_tui.core.base.outcome import AttemptState, Outcome, Status, attempts
from verifybot_tui.core.base.ports import (
    Answer,
    LLMBackend,
    ProgramFile,
    Reattaches,
    RunRequest,
    RunResult,
    ShowsThinking,
    Target,
)
from verifybot_tui.core.loop import prompts
from verifybot_tui.core.loop.events import (
    AnswerDone,
    AnswerText,
    ApprovalNeeded,
    CodeReady,
    Decision,
    Event,
    EventHandler,
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
    dispatch,
)
from verifybot_tui.core.loop.node_step import install_node_packages
from verifybot_tui.core.loop.project_tree import (
    Planned,
    ProjectTree,
    apply_answer,
    tree_from_history,
)
from verifybot_tui.core.loop.recorder import OutputFile, SessionRecorder
from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.settings.secrets import Redactor
from verifybot_tui.core.store.history import History
from verifybot_tui.core.store.workspace import Workspace
from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.core.verify import llm_judge, sanity, tests_alongside
from verifybot_tui.core.verify.judging import FinishedRun, Judge, mechanical
from verifybot_tui.core.verify.llm_judge import Judgement
from verifybot_tui.core.verify.output_scan import OutputScan
from verifybot_tui.core.verify.verdict import Verdict, long_running_signs
from verifybot_tui.core.verify.verification import Verification, checked

T = TypeVar("T")
_DONE = object()
MAX_TIMEOUT = 3600.0  # an answer's TIMEOUT line cannot keep a program running longer


@dataclass(frozen=True)
class Turn:
    """The next prompt to send, and what kind of prompt it is (PromptSent.kind)."""

    text: str
    kind: str
    answer: str | None = None  # already answered (a judge's REVISE): not sent again
    prompt_id: int = 0  # with answer: the prompt it answered


@dataclass
class Code:
    """One answer's program: the extraction, its files, the file to run, its digest."""

    ex: Extraction
    files: list[ProgramFile]
    entry: str
    digest: str = ""
    version: int = 0
    planned: Planned | None = None  # how each file of the tree was made


@dataclass
class _Conversation:
    """What the attempts of one prompt share: versions seen, the target in use."""

    first_attempt: int
    target: Target
    seen: dict[str, int] = field(default_factory=dict)  # files digest -> version
    last_version: int = 0
    previous: list[ProgramFile] = field(default_factory=list)  # the last run's, for a diff

    def used(self, n: int) -> int:
        return n - self.first_attempt + 1


Step = Outcome | Turn


class VerifyLoop:
    via = ""  # who started the sessions when not the user at a front end ("mcp")

    def __init__(self, *, config: Config, llm: LLMBackend, target: Target, history: History,
                 max_retries: int | None = None, timeout: float | None = None,
                 auto_accept: bool | None = None, auto_install: bool | None = None,
                 review_feedback: bool = False, workspace: Path | None = None,
                 judge: Judge = mechanical, verification: Verification | None = None) -> None:
        self.config = config
        self.llm = llm
        self.target = target
        self.history = history
        self.workspace = Workspace(workspace or config.workspace).ensure()
        self.max_retries = config.run.max_retries if max_retries is None else max_retries
        self.timeout = config.run.timeout if timeout is None else timeout
        self.auto_accept = config.run.auto_accept if auto_accept is None else auto_accept
        # Installing runs outside the sandbox: a consent of its own (--install, or [run]
        # install in the user's own config), never implied by accepting versions (--yes).
        self.auto_install = config.run.install if auto_install is None else auto_install
        self.review_feedback = review_feedback
        # Criteria and sanity checks refine the judge step; an LLM judge reads passes.
        self._inner_judge = judge
        self.verification = verification or Verification()
        self.judge = checked(self.verification, judge)
        self.session_id: int | None = None
        self.attempt = 0
        self.recorder = SessionRecorder(history, self.workspace)
        # The second guard for secrets: their values are cut from outputs and prompts.
        self.redact = Redactor.for_config(config, self.workspace.root)
        self._emit: Callable[[Event], None] = lambda ev: None
        self._task: asyncio.Task[None] | None = None
        self._stop_status: Status | None = None
        self._context_target: str | None = None  # whose context the conversation knows
        self._pending_edit_note = ""
        self._python: dict[str, str] = {}  # target name -> venv python after an install
        self._contexts: dict[str, str] = {}  # target name -> its latest probe
        self._judge_prompt_id = 0
        self.tree = ProjectTree()  # the chat's files as they last ran

    @property
    def max_attempts(self) -> int:
        return 1 + self.max_retries

    # -- control from the front ends -----------------------------------------

    def set_target(self, target: Target) -> None:
        """Run on another target from the next attempt on; its context goes with the next prompt."""
        self.target = target

    def set_verification(self, verification: Verification) -> None:
        """Other criteria or another judge (a recipe opened in the app) from the next run on."""
        self.verification = verification
        self.judge = checked(verification, self._inner_judge)

    def stop(self, status: Status = Status.STOPPED) -> None:
        """Stop the running program (its whole tree) and end the loop with this status."""
        self._stop_status = status
        if self._task and not self._task.done():
            self._task.cancel()

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def events(self, prompt: str, *, new_chat: bool = True,
                     resume: int | None = None) -> AsyncIterator[Event]:
        """Run the loop for one prompt, yielding its events until ``Finished``."""
        if self.running:
            raise RuntimeError("the loop is already running a prompt")
        if not new_chat and resume is None and self.session_id is not None:
            resume = self.session_id  # a follow-up continues the current session
        queue: asyncio.Queue[Any] = asyncio.Queue()
        self._emit = queue.put_nowait
        self._stop_status = None
        task = asyncio.create_task(self._main(prompt, new_chat=new_chat, resume=resume))
        self._task = task
        task.add_done_callback(lambda _t: queue.put_nowait(_DONE))
        try:
            while (event := await queue.get()) is not _DONE:
                yield event
        finally:
            if not task.done():
                self._stop_status = self._stop_status or Status.STOPPED
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if not task.cancelled() and (error := task.exception()) is not None:
            raise error

    # -- one session ------------------------------------------------------------

    async def _main(self, prompt: str, *, new_chat: bool, resume: int | None) -> None:
        prompt = self.redact(prompt)  # a secret typed in it: never in a slug, file or row
        rec = self.recorder = SessionRecorder(self.history, self.workspace)
        rec.max_output_bytes = int(self.config.run.max_output_mb * 1024 * 1024)
        rec.criteria = [c.text for c in self.verification.criteria]
        rec.judge = self.verification.judge
        rec.max_retries, rec.timeout = self.max_retries, self.timeout
        rec.via = self.via
        rec.sweep_interrupted()
        names = {"target": self.target.name, "llm": self.llm.name}
        if resume is not None:
            self.attempt = rec.resume(resume, prompt, **names)
        else:
            rec.start(prompt, **names)
            self.attempt = 0
        self.session_id = rec.session_id
        self._emit(SessionStarted(rec.session_id, rec.slug, self.target.name, self.llm.name,
                                  str(rec.transcript_path), self.attempt))
        outcome = Outcome.failed("")
        try:
            outcome = await self._converse(prompt, new_chat=new_chat, resume=resume is not None)
        except asyncio.CancelledError as e:
            outcome = Outcome.of_error(e, self._stop_status)
        except Exception as e:  # an internal error keeps the session readable, says where
            outcome = Outcome.of_error(e)
            if not isinstance(e, VerifyBotError):
                rec.internal_error(traceback.format_exc())
        finally:
            record = rec.finish(outcome, target=self.target.name, llm=self.llm.name)
            self._emit(Finished(outcome.status, outcome.exit_code, record, outcome.message))

    async def _converse(self, prompt: str, *, new_chat: bool, resume: bool) -> Outcome:
        await self._open_chat(new_chat=new_chat, resume=resume)
        conv = _Conversation(first_attempt=self.attempt + 1, target=self.target)
        pending = self.history.pending_prompt(self.recorder.session_id) if resume else None
        if pending is not None and isinstance(self.llm, Reattaches):
            turn = await self._reattach(pending, prompt)
        elif pending is not None and not prompt.strip():
            row = self.recorder.session_row()
            raise LLMError(f"session {row.get('id')}'s last answer is still pending in "
                           f"{row.get('conversation_url')}, but {self.llm.name} cannot wait for "
                           f"it again: resume with the chat site's LLM (--llm "
                           f"{row.get('llm')}), or give a prompt to send")
        else:
            turn = await self._first_turn(prompt, conv.target, fresh=new_chat and not resume)
        while True:
            step = await self._attempt(turn, conv)
            if isinstance(step, Outcome):
                return step
            turn = step

    async def _open_chat(self, *, new_chat: bool, resume: bool) -> None:
        """Start the backend in the right conversation: a resumed one, a new one, or this one."""
        self._emit(Notice(f"starting {self.llm.name}"))
        await self.llm.start()
        if resume:
            row = self.recorder.session_row()
            url = row.get("conversation_url")
            if url and url != self.llm.conversation_url:  # not already there (a follow-up)
                await self.llm.resume(url)
                self._context_target = row.get("target")
                # The chat's files as its last attempt ran them: the next answer's base.
                self.tree = tree_from_history(
                    self.workspace.root, self.history.attempts(self.recorder.session_id))
            elif not url:
                await self.llm.new_chat()
        elif new_chat:
            await self.llm.new_chat()
            self._context_target = None
            self.tree = ProjectTree()  # a new chat starts an empty tree

    async def _first_turn(self, prompt: str, target: Target, *, fresh: bool) -> Turn:
        if not fresh:
            return Turn(prompt, "free")
        context = await self._probe(target)
        self._context_target = target.name
        text = prompts.first_prompt(prompt, target=target.name, context=context,
                                    timeout=self.timeout)
        extra = [crit.prompt_text(self.verification.criteria)]
        if self.verification.ask_for_tests:
            extra.append(tests_alongside.PROMPT)
        return Turn("\n\n".join([text, *[e for e in extra if e]]), "initial")

    # -- one attempt: the pipeline -------------------------------------------------

    async def _attempt(self, turn: Turn, conv: _Conversation) -> Step:
        if turn.answer is not None:
            prompt_id, answer = turn.prompt_id, turn.answer
        else:
            prompt_id, answer = await self._ask(await self._compose(turn, conv))
        self.attempt += 1
        n = self.attempt
        used = conv.used(n)
        code = await self._extract(n, answer)
        if code.planned is not None and code.planned.problems:
            return self._not_applied(n, used, code.planned)
        if not code.entry:
            self._emit(Notice("the answer holds no program to run", "warning"))
            return self._retry(used, "no program", Turn(prompts.no_code_prompt(), "feedback"))
        again = self._dedupe(n, code, conv)
        if again is not None:
            return self._retry(used, "no working program", again)
        if not await self._save(n, prompt_id, code, conv):
            return self._retry(used, "no program", Turn(prompts.no_code_prompt(), "feedback"))
        step = await self._approve(n, used, code, conv)
        if not isinstance(step, Code):
            return step
        target = await self._follow_switch(conv)
        python = await self._dependencies(target, step.files, step.ex)
        result, verdict = await self._execute(target, n, step, python)
        conv.previous = step.files
        self.tree.ran(step.files, step.entry)
        if verdict.ok:
            return await self._verify(n, used, result, verdict, step, target)
        return await self._after_run(result, verdict, used)

    async def _compose(self, turn: Turn, conv: _Conversation) -> Turn:
        """The prompt as sent: with the new target's context, and a note on a hand edit."""
        if self.target is not conv.target:
            conv.target = self.target
            await self._probe(conv.target)
        text = turn.text
        name = conv.target.name
        if self._context_target != name and turn.kind != "initial":
            context = self._contexts.get(name) or await self._probe(conv.target)
            text = prompts.context_update(name, context) + text
        if self._pending_edit_note and turn.kind != "initial":
            text = f"{self._pending_edit_note}\n\n{text}"
        self._pending_edit_note = ""
        self._context_target = name
        return Turn(text, turn.kind)

    async def _ask(self, turn: Turn) -> tuple[int, str]:
        rec = self.recorder
        turn = Turn(self.redact(turn.text), turn.kind)  # a secret never goes to the LLM
        prompt_id = rec.prompt_sent(turn.kind, turn.text)
        self._emit(PromptSent(turn.text, turn.kind, self.attempt + 1))
        if isinstance(self.llm, ShowsThinking):  # an API backend: reasoning apart, waits told
            self.llm.on_thinking = lambda so_far: self._emit(ThinkingText(so_far))
            self.llm.on_notice = lambda note: self._emit(Notice(note, "warning"))
        answer = await self._answer(prompt_id, self.llm.ask(turn.text, self._on_answer_text))
        return prompt_id, answer.markdown

    async def _answer(self, prompt_id: int, waiting: Any) -> Answer:
        """Wait for an answer (asked, or re-attached to) and record it with the model that
        wrote it; one still being written when the wait ends is kept as pending."""
        rec = self.recorder
        try:
            answer: Answer = await waiting
        except AnswerPending as e:
            rec.answer_pending(prompt_id, e.conversation_url, e.message)
            sid = rec.session_id
            raise AnswerPending(f"{e.message} To wait for it again: verifybot run --resume "
                                f"{sid} (or resume session {sid} in the app).",
                                conversation_url=e.conversation_url,
                                evidence=e.evidence) from None
        except BaseException:
            # The browser died or the user stopped: keep where the conversation lives,
            # so the next prompt goes back to it rather than to a new chat.
            if self.llm.conversation_url:
                rec.conversation(self.llm.conversation_url)
            raise
        url = answer.conversation_url or self.llm.conversation_url
        self._check_answer_size(answer.markdown)
        note = self._other_model(answer.model)
        # A temporary chat cannot be reopened: its session keeps no URL to resume.
        rec.answer(prompt_id, answer.markdown, url if answer.resumable else None,
                   renderer=answer.renderer, thinking=answer.thinking, details=answer.details,
                   model=answer.model, model_note=note)
        if note:
            llm_cfg = self.config.llm.get(self.llm.name)
            if llm_cfg is not None and llm_cfg.strict_model:
                raise LLMError(f"{note} ([llm.{self.llm.name}] strict_model = true refuses "
                               f"it: pick the model again, or set strict_model = false to go "
                               f"on with a notice)")
            self._emit(Notice(note, "warning"))
        self._emit(AnswerDone(answer.markdown, url))
        return answer

    def _other_model(self, answered: str) -> str:
        """A note when the model that answered is not the one [llm.NAME] model asks for."""
        llm_cfg = self.config.llm.get(self.llm.name)
        wanted = llm_cfg.model if llm_cfg is not None else ""
        if not answered or not wanted.strip() or same_model(answered, wanted):
            return ""
        return (f"the answer came from {answered!r}, not from the model asked for "
                f"({wanted!r})")

    async def _reattach(self, pending: dict[str, Any], prompt: str) -> Turn:
        """A resumed session whose last answer was still being written: wait for that same
        answer in its conversation (nothing is sent again), then go on with it."""
        assert isinstance(self.llm, Reattaches)
        sid = self.recorder.session_id
        self._emit(Notice(f"session {sid}'s last answer was still being written: waiting for "
                          f"it in {self.llm.conversation_url or 'its conversation'} instead "
                          f"of asking again"))
        if prompt.strip() and prompt.strip() != pending["text"].strip():
            self._emit(Notice("your new prompt is not sent now: the pending answer comes "
                              "first; send it again as a follow-up once this run ends",
                              "warning"))
        self.recorder.reattached(pending["id"])
        answer = await self._answer(pending["id"], self.llm.reattach(pending["text"],
                                                                     self._on_answer_text))
        return Turn("", pending["kind"], answer=answer.markdown, prompt_id=pending["id"])

    def _on_answer_text(self, so_far: str) -> None:
        self._check_answer_size(so_far)
        if so_far:
            self.recorder.llm_answered()
        self._emit(AnswerText(so_far))

    def _check_answer_size(self, text: str) -> None:
        """An answer past [run] max_answer_mb is refused, not extracted or shown."""
        limit = int(self.config.run.max_answer_mb * 1024 * 1024)
        if len(text) > limit:
            raise LLMError(f"the answer has more than {limit:,} characters ([run] "
                           f"max_answer_mb = {self.config.run.max_answer_mb:g}); ask for a "
                           "shorter program, or raise max_answer_mb in the config")

    async def _extract(self, n: int, answer: str) -> Code:
        """Extraction and the clash checks grow with the answer: a worker thread does them."""
        def work() -> Code:
            ex = extract(answer)
            planned = apply_answer(self.tree, answer, ex, self.recorder.slug,
                                   self.config.run.max_files)
            return Code(ex, planned.files, planned.entry, digest(planned.files), planned=planned)

        code = await in_thread(work)
        self.recorder.extraction(n, code.ex)
        for note in code.ex.notes:
            self._emit(Notice(note, "warning"))
        return code

    def _not_applied(self, n: int, used: int, planned: Planned) -> Step:
        """An edit that does not apply unambiguously runs nothing: the LLM is asked, in
        the same chat, for the whole file (a retry, not a run)."""
        problems = planned.problems
        self.recorder.edits_not_applied(n, [f"{p.path}: {p.message}" for p in problems])
        for p in problems:
            self._emit(Notice(f"the edit to {p.path} did not apply: {p.message}; nothing "
                              "runs, asking for the whole file", "warning"))
        return self._retry(used, "edits that did not apply",
                           Turn(prompts.whole_file_prompt(problems), "feedback"))

    def _retry(self, used: int, what: str, turn: Turn) -> Step:
        """Ask again, unless that was the last attempt."""
        if used >= self.max_attempts:
            return Outcome.failed(f"{what} after {attempts(used)}")
        return turn

    def _dedupe(self, n: int, code: Code, conv: _Conversation) -> Turn | None:
        """The code of a version already run is not run again: ask for a change."""
        version = conv.seen.get(code.digest)
        if version is None:
            return None
        msg = (f"attempt {n}: the code is identical to version {version}, "
               "so it is not run again; asking the LLM for a change")
        self._emit(Notice(msg, "warning"))
        self.recorder.duplicate(n, msg)
        return Turn(prompts.duplicate_prompt(version), "duplicate")

    async def _save(self, n: int, prompt_id: int, code: Code, conv: _Conversation) -> bool:
        """Save the version; False when the file to run could not be saved (noted)."""
        await self._save_version(code, conv)
        if not any(f.name == code.entry for f in code.files):
            self._emit(Notice(f"{code.entry}, the file to run, could not be saved", "error"))
            return False
        saved = [f"programs/{f.saved_name}" for f in code.files]
        self.recorder.attempt(n=n, version=code.version, prompt_id=prompt_id, files=code.files,
                              entry=code.entry, target=conv.target.name)
        how = code.planned.how if code.planned is not None else {}
        if code.planned is not None:
            self.recorder.tree(n, code.planned.lines(), how)
        self._emit(CodeReady(n, code.files, code.entry, saved, conv.previous, how=how))
        return True

    async def _save_version(self, code: Code, conv: _Conversation) -> None:
        notes: list[str] = []
        code.version, code.files = await in_thread(
            save_version, self.workspace, code.files, self.recorder.slug,
            conv.last_version + 1, notes=notes)
        for note in notes:
            self._emit(Notice(note, "warning"))
        conv.last_version = code.version
        conv.seen[digest(code.files)] = code.version

    async def _approve(self, n: int, used: int, code: Code, conv: _Conversation) -> Step | Code:
        """The user's decision: the code to run, or how the session goes on without it."""
        if self.auto_accept:
            decision = Decision("accept")
        else:
            decision = await self._wait(lambda fut: ApprovalNeeded(n, code.files, code.entry, fut))
        rec = self.recorder
        rec.decision(n, decision)
        if decision.action == "stop":
            rec.attempt_ended(Status.STOPPED)
            return Outcome(Status.STOPPED, EXIT_FAILED, "stopped by the user")
        if decision.action == "reject":
            rec.attempt_ended(AttemptState.REJECTED)
            note = decision.note or "Please try another approach."
            return self._retry(used, "no accepted program",
                               Turn(prompts.reject_prompt(note), "reject"))
        if decision.action == "edit" and decision.files:
            await self._apply_edit(code, decision.files, conv)
        return code

    async def _apply_edit(self, code: Code, edits: dict[str, str], conv: _Conversation) -> None:
        """A hand edit is a new version, and the LLM hears about it with the next prompt."""
        edited = [replace(f, content=edits.get(f.name, f.content)) for f in code.files]
        if digest(edited) == code.digest:
            return
        self._pending_edit_note = prompts.edit_note(code.files, edited)
        code.files = edited
        await self._save_version(code, conv)
        saved = self.recorder.edited(code.version, code.files)
        self._emit(Notice(f"your edit is saved as {', '.join(saved)}"))

    async def _follow_switch(self, conv: _Conversation) -> Target:
        """Switched target while the code was shown: it runs there."""
        if self.target is not conv.target:
            conv.target = self.target
            await self._probe(conv.target)
            self.recorder.retargeted(conv.target.name)
        return conv.target

    async def _dependencies(self, target: Target, files: list[ProgramFile],
                            ex: Extraction) -> str | None:
        """Install what the program imports and the target lacks (asking first); its python."""
        await self._node_packages(target, files)
        python = self._python.get(target.name)
        if not any(f.language == "python" for f in files):
            return python
        listed, notes = requirements(files)
        for note in notes:
            self._emit(Notice(note, "warning"))
        wanted = await in_thread(wanted_packages, files, [*ex.dependencies, *listed],
                                 self.tree.ever)
        for name in [p for p in wanted if not_an_index_name(p)]:
            del wanted[name]  # pip would take it for what it looks like: never given to pip
            self._emit(Notice(f"not installing {name!r}: it looks like "
                              f"{not_an_index_name(name)}, and only package names from the "
                              "index are installed", "warning"))
            self.recorder.dependencies(f"refused: {name} ({not_an_index_name(name)})")
        if not wanted:
            return python
        missing_mods = set(await target.missing_modules(sorted(set(wanted.values())), python))
        packages = sorted(p for p, m in wanted.items() if m in missing_mods)
        if not packages:
            return python
        question = (f"The program needs {', '.join(packages)}, not installed on {target.name}. "
                    f"Install into the workspace's virtual environment there?")
        ok = self.auto_install or await self._wait(
            lambda fut: PermissionNeeded(question, packages, fut))
        if not ok:
            self._emit(Notice(f"not installing {', '.join(packages)}: the run will likely fail",
                              "warning"))
            self.recorder.dependencies(f"declined: {', '.join(packages)}")
            return python
        return await self._install(target, packages, python)

    async def _node_packages(self, target: Target, files: list[ProgramFile]) -> None:
        """A package.json's dependencies, installed with npm (asking first, as for pip)."""
        async def ask(question: str, specs: list[str]) -> bool:
            return self.auto_install or await self._wait(
                lambda fut: PermissionNeeded(question, specs, fut))

        await install_node_packages(target, files, ask=ask, emit=self._emit,
                                    record=self.recorder.dependencies)

    async def _install(self, target: Target, packages: list[str], python: str | None) -> str | None:
        self._emit(Notice(f"installing {', '.join(packages)} on {target.name}"))
        try:
            python = await target.install(packages, lambda s, t: self._emit(Output(s, t)))
        except TargetError:
            raise
        except VerifyBotError as e:
            self._emit(Notice(f"installing failed: {e}", "error"))
            self.recorder.dependencies(f"install of {', '.join(packages)} failed: {e}")
            return python
        self._python[target.name] = python
        self.recorder.dependencies(f"installed: {', '.join(packages)} ({python})")
        return python

    async def _execute(self, target: Target, n: int, code: Code,
                       python: str | None) -> tuple[RunResult, Verdict]:
        """Run the version with its output kept in outputs/, then judge it."""
        entry = next(f for f in code.files if f.name == code.entry)
        signs = await in_thread(long_running_signs, entry.content, entry.language)
        timeout = self.timeout
        if code.ex.timeout and code.ex.timeout > timeout:
            timeout = min(code.ex.timeout, MAX_TIMEOUT)
        request = RunRequest(run_id=f"{self.recorder.slug}_{code.version}", files=code.files,
                             entry=code.entry, language=entry.language, timeout=timeout,
                             long_running=bool(signs), python=python,
                             compiler=self.verification.compiler,
                             flags=list(self.verification.flags))
        rec = self.recorder
        out = rec.run_started(code.version, entry, target.name)
        scan = OutputScan(self.verification.criteria, rec.max_output_bytes)
        lang = language_named(entry.language)
        try:
            self._emit(RunStarted(n, target.name, request.run_id))
            result = await self._run(target, n, request, out, scan)
            verdict = await self.judge(FinishedRun(rec.prompt, n, request, result, signs, scan,
                                                   builds=bool(lang and lang.compile)))
            rec.run_judged(n, out, target=target.name, result=result, verdict=verdict,
                           timeout=timeout)
        finally:
            out.close()
        self._emit(RunFinished(n, result, out.rel))
        self._emit(VerdictReached(n, verdict))
        return result, verdict

    async def _run(self, target: Target, n: int, request: RunRequest,
                   out: OutputFile, scan: OutputScan) -> RunResult:
        def on_output(stream: str, text: str) -> None:
            text = self.redact(text)
            out.add(stream, text)
            if stream == "stdout":
                scan.feed(text)
            self._emit(Output(stream, text))

        started = time.monotonic()
        try:
            result = await target.run(request, on_output)
            return replace(result, stdout=self.redact(result.stdout),
                           stderr=self.redact(result.stderr))
        except TargetError as e:
            return RunResult(exit_code=None, stdout="", stderr="",
                             duration=time.monotonic() - started, target_error=str(e))
        except asyncio.CancelledError:
            self.recorder.run_stopped(n, out)
            raise

    async def _after_run(self, result: RunResult, verdict: Verdict, used: int) -> Step:
        """The session ends on a target error or the last attempt; else feedback."""
        if verdict.status == "target_error":
            return Outcome(Status.TARGET_ERROR, TargetError.exit_code, verdict.reason)
        if used >= self.max_attempts:
            return Outcome.failed(f"still failing after {attempts(used)}: {verdict.reason}")
        text = prompts.feedback_prompt(
            result, verdict.reason, attempt=used, max_attempts=self.max_attempts,
            retry_hint=verdict.retry_hint, edit_note=self._pending_edit_note)
        self._pending_edit_note = ""
        if self.review_feedback and not self.auto_accept:
            fd = await self._wait(partial(FeedbackReady, text))
            if not fd.send:
                return Outcome(Status.STOPPED, EXIT_FAILED,
                               "stopped by the user before sending feedback")
            text = fd.text or text
        return Turn(text, "feedback")

    # -- verification: a passing run's criteria, sanity checks and judge -------------------

    async def _verify(self, n: int, used: int, result: RunResult, verdict: Verdict,
                      code: Code, target: Target) -> Step:
        """A mechanical pass: criteria met, then the judge (or the user) has the last word."""
        v = self.verification
        self.recorder.checked(n, verdict.checks, verdict.held)
        if v.ask_for_tests:
            failed = await self._run_tests(n, used, code, target)
            if failed is not None:
                return failed
        if verdict.held:
            self._emit(Notice("held for a judgement: " + "; ".join(h.reason for h in verdict.held),
                              "warning"))
        if not v.judging:
            if not verdict.held:
                if v.criteria or v.ask_for_tests:
                    what = [f"all {len(v.criteria)} success criteria met"] if v.criteria else []
                    what += ["its tests pass"] if v.ask_for_tests else []
                    return Outcome(Status.VERIFIED, EXIT_SUCCESS, "; ".join(what))
                return Outcome(Status.PASSED, EXIT_SUCCESS, verdict.reason)
            if self.auto_accept:
                return self._unjudged(n, verdict)
            reasons = "The run exited 0, but:\n" + sanity.text(verdict.held)
            decision = await self._wait(partial(JudgementNeeded, n, None, reasons))
            self.recorder.judge_decision(n, decision, None)
            return self._judged(n, used, result, decision, None, reasons)
        j = await self._ask_judge(n, result, verdict, code, target)
        self._emit(Judged(n, j))
        if j.verdict == llm_judge.Verdict.UNPARSABLE or not self.auto_accept:
            why = (f"The judgement could not be read ({j.reason}); you decide."
                   if j.verdict == llm_judge.Verdict.UNPARSABLE else f"The judge says {j.line}")
            decision = await self._wait(partial(JudgementNeeded, n, j, why))
        else:
            decision = JudgeDecision("follow")
        self.recorder.judge_decision(n, decision, j)
        return self._judged(n, used, result, decision, j, "")

    async def _run_tests(self, n: int, used: int, code: Code, target: Target) -> Step | None:
        """Run the tests written alongside; a failure (or no test file) is the next step."""
        test = tests_alongside.test_file(code.files, code.entry)
        if test is None:
            reason = "It exited 0, but the answer holds no test file (test_main.py) to run."
            self.recorder.tests(n, None, None)
            self._emit(Notice(reason, "warning"))
            if used >= self.max_attempts:
                return Outcome.failed(f"no tests after {attempts(used)}")
            return Turn(prompts.reject_prompt(reason + " " + tests_alongside.PROMPT), "feedback")
        files, entry = tests_alongside.runnable(code.files, test)
        # pytest itself is a dependency of pytest-style tests (the runner imports it).
        python = await self._dependencies(target, files, code.ex)
        request = RunRequest(run_id=f"{self.recorder.slug}_{code.version}_tests", files=files,
                             entry=entry, language="python", timeout=self.timeout,
                             python=python)
        self._emit(Notice(f"running the tests in {test.name}"))
        started = time.monotonic()
        try:
            result = await target.run(request,
                                      lambda s, t: self._emit(Output(s, self.redact(t))))
            result = replace(result, stdout=self.redact(result.stdout),
                             stderr=self.redact(result.stderr))
        except TargetError as e:
            result = RunResult(exit_code=None, stdout="", stderr="",
                               duration=time.monotonic() - started, target_error=str(e))
        self.recorder.tests(n, test.name, result)
        if result.exit_code == 0:
            self._emit(Notice(f"the tests in {test.name} pass"))
            return None
        if result.target_error:
            return Outcome(Status.TARGET_ERROR, TargetError.exit_code, result.target_error)
        how = "timed out" if result.timed_out else f"exited {result.exit_code}" \
            if result.exit_code is not None else result.ended
        reason = f"The program exited 0, but its tests ({test.name}) failed: they {how}."
        self._emit(Notice(reason, "warning"))
        if used >= self.max_attempts:
            return Outcome.failed(f"tests still failing after {attempts(used)}")
        return Turn(prompts.feedback_prompt(result, reason, attempt=used,
                                            max_attempts=self.max_attempts), "feedback")

    async def _ask_judge(self, n: int, result: RunResult, verdict: Verdict, code: Code,
                         target: Target) -> Judgement:
        v = self.verification
        text = llm_judge.judgement_prompt(
            task=self.recorder.prompt, result=result, files=code.files, entry=code.entry,
            target=target.name, context=self._contexts.get(target.name, ""),
            checks=verdict.checks, hits=verdict.held)
        if v.judge_llm is None:  # the same chat: the conversation that wrote the code
            prompt_id, answer = await self._ask(Turn(text, "judge"))
        else:
            judge = v.judge_llm
            if judge.state == "stopped":
                await judge.start()
            if v.fresh_chat:
                await judge.new_chat()
            text = self.redact(text)  # a secret never goes to any LLM
            prompt_id = self.recorder.prompt_sent("judge", text)
            self._emit(PromptSent(text, "judge", self.attempt + 1))
            reply = await judge.ask(text)
            answer = reply.markdown
            self.recorder.judge_answer(prompt_id, answer)
        self._judge_prompt_id = prompt_id
        j = llm_judge.parse(answer, v.judge)
        self.recorder.judgement(n, j)
        return j

    def _unjudged(self, n: int, verdict: Verdict) -> Outcome:
        """A held run nobody judges (judge off, runs auto-accepted): PASSED, never VERIFIED.

        Sending it back as a failure would make the LLM "fix" a program that may be
        right (a zero can be the answer); calling it verified would hide the doubt. So
        it passes on the exit status alone, with the sanity warnings printed and kept.
        """
        held = "; ".join(h.reason for h in verdict.held)
        self.recorder.unjudged(n)
        self._emit(Notice("nobody judges it (judge off, runs auto-accepted): it ends PASSED, "
                          "not VERIFIED; check the warnings yourself", "warning"))
        return Outcome(Status.PASSED, EXIT_SUCCESS,
                       f"exited 0, but held by sanity checks that nobody judged: {held}")

    def _judged(self, n: int, used: int, result: RunResult, decision: JudgeDecision,
                j: Judgement | None, reasons: str) -> Step:
        """The session's next step after a judgement and the user's word on it."""
        V = llm_judge.Verdict
        action: str = decision.action
        if action == "stop":
            return Outcome(Status.STOPPED, EXIT_FAILED, "stopped by the user at the judgement")
        if action == "follow" and j is not None:
            if j.verdict == V.PASS:
                return Outcome(Status.VERIFIED, EXIT_SUCCESS, "the judge says PASS")
            action = "fail" if j.verdict == V.FAIL else "revise"
            if j.verdict == V.UNPARSABLE:  # nobody decided: not a success
                action = "fail"
        if action == "accept":
            who = "the user accepted it" + (f" over the judge's {j.verdict}" if j else "")
            return Outcome(Status.VERIFIED, EXIT_SUCCESS, who)
        reason = decision.note or (j.reason if j is not None else "") or reasons
        if used >= self.max_attempts:
            return Outcome.failed(f"judged a failure after {attempts(used)}: {reason}")
        if action == "revise" and j is not None:
            return Turn("", "judge", answer=j.answer, prompt_id=self._judge_prompt_id)
        if j is not None and not self.verification.separate and not decision.note:
            return Turn(llm_judge.failure_prompt(j), "feedback")
        why = "It exited 0 but was judged a failure: " + (decision.note or (
            j.reason if j is not None else sanity_reasons(reasons)))
        return Turn(prompts.feedback_prompt(result, why, attempt=used,
                                            max_attempts=self.max_attempts), "feedback")

    # -- helpers ----------------------------------------------------------------------

    async def _wait(self, make: Callable[[asyncio.Future[T]], Event]) -> T:
        fut: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._emit(make(fut))
        return await fut

    async def _probe(self, target: Target) -> str:
        self._emit(Notice(f"probing {target.name}"))
        await target.connect()
        context = await target.probe()
        self._contexts[target.name] = context
        self.recorder.context(target.name, context)
        return context


def same_model(answered: str, wanted: str) -> bool:
    """The page's or API's name of a model against the one asked for: case, spaces and
    punctuation aside ("gpt-5-thinking" is "GPT-5 Thinking"), a dated version counts as
    its model ("gpt-4o-2024-08-06" is "gpt-4o")."""
    def norm(name: str) -> str:
        return "-".join(re.findall(r"[a-z0-9]+", name.lower()))
    a, w = norm(answered), norm(wanted)
    return a == w or a.startswith(w + "-") and bool(re.fullmatch(r"[0-9-]+", a[len(w) + 1:]))


def sanity_reasons(reasons: str) -> str:
    """The sanity hold's text as one sentence for the feedback prompt."""
    lines = [ln.removeprefix("- ") for ln in reasons.splitlines()[1:]]
    return "; ".join(lines) + "."


async def drain(events: AsyncIterator[Event], handler: EventHandler) -> Finished | None:
    """Dispatch every event to the front end's handler; return the Finished event."""
    finished = None
    async for ev in events:
        await dispatch(handler, ev)
        if isinstance(ev, Finished):
            finished = ev
    return finished


__all__ = ["VerifyLoop", "drain", "Decision", "FeedbackDecision"]
