"""The text VerifyBot sends to the LLM.

The first prompt carries the target's context and the rules the older
scripts learned the hard way. Every later prompt carries only the failing
run's facts, never an earlier answer, and quotes them exactly: the output,
the compiler's messages and the user's changes go in fenced blocks
(chat_text.quoted), byte for byte, so the LLM reads `**`, `~~~` and `#` as
they ran, and the chat box shows them as they are.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from verifybot_tui.core.answers.file_changes import EditProblem
from verifybot_tui.core.base.chat_text import flatten, head_tail, quoted
from verifybot_tui.core.base.ports import ProgramFile, RunResult

RULES = """Rules for your answer:
1. Put all the code in one fenced code block with its language. For work that needs several files, use one fenced block per file and write its file name in bold on its own line just before each block.
2. Write nothing after the closing fence of the last block.
3. Prefer the standard library. If the program needs packages that are not installed, add a line DEPENDENCIES: a, b before the code.
4. The program is stopped after {timeout} seconds. If it needs longer, add a line TIMEOUT: <seconds> before the code.
5. The program runs with no input: standard input is closed. It must finish by itself and print what it did.
6. Use ASCII characters only in the code and its output.
7. Keep it simple: the smallest complete program that does the task.
8. After a failed run, send only the files you change, each complete, under its name in bold as in rule 1; the files you do not send stay as they ran. Edits in SEARCH/REPLACE blocks (the file name on its own line, then <<<<<<< SEARCH, the exact lines, =======, the new lines, >>>>>>> REPLACE) are applied too. To delete or rename a file, say so in words: delete `old.py`, rename `a.py` to `b.py`."""

# What every follow-up asks for (rule 8): the files that change, each one whole.
CHANGED_FILES = "Please send the files you change, complete, following the same rules."

FIRST = """{task}

The program will run on this machine ({target}), described here:

{context}

{rules}"""



def first_prompt(task: str, *, target: str, context: str, timeout: float) -> str:
    return FIRST.format(task=task.strip(), target=target, context=flatten(context),
                        rules=RULES.format(timeout=int(timeout)))


def _section(name: str, text: str) -> str:
    text = text.strip("\n")
    return f"{name}:\n{quoted(head_tail(text))}" if text.strip() else f"{name}: (nothing)"


def _sentence(text: str) -> str:
    """A reason written to follow a colon ("the program printed nothing") as a sentence."""
    text = text.strip()
    return text[:1].upper() + text[1:]


def feedback_prompt(result: RunResult, reason: str, *, attempt: int, max_attempts: int,
                    retry_hint: str = "", edit_note: str = "") -> str:
    """What to tell the LLM after a failed run: the facts of that run only."""
    what = "The build failed" if result.compile_failed else "The program failed"
    parts = []
    if edit_note:
        parts.append(edit_note)
    parts.append(f"{what} (attempt {attempt} of {max_attempts}). {_sentence(reason)}")
    if result.exit_code is not None:
        parts.append(f"Exit status: {result.exit_code}")
    parts.append(_section("Output (stdout)", result.stdout))
    parts.append(_section("Errors (stderr)", result.stderr))
    if retry_hint:
        parts.append(retry_hint)
    parts.append(CHANGED_FILES)
    return "\n\n".join(parts)


def edit_note(before: list[ProgramFile], after: list[ProgramFile]) -> str:
    """A short plain-text diff telling the LLM what the user changed by hand."""
    old = {f.name: f.content for f in before}
    chunks = []
    for f in after:
        diff = difflib.unified_diff(old.get(f.name, "").splitlines(), f.content.splitlines(),
                                    f"{f.name} (yours)", f"{f.name} (as run)", lineterm="", n=1)
        text = "\n".join(diff)
        if text:
            chunks.append(text)
    if not chunks:
        return ""
    body = head_tail("\n".join(chunks), head=40, tail=20, max_chars=3000)
    return ("Note: I edited your code by hand before running it. The changes:\n"
            + quoted(body, "diff"))


def whole_file_prompt(problems: Sequence[EditProblem]) -> str:
    """The short follow-up after edits that did not apply: what failed, and the files.
    An edit that names no file (and fits none, or several) is asked about as such: the
    LLM is to say which file it meant, whole."""
    sentences = [f"The edit to {p.path} did not match the file: {p.message.rstrip('.')}."
                 if p.path else
                 f"An edit that names no file did not apply: {p.message.rstrip('.')}."
                 for p in problems]
    names = list(dict.fromkeys(p.path for p in problems if p.path))
    if not names:
        return " ".join(sentences) + (" Please send the complete file you meant to change, "
                                      "its name on the line before the code block.")
    wanted = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    also = (" and the file the unnamed edit was for, named" if len(names) < len(problems)
            and any(not p.path for p in problems) else "")
    return " ".join(sentences) + f" Please send the complete {wanted}{also}."


def reject_prompt(note: str) -> str:
    return ("I did not run that version. " + note.strip() +
            "\n\nPlease send the files you change, complete, following the same rules.")


def duplicate_prompt(version: int) -> str:
    return (f"That code is identical to version {version}, which was already run and failed. "
            "Please change the approach and send the files you change, complete, "
            "following the same rules.")


def no_code_prompt() -> str:
    return ("Your answer held no program in a fenced code block, so nothing could be run. "
            "Please send the complete program in one fenced code block, following the rules.")


def context_update(target: str, context: str) -> str:
    return (f"From now on the program runs on another machine ({target}), described here:\n\n"
            f"{flatten(context)}\n\n")
