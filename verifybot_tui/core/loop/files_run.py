"""A session whose one attempt's files come from a client (an agent over MCP), not an LLM.

An agent that wrote its own program asks VerifyBot to run it and say what the run
showed. That must be exactly what an accepted attempt is, or the verdicts would mean
different things: so this is the verify loop itself, with the asking and the
extraction replaced by the files given. The files are saved as a version, the attempt
is recorded as accepted, the missing packages go through the same install question
(answered by the front end), and the run, its output file, the verdict, the criteria
and the judge are the loop's own steps. There is one attempt and no feedback: the
client is the one who fixes.
"""

from __future__ import annotations

from verifybot_tui.core.answers.extract import Extraction
from verifybot_tui.core.answers.hints import confine_name
from verifybot_tui.core.answers.languages import language_for_filename
from verifybot_tui.core.answers.programs import digest, pick_entry
from verifybot_tui.core.base.errors import EXIT_FAILED, ConfigError, TargetError
from verifybot_tui.core.base.outcome import Outcome, Status
from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.core.loop.steps.approving import approve
from verifybot_tui.core.loop.steps.dependencies import install_missing
from verifybot_tui.core.loop.steps.extracting import save
from verifybot_tui.core.loop.steps.running import execute
from verifybot_tui.core.loop.steps.state import Code, Conversation, Turn
from verifybot_tui.core.loop.steps.verifying import verify
from verifybot_tui.core.loop.verify_loop import VerifyLoop


def given_files(files: list[tuple[str, str]], entry: str | None,
                max_files: int) -> tuple[list[ProgramFile], str]:
    """The client's ``(path, content)`` pairs as program files, and the one to run.

    A path that would leave the run folder (``..``, absolute, a home, a drive) is
    refused with the reason, never repaired: the client must send it again right.
    """
    if not files:
        raise ConfigError("no files: send at least one {path, content}")
    if len(files) > max_files:
        raise ConfigError(f"{len(files)} files is more than [run] max_files = {max_files}")
    out: list[ProgramFile] = []
    seen: set[str] = set()
    for path, content in files:
        name, why = confine_name(path)
        if name is None:
            why = why.replace("programs/", "the run folder")
            raise ConfigError(f"file path {path!r} refused: {why}; paths are relative to "
                              "the run folder (src/main.c), without '..'")
        if name in seen:
            raise ConfigError(f"file path {name!r} is given twice")
        seen.add(name)
        lang = language_for_filename(name)
        out.append(ProgramFile(name=name, saved_name=name, content=content,
                               language=lang.name if lang else "text"))
    return out, _entry(out, entry)


def _entry(files: list[ProgramFile], entry: str | None) -> str:
    runnable = [f for f in files if f.language != "text"]
    if entry:
        wanted = entry.strip().removeprefix("./")
        match = next((f for f in files if f.name == wanted), None)
        if match is None:
            raise ConfigError(f"entry {entry!r} is not one of the files sent: "
                              f"{', '.join(f.name for f in files)}")
        if match.language == "text":
            raise ConfigError(f"entry {entry!r} is not in a language VerifyBot runs "
                              "(its extension says which: .py, .c, .cpp, .sh, .js, ...)")
        return match.name
    if not runnable:
        raise ConfigError("none of the files is in a language VerifyBot runs (the extension "
                          "says which: .py, .c, .cpp, .sh, .js, ...); name the files so")
    return pick_entry(runnable)


class FilesLoop(VerifyLoop):
    """The verify loop for files given whole: one accepted attempt, run and judged.

    Build it with ``max_retries=0`` and ``auto_accept=True``; ``auto_install`` says
    whether missing packages may be installed (a ``PermissionNeeded`` asks otherwise).
    """

    def __init__(self, *, files: list[ProgramFile], entry: str,
                 dependencies: list[str] | None = None, **loop_args: object) -> None:
        super().__init__(**loop_args)  # type: ignore[arg-type]
        self.files = files
        self.entry = entry
        self.dependencies = list(dependencies or [])

    async def _converse(self, prompt: str, *, new_chat: bool, resume: bool) -> Outcome:
        conv = Conversation(first_attempt=1, target=self.target)
        prompt_id = self.recorder.prompt_sent("files", prompt)
        self.attempt = 1
        ex = Extraction(dependencies=self.dependencies)
        code = Code(ex, list(self.files), self.entry, digest(self.files))
        if not await save(self, 1, prompt_id, code, conv):
            return Outcome(Status.ERROR, EXIT_FAILED, f"{self.entry} could not be saved")
        step = await approve(self, 1, 1, code, conv)
        if not isinstance(step, Code):
            return _outcome(step)
        python = await install_missing(self, conv.target, step.files, step.ex)
        result, verdict = await execute(self, conv.target, 1, step, python)
        if verdict.ok:
            return _outcome(await verify(self, 1, 1, result, verdict, step, conv.target))
        if verdict.status == "target_error":
            return Outcome(Status.TARGET_ERROR, TargetError.exit_code, verdict.reason)
        return Outcome.failed(verdict.reason)


def _outcome(step: Outcome | Turn) -> Outcome:
    """With one attempt allowed every step ends the session; a Turn would be a retry."""
    if isinstance(step, Outcome):
        return step
    return Outcome.failed("the run did not pass its checks")
