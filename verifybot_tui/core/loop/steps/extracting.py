"""The extract step: the answer's program, checked against what ran before, saved as a version.

An answer becomes ``Code``: its blocks extracted and applied to the chat's tree (an
edit that does not apply asks for the whole file, running nothing), a program already
run is not run again (the LLM is asked for a change), and a new one is saved under
programs/ as the next version and shown to the front ends.
"""

from __future__ import annotations

from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.answers.programs import digest, save_version
from verifybot_tui.core.base.offload import in_thread
from verifybot_tui.core.loop import prompts
from verifybot_tui.core.loop.events import CodeReady, Notice
from verifybot_tui.core.loop.project_tree import Planned, apply_answer
from verifybot_tui.core.loop.steps.state import Code, Conversation, LoopState, Step, Turn


async def extract_code(loop: LoopState, n: int, answer: str) -> Code:
    """Extraction and the clash checks grow with the answer: a worker thread does them."""
    def work() -> Code:
        ex = extract(answer)
        planned = apply_answer(loop.tree, answer, ex, loop.recorder.slug,
                               loop.config.run.max_files)
        return Code(ex, planned.files, planned.entry, digest(planned.files), planned=planned)

    code = await in_thread(work)
    loop.recorder.extraction(n, code.ex)
    for note in code.ex.notes:
        loop.emit(Notice(note, "warning"))
    return code


def not_applied(loop: LoopState, n: int, used: int, planned: Planned) -> Step:
    """An edit that does not apply unambiguously runs nothing: the LLM is asked, in
    the same chat, for the whole file (a retry, not a run)."""
    problems = planned.problems
    loop.recorder.edits_not_applied(n, [f"{p.path}: {p.message}" for p in problems])
    for p in problems:
        loop.emit(Notice(f"the edit to {p.path} did not apply: {p.message}; nothing "
                         "runs, asking for the whole file", "warning"))
    return loop.retry(used, "edits that did not apply",
                      Turn(prompts.whole_file_prompt(problems), "feedback"))


def dedupe(loop: LoopState, n: int, code: Code, conv: Conversation) -> Turn | None:
    """The code of a version already run is not run again: ask for a change."""
    version = conv.seen.get(code.digest)
    if version is None:
        return None
    msg = (f"attempt {n}: the code is identical to version {version}, "
           "so it is not run again; asking the LLM for a change")
    loop.emit(Notice(msg, "warning"))
    loop.recorder.duplicate(n, msg)
    return Turn(prompts.duplicate_prompt(version), "duplicate")


async def save(loop: LoopState, n: int, prompt_id: int, code: Code, conv: Conversation) -> bool:
    """Save the version; False when the file to run could not be saved (noted)."""
    await save_new_version(loop, code, conv)
    if not any(f.name == code.entry for f in code.files):
        loop.emit(Notice(f"{code.entry}, the file to run, could not be saved", "error"))
        return False
    saved = [f"programs/{f.saved_name}" for f in code.files]
    loop.recorder.attempt(n=n, version=code.version, prompt_id=prompt_id, files=code.files,
                          entry=code.entry, target=conv.target.name)
    how = code.planned.how if code.planned is not None else {}
    if code.planned is not None:
        loop.recorder.tree(n, code.planned.lines(), how)
    loop.emit(CodeReady(n, code.files, code.entry, saved, conv.previous, how=how))
    return True


async def save_new_version(loop: LoopState, code: Code, conv: Conversation) -> None:
    """The code's files saved as the conversation's next version (code and conv updated)."""
    notes: list[str] = []
    code.version, code.files = await in_thread(
        save_version, loop.workspace, code.files, loop.recorder.slug,
        conv.last_version + 1, notes=notes)
    for note in notes:
        loop.emit(Notice(note, "warning"))
    conv.last_version = code.version
    conv.seen[digest(code.files)] = code.version
