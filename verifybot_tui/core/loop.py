"""The verify loop: ask, extract, approve, run, judge, feed back, repeat.

One async object that both front ends drive. ``events()`` runs the loop in a
task and yields what happens; where the user must decide, the event carries
a future and the loop waits for it. ``stop()`` cancels the task: the target
kills the running program's whole tree, and the loop still writes its final
status, so a stopped or interrupted session is as readable as a finished one.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from verifybot_tui.core import prompts
from verifybot_tui.core.config import Config
from verifybot_tui.core.deps import needed_packages, pip_name
from verifybot_tui.core.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
    LLMError,
    TargetError,
    VerifyBotError,
)
from verifybot_tui.core.events import (
    AnswerDone,
    AnswerText,
    ApprovalNeeded,
    CodeReady,
    Decision,
    Event,
    FeedbackDecision,
    FeedbackReady,
    Finished,
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
from verifybot_tui.core.extract import Extraction, extract
from verifybot_tui.core.history import History
from verifybot_tui.core.languages import extension_for, language_named
from verifybot_tui.core.transcript import Transcript, wrap_fence
from verifybot_tui.core.verdict import Verdict, judge, long_running_signs
from verifybot_tui.core.workspace import Workspace, slugify, versioned
from verifybot_tui.llm.base import LLMBackend
from verifybot_tui.targets.base import ProgramFile, RunRequest, RunResult, Target

T = TypeVar("T")
_DONE = object()
MAX_TIMEOUT = 3600.0  # an answer's TIMEOUT line cannot keep a program running longer
_ENTRY_STEMS = ("main", "app", "run", "program")


class VerifyLoop:
    def __init__(self, *, config: Config, llm: LLMBackend, target: Target, history: History,
                 max_retries: int | None = None, timeout: float | None = None,
                 auto_accept: bool | None = None, auto_install: bool | None = None,
                 review_feedback: bool = False, workspace: Path | None = None) -> None:
        self.config = config
        self.llm = llm
        self.target = target
        self.history = history
        self.workspace = Workspace(workspace or config.workspace).ensure()
        self.max_retries = config.run.max_retries if max_retries is None else max_retries
        self.timeout = config.run.timeout if timeout is None else timeout
        self.auto_accept = config.run.auto_accept if auto_accept is None else auto_accept
        # Installing packages asks separately unless told (--yes) to accept everything.
        self.auto_install = self.auto_accept if auto_install is None else auto_install
        self.review_feedback = review_feedback
        self.session_id: int | None = None
        self.attempt = 0
        self._emit: Callable[[Event], None] = lambda ev: None
        self._task: asyncio.Task[None] | None = None
        self._stop_status: str | None = None
        self._context_target: str | None = None  # whose context the conversation knows
        self._pending_edit_note = ""
        self._python: dict[str, str] = {}  # target name -> venv python after an install
        self._contexts: dict[str, str] = {}  # target name -> its latest probe

    @property
    def max_attempts(self) -> int:
        return 1 + self.max_retries

    # -- control from the front ends -----------------------------------------

    def set_target(self, target: Target) -> None:
        """Run on another target from the next attempt on; its context goes with the next prompt."""
        self.target = target

    def stop(self, status: str = "STOPPED") -> None:
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
                self._stop_status = self._stop_status or "STOPPED"
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]

    # -- one session ------------------------------------------------------------

    async def _main(self, prompt: str, *, new_chat: bool, resume: int | None) -> None:
        ws = self.workspace
        for gone in self.history.mark_interrupted():
            _note_interrupted(gone)
        started = time.time()
        prompt_count = 0
        if resume is not None:
            row = self.history.session(resume)
            if row is None:
                raise VerifyBotError(f"there is no session {resume} in {ws.db_path}")
            session_id, slug = resume, row["slug"]
            transcript = Path(row["transcript"] or ws.raw_md / f"resumed_{slug}.md")
            self.history.reopen_session(session_id)
            prompt_count = len(self.history.prompts(session_id))
            self.attempt = len(self.history.attempts(session_id))
        else:
            slug = slugify(prompt)
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(started))
            transcript = _free_path(ws.raw_md, f"{stamp}_{slug}", ".md")
            session_id = self.history.start_session(
                slug=slug, prompt=prompt, target=self.target.name, llm=self.llm.name,
                transcript=str(transcript))
            self.attempt = 0
        self.session_id = session_id
        tr = Transcript(transcript)
        self._run_state = _RunState(session_id=session_id, slug=slug, transcript=tr,
                                    prompts=prompt_count, started=started, prompt=prompt)
        tr.write(f"\n# VerifyBot session {session_id}: {_one_line(prompt)}\n\n"
                 f"- started: {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(started))}\n"
                 f"- target: {self.target.name}\n- llm: {self.llm.name}\n"
                 f"- workspace: {ws.root}\n- resumed: {'yes' if resume else 'no'}\n", sync=True)
        self._emit(SessionStarted(session_id, slug, self.target.name, self.llm.name,
                                  str(transcript)))
        status, code, message = "FAILED", EXIT_FAILED, ""
        try:
            status, code, message = await self._converse(prompt, new_chat=new_chat,
                                                          resume=resume is not None)
        except asyncio.CancelledError:
            status = self._stop_status or "STOPPED"
            code = EXIT_INTERRUPTED if status == "INTERRUPTED" else EXIT_FAILED
            message = "interrupted (Ctrl+C)" if status == "INTERRUPTED" else "stopped by the user"
        except LLMError as e:
            status, code, message = "LLM_ERROR", e.exit_code, str(e)
        except TargetError as e:
            status, code, message = "TARGET_ERROR", e.exit_code, str(e)
        except VerifyBotError as e:
            status, code, message = "ERROR", e.exit_code, str(e)
        except Exception as e:  # a bug: keep the session readable and say where to look
            status, code, message = "ERROR", EXIT_FAILED, f"internal error: {e!r}"
            tr.block("Internal error", traceback.format_exc(), "text")
        finally:
            record = self._record(status, code, message)
            tr.section("Final status", f"{status}: {message}\n" if message else f"{status}\n")
            tr.record(record)
            tr.close()
            self.history.finish_session(session_id, status)
            self._emit(Finished(status, code, record, message))

    async def _converse(self, prompt: str, *, new_chat: bool, resume: bool) -> tuple[str, int, str]:
        st = self._run_state
        self._emit(Notice(f"starting {self.llm.name}"))
        await self.llm.start()
        if resume:
            row = self.history.session(st.session_id) or {}
            url = row.get("conversation_url")
            if url and url != self.llm.conversation_url:  # not already there (a follow-up)
                await self.llm.resume(url)
                self._context_target = row.get("target")
            elif not url:
                await self.llm.new_chat()
        elif new_chat:
            await self.llm.new_chat()
            self._context_target = None
        target = self.target
        if new_chat and not resume:
            context = await self._probe(target)
            self._context_target = target.name
            text = prompts.first_prompt(prompt, target=target.name, context=context,
                                        timeout=self.timeout)
            kind = "initial"
        else:
            text, kind = prompt, "free"
        seen: dict[str, int] = {}  # digest of a version's files -> its version number
        last_version = 0
        previous: list[ProgramFile] = []
        first_attempt = self.attempt + 1
        while True:
            if self.target is not target:
                target = self.target
                await self._probe(target)
            if self._context_target != target.name and kind != "initial":
                context = self._contexts.get(target.name) or await self._probe(target)
                text = prompts.context_update(target.name, context) + text
            if self._pending_edit_note and kind != "initial":
                text = f"{self._pending_edit_note}\n\n{text}"
            self._pending_edit_note = ""
            self._context_target = target.name
            prompt_id, answer = await self._ask(text, kind)
            self.attempt += 1
            n = self.attempt
            used = n - first_attempt + 1
            ex = extract(answer)
            self._log_extraction(n, ex)
            files, entry = self._files(ex, st.slug)
            if not entry:
                self._emit(Notice("the answer holds no program to run", "warning"))
                if used >= self.max_attempts:
                    return "FAILED", EXIT_FAILED, f"no program after {used} attempts"
                text, kind = prompts.no_code_prompt(), "feedback"
                continue
            digest = _digest(files)
            if digest in seen:
                msg = (f"attempt {n}: the code is identical to version {seen[digest]}, "
                       "so it is not run again; asking the LLM for a change")
                self._emit(Notice(msg, "warning"))
                st.transcript.section(f"Attempt {n}: duplicate", msg + "\n")
                if used >= self.max_attempts:
                    return "FAILED", EXIT_FAILED, f"no working program after {used} attempts"
                text, kind = prompts.duplicate_prompt(seen[digest]), "duplicate"
                continue
            version, files = self._save(files, st.slug, last_version + 1)
            last_version = version
            seen[digest] = version
            attempt_id = self.history.add_attempt(
                st.session_id, n=n, version=version, prompt_id=prompt_id,
                files=[f"programs/{f.saved_name}" for f in files], entry=entry,
                target=target.name)
            st.attempts.append({"n": n, "version": version,
                                "files": [f"programs/{f.saved_name}" for f in files]})
            self._emit(CodeReady(n, files, entry, [f"programs/{f.saved_name}" for f in files],
                                 previous))
            decision = await self._approve(n, files, entry)
            self.history.update_attempt(attempt_id, decision=decision.action, note=decision.note)
            st.attempts[-1]["decision"] = decision.action
            st.transcript.section(f"Decision {n}", f"{decision.action}"
                                  + (f": {decision.note}" if decision.note else "") + "\n")
            if decision.action == "stop":
                self.history.update_attempt(attempt_id, status="STOPPED", finished_at=time.time())
                return "STOPPED", EXIT_FAILED, "stopped by the user"
            if decision.action == "reject":
                self.history.update_attempt(attempt_id, status="REJECTED", finished_at=time.time())
                if used >= self.max_attempts:
                    return "FAILED", EXIT_FAILED, f"no accepted program after {used} attempts"
                text = prompts.reject_prompt(decision.note or "Please try another approach.")
                kind = "reject"
                continue
            if decision.action == "edit" and decision.files:
                edited = [replace(f, content=decision.files.get(f.name, f.content)) for f in files]
                if _digest(edited) != digest:
                    self._pending_edit_note = prompts.edit_note(files, edited)
                    version, files = self._save(edited, st.slug, last_version + 1)
                    last_version = version
                    seen[_digest(files)] = version
                    saved = [f"programs/{f.saved_name}" for f in files]
                    self.history.update_attempt(attempt_id, version=version, files=saved)
                    st.attempts[-1].update(version=version, files=saved, edited=True)
                    self._emit(Notice(f"your edit is saved as {', '.join(saved)}"))
            if self.target is not target:  # switched while the code was shown: run there
                target = self.target
                await self._probe(target)
                self.history.update_attempt(attempt_id, target=target.name)
            python = await self._dependencies(target, files, ex)
            result, verdict = await self._execute(target, n, attempt_id, version, files, entry,
                                                  ex, python)
            previous = files
            if verdict.ok:
                return "SUCCESS", EXIT_SUCCESS, verdict.reason
            if verdict.status == "target_error":
                return "TARGET_ERROR", TargetError.exit_code, verdict.reason
            if used >= self.max_attempts:
                return ("FAILED", EXIT_FAILED,
                        f"still failing after {used} attempts: {verdict.reason}")
            text = prompts.feedback_prompt(
                result, verdict.reason, attempt=used, max_attempts=self.max_attempts,
                retry_hint=getattr(verdict, "retry_hint", ""), edit_note=self._pending_edit_note)
            self._pending_edit_note = ""
            kind = "feedback"
            if self.review_feedback and not self.auto_accept:
                fd = await self._wait(partial(FeedbackReady, text))
                if not fd.send:
                    return "STOPPED", EXIT_FAILED, "stopped by the user before sending feedback"
                text = fd.text or text

    # -- steps -------------------------------------------------------------------

    async def _wait(self, make: Callable[[asyncio.Future[T]], Event]) -> T:
        fut: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._emit(make(fut))
        return await fut

    async def _approve(self, n: int, files: list[ProgramFile], entry: str) -> Decision:
        if self.auto_accept:
            return Decision("accept")
        return await self._wait(lambda fut: ApprovalNeeded(n, files, entry, fut))

    async def _probe(self, target: Target) -> str:
        self._emit(Notice(f"probing {target.name}"))
        await target.connect()
        context = await target.probe()
        self._contexts[target.name] = context
        self._run_state.transcript.block(f"Context: {target.name}", context, "markdown")
        return context

    async def _ask(self, text: str, kind: str) -> tuple[int, str]:
        st = self._run_state
        st.prompts += 1
        prompt_id = self.history.add_prompt(st.session_id, kind, text)
        st.transcript.block(f"Prompt {st.prompts} ({kind})", text, "text")
        self._emit(PromptSent(text, kind, self.attempt + 1))
        if hasattr(self.llm, "on_thinking"):  # an API backend: reasoning apart, waits told
            self.llm.on_thinking = lambda so_far: self._emit(ThinkingText(so_far))
            self.llm.on_notice = lambda note: self._emit(Notice(note, "warning"))
        try:
            answer = await self.llm.ask(text, lambda so_far: self._emit(AnswerText(so_far)))
        except BaseException:
            # The browser died or the user stopped: keep where the conversation lives,
            # so the next prompt goes back to it rather than to a new chat.
            if self.llm.conversation_url:
                self.history.set_conversation(st.session_id, self.llm.conversation_url)
                st.conversation_url = self.llm.conversation_url
            raise
        self.history.set_answer(prompt_id, answer.markdown)
        url = answer.conversation_url or self.llm.conversation_url
        self.history.set_conversation(st.session_id, url)
        st.conversation_url = url or st.conversation_url
        if answer.thinking:
            st.transcript.block(f"Thinking {st.prompts} (not part of the answer)",
                                answer.thinking, "text")
        st.transcript.block(f"Answer {st.prompts}", answer.markdown, "markdown")
        if answer.details:
            st.transcript.section(f"Provider of answer {st.prompts}", f"- {answer.details}\n")
        self._emit(AnswerDone(answer.markdown, url))
        return prompt_id, answer.markdown

    def _log_extraction(self, n: int, ex: Extraction) -> None:
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
        self._run_state.transcript.section(f"Extraction {n}",
                                           "\n".join(lines or ["- no code blocks"]) + "\n")
        for note in ex.notes:
            self._emit(Notice(note, "warning"))

    def _files(self, ex: Extraction, slug: str) -> tuple[list[ProgramFile], str]:
        """The answer's files (programs, and named data files) and the one to run."""
        files: list[ProgramFile] = []
        runnable: list[ProgramFile] = []
        names: set[str] = set()
        unnamed = 0
        for b in ex.blocks:
            if not b.runnable and not b.filename:
                continue
            name = b.filename
            if not name or name in names:
                unnamed += 1
                base = slug if unnamed == 1 and not name else f"{slug}_part{unnamed}"
                name = base + extension_for(b.language)
            names.add(name)
            f = ProgramFile(name=name, saved_name=name, content=b.code,
                            language=b.language or "text")
            files.append(f)
            if b.runnable and language_named(b.language):
                runnable.append(f)
        if not runnable:
            return files, ""
        for f in runnable:
            if Path(f.name).stem.lower() in _ENTRY_STEMS:
                return files, f.name
        return files, runnable[0].name

    def _save(self, files: list[ProgramFile], slug: str,
              start: int) -> tuple[int, list[ProgramFile]]:
        ws = self.workspace
        while True:
            n = ws.versioned_names([f.name for f in files], slug, start)
            try:
                for f in files:
                    ws.save_program(f.name, n, f.content)
            except FileExistsError:  # another session took it meanwhile
                start = n + 1
                continue
            return n, [replace(f, saved_name=versioned(f.name, n)) for f in files]

    async def _dependencies(self, target: Target, files: list[ProgramFile],
                            ex: Extraction) -> str | None:
        python = self._python.get(target.name)
        if not any(f.language == "python" for f in files):
            return python
        modules, declared = needed_packages(files, ex.dependencies)
        # canonical package name -> (name to pip install, module that proves it is there)
        wanted = {_canonical(p): (p, _module_guess(p)) for p in declared}
        for m in modules:
            pkg = pip_name(m)
            wanted[_canonical(pkg)] = (wanted.get(_canonical(pkg), (pkg, m))[0], m)
        if not wanted:
            return python
        mods = sorted({m for _, m in wanted.values()})
        missing_mods = set(await target.missing_modules(mods, python))
        packages = sorted(p for p, m in wanted.values() if m in missing_mods)
        if not packages:
            return python
        question = (f"The program needs {', '.join(packages)}, not installed on {target.name}. "
                    f"Install into the workspace's virtual environment there?")
        ok = self.auto_install or await self._wait(
            lambda fut: PermissionNeeded(question, packages, fut))
        st = self._run_state
        if not ok:
            self._emit(Notice(f"not installing {', '.join(packages)}: the run will likely fail",
                              "warning"))
            st.transcript.section("Dependencies", f"declined: {', '.join(packages)}\n")
            return python
        self._emit(Notice(f"installing {', '.join(packages)} on {target.name}"))
        try:
            python = await target.install(packages, lambda s, t: self._emit(Output(s, t)))
        except TargetError:
            raise
        except VerifyBotError as e:
            self._emit(Notice(f"installing failed: {e}", "error"))
            st.transcript.section("Dependencies", f"install of {', '.join(packages)} failed: "
                                  f"{e}\n")
            return python
        self._python[target.name] = python
        st.transcript.section("Dependencies", f"installed: {', '.join(packages)} ({python})\n")
        return python

    async def _execute(self, target: Target, n: int, attempt_id: int, version: int,
                       files: list[ProgramFile], entry: str, ex: Extraction,
                       python: str | None) -> tuple[RunResult, Verdict]:
        st = self._run_state
        entry_file = next(f for f in files if f.name == entry)
        signs = long_running_signs(entry_file.content, entry_file.language)
        timeout = self.timeout
        if ex.timeout and ex.timeout > timeout:
            timeout = min(ex.timeout, MAX_TIMEOUT)
        run_id = f"{st.slug}_{version}"
        out_path = self.workspace.outputs / f"{st.slug}_{version}.txt"
        out_rel = f"outputs/{out_path.name}"
        request = RunRequest(run_id=run_id, files=files, entry=entry,
                             language=entry_file.language, timeout=timeout,
                             long_running=bool(signs), python=python)
        self.history.update_attempt(attempt_id, status="RUNNING", output_file=out_rel)
        self._emit(RunStarted(n, target.name, run_id))
        started = time.monotonic()
        with _OutputFile(out_path, f"programs/{entry_file.saved_name}", target.name) as out:
            def on_output(stream: str, text: str) -> None:
                out.add(stream, text)
                self._emit(Output(stream, text))
            try:
                result = await target.run(request, on_output)
            except TargetError as e:
                result = RunResult(exit_code=None, stdout="", stderr="",
                                   duration=time.monotonic() - started, target_error=str(e))
            except asyncio.CancelledError:
                out.footer("stopped by the user before the program ended")
                self.history.update_attempt(attempt_id, status="STOPPED", verdict="cancelled",
                                            finished_at=time.time())
                st.transcript.section(f"Run {n}", f"stopped by the user; output in {out_rel}\n")
                raise
            verdict = judge(result, signs, timeout=timeout)
            out.footer(f"exit status: {result.exit_code}; {result.duration:.2f} s; "
                       f"verdict: {verdict.status}: {verdict.reason}")
        status = "SUCCESS" if verdict.ok else (
            "TARGET_ERROR" if verdict.status == "target_error" else "FAILED")
        self.history.update_attempt(attempt_id, status=status, verdict=verdict.status,
                                    reason=verdict.reason, exit_code=result.exit_code,
                                    finished_at=time.time())
        st.attempts[-1].update(status=status, verdict=verdict.status, reason=verdict.reason,
                               exit_code=result.exit_code, output=out_rel, target=target.name)
        body = (f"- target: {target.name}\n- command: {result.command or '(none)'}\n"
                f"- exit status: {result.exit_code}\n- duration: {result.duration:.2f} s\n"
                f"- timeout: {timeout:g} s{' (reached)' if result.timed_out else ''}\n"
                f"- verdict: {verdict.status}: {verdict.reason}\n- output: {out_rel}\n\n"
                + wrap_fence(prompts.head_tail(_merge(result)), "text"))
        st.transcript.section(f"Run {n}", body)
        self._emit(RunFinished(n, result, out_rel))
        self._emit(VerdictReached(n, verdict))
        return result, verdict

    def _record(self, status: str, code: int, message: str) -> dict[str, Any]:
        st = self._run_state
        return {
            "session": st.session_id, "prompt": st.prompt, "slug": st.slug,
            "status": status, "exit_code": code, "message": message,
            "prompts": st.prompts, "attempts": st.attempts,
            "target": self.target.name, "llm": self.llm.name,
            "conversation_url": st.conversation_url,
            "started": st.started, "finished": time.time(),
            "transcript": self.workspace.rel(st.transcript.path),
            "workspace": str(self.workspace.root),
        }


class _RunState:
    """What one session of the loop accumulates for its transcript and record."""

    def __init__(self, *, session_id: int, slug: str, transcript: Transcript, prompts: int,
                 started: float, prompt: str) -> None:
        self.session_id = session_id
        self.slug = slug
        self.transcript = transcript
        self.prompts = prompts
        self.started = started
        self.prompt = prompt
        self.attempts: list[dict[str, Any]] = []
        self.conversation_url: str | None = None


class _OutputFile:
    """outputs/<slug>_<n>.txt written as the output arrives (a kill keeps what came)."""

    def __init__(self, path: Path, program: str, target: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._f = open(path, "x", encoding="utf-8", errors="replace", newline="")
        self._f.write(f"# {program} on {target}, {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
                      "# stderr lines are marked 'stderr| '\n")
        self._last_stream = "stdout"
        self._at_line_start = True

    def add(self, stream: str, text: str) -> None:
        if stream == "stderr":
            lines = text.splitlines(keepends=True)
            prefixed = []
            for line in lines:
                prefixed.append(("stderr| " if self._at_line_start else "") + line)
                self._at_line_start = line.endswith("\n")
            self._f.write("".join(prefixed))
        else:
            if self._last_stream == "stderr" and not self._at_line_start:
                self._f.write("\n")
            self._f.write(text)
            self._at_line_start = text.endswith("\n")
        self._last_stream = stream
        self._f.flush()

    def footer(self, text: str) -> None:
        if not self._at_line_start:
            self._f.write("\n")
        self._f.write(f"# {text}\n")
        self._f.flush()

    def __enter__(self) -> _OutputFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()


def _merge(result: RunResult) -> str:
    parts = []
    if result.stdout.strip():
        parts.append(result.stdout.rstrip("\n"))
    if result.stderr.strip():
        parts.append("--- stderr ---\n" + result.stderr.rstrip("\n"))
    if result.target_error:
        parts.append(f"--- target error ---\n{result.target_error}")
    return "\n".join(parts) or "(no output)"


def _digest(files: list[ProgramFile]) -> str:
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.name):
        h.update(f.name.encode() + b"\0" + f.content.strip().encode() + b"\0")
    return h.hexdigest()


def _canonical(package: str) -> str:
    """PEP 503: 'Tomli_W' and 'tomli-w' are one package."""
    return re.sub(r"[-_.]+", "-", package.split("[")[0].strip()).lower()


def _module_guess(package: str) -> str:
    return package.split("[")[0].strip().lower().replace("-", "_")


def _one_line(text: str, limit: int = 100) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _free_path(folder: Path, stem: str, ext: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path, i = folder / f"{stem}{ext}", 1
    while path.exists():
        i += 1
        path = folder / f"{stem}_{i}{ext}"
    return path


def _note_interrupted(session: dict[str, Any]) -> None:
    path = session.get("transcript")
    if path and Path(path).is_file():
        with open(path, "a", encoding="utf-8") as f:
            f.write("\n## Final status\n\nINTERRUPTED: the process running this session ended "
                    "before it finished (found at the next start)\n")


async def drain(events: AsyncIterator[Event],
                handle: Callable[[Event], Awaitable[None] | None]) -> Finished | None:
    """Feed every event to ``handle``; return the Finished event (a small front-end helper)."""
    finished = None
    async for ev in events:
        res = handle(ev)
        if asyncio.iscoroutine(res):
            await res
        if isinstance(ev, Finished):
            finished = ev
    return finished


__all__ = ["VerifyLoop", "drain", "Decision", "FeedbackDecision"]
