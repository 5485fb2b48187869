"""Turn an LLM's markdown answer into code blocks, file names and run hints.

This module decides, block by block, what an answer holds: a program to run, a file
to lay out, or neither (commands, trees, output). The readings it builds on live
beside it: markdown_walk (the parse), hints (names), guess (languages), kinds (what
is not a program), directives (TIMEOUT, DEPENDENCIES), names (confinement).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from markdown_it import MarkdownIt

from verifybot_tui.core.answers.directives import (
    DEPS_RE,
    declared_dependencies,
    directive_lines,
    timeout_values,
)
from verifybot_tui.core.answers.edits.edit_forms import edit_form, says_function
from verifybot_tui.core.answers.edits.splice import definition_name
from verifybot_tui.core.answers.fence_repair import repair_fences
from verifybot_tui.core.answers.guess import (
    SAMPLE,
    guess_language,
    looks_like_code,
    python_program,
    shebang_language,
    unglue,
)
from verifybot_tui.core.answers.hints import (
    TEXT_FILE_LANGUAGES,
    Hint,
    Prose,
    comment_hint,
    confine_name,
    data_language,
    hint_fits,
    name_after,
    normalise_language,
    parse_info,
    raw_names,
    shown_name,
)
from verifybot_tui.core.answers.kinds import (
    OUTPUT_RE,
    PARTIAL_RE,
    TRACEBACK_RE,
    command_lines,
    looks_like_transcript,
    looks_like_tree,
    pip_installs,
    run_mentions,
    tree_paths,
)
from verifybot_tui.core.answers.languages import (
    NOT_PROGRAM_LANGUAGES,
    language_for_filename,
    language_named,
)
from verifybot_tui.core.answers.markdown_walk import (
    COLLAPSE_ABOVE,
    Fence,
    collapse_fences,
    collapse_prose,
    line_mapper,
    walk_items,
)

__all__ = ["COLLAPSE_ABOVE", "SAMPLE", "CodeBlock", "Extraction", "collapse_fences",
           "collapse_prose", "confine_name", "extract", "guess_language", "line_mapper"]


@dataclass
class CodeBlock:
    code: str  # "\r" removed, ends with exactly one "\n" ("" when empty)
    language: str  # a core.answers.languages name, the lower-cased info word, or "" if unknown
    info: str  # raw info string of the fence
    filename: str | None  # confined relative posix name from a hint, else None
    runnable: bool
    reason: str  # why not runnable ("" when runnable)
    line: int  # 1-based line of the opening fence
    # How the block makes its file: "whole" | "search-replace" | "diff" | "function" |
    # "elided" | "not-a-file" (tree_changes applies the edits to a project tree).
    how: str = "whole"
    # The file's text once this answer is applied to an empty tree (the REPLACE side
    # of a new-file SEARCH/REPLACE block); None when the block edits a file the answer
    # does not hold, or is no file.
    content: str | None = None


@dataclass
class Extraction:
    blocks: list[CodeBlock] = field(default_factory=list)
    timeout: float | None = None
    dependencies: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def programs(self) -> list[CodeBlock]:
        return [b for b in self.blocks if b.runnable]



_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def _clean_code(content: str) -> tuple[str, bool]:
    """Trailing blank lines trimmed, one final newline; web-copy spaces repaired."""
    fixed = content.replace("\u00a0", " ").replace("\u202f", " ").translate(_ZERO_WIDTH)
    body = fixed.rstrip()
    return (body + "\n" if body else ""), fixed != content



@dataclass
class _Pending:
    block: CodeBlock
    fence: Fence
    index: int  # position in the items list
    explicit: str | None  # name from the info string or a first-line comment
    guessed: bool
    kind: str  # "program", "data", "other"


def extract(markdown: str) -> Extraction:
    """Every fenced block of an answer, judged runnable or not, with names and hints."""
    markdown = markdown.replace("\r\n", "\n").replace("\r", "")
    ex = Extraction()
    markdown, ex.notes = repair_fences(markdown)
    md = MarkdownIt("commonmark").disable("inline")  # per paragraph when read: Prose
    items = walk_items(markdown, md)
    pending: list[_Pending] = []
    for index, item in enumerate(items):
        if isinstance(item, Fence):
            pending.append(_read_fence(item, index, items, ex))

    _name_blocks(pending, items, ex)
    _place_by_tree(pending, ex)
    installs = _mark_commands(pending, items, ex)
    _supersede_duplicates(pending, ex)
    _mark_functions(pending, items)
    ex.blocks = [p.block for p in pending]
    for b in ex.blocks:
        if b.how == "whole" and not (b.runnable or b.filename) and not b.reason.endswith(
                "not a language VerifyBot runs"):
            b.how, b.content = "not-a-file", None

    timeouts = timeout_values(markdown)
    if timeouts:
        ex.timeout = max(timeouts)
        if len(set(timeouts)) > 1:
            ex.notes.append(f"several TIMEOUT values ({', '.join(f'{t:g}' for t in timeouts)}); "
                            f"using the longest, {ex.timeout:g} s")
    declared = declared_dependencies(markdown, ex.notes)
    if declared or any(DEPS_RE.match(ln) for ln in directive_lines(markdown, "DEPENDENCIES")):
        ex.dependencies = declared
    elif installs:
        ex.dependencies = installs
        ex.notes.append(f"dependencies read from `pip install`: {', '.join(installs)}")
    return ex


def _read_text(fence: Fence, index: int, items: list[Prose | Fence],
               ex: Extraction) -> tuple[str, str | None, str, tuple[str, str, str], str | None]:
    """(language, name from the info string, text, (block text, how, edit's path), content):
    the block as a person reads it, web-copy spaces and a glued language label mended,
    and the form its file takes (whole, or an edit)."""
    word, info_name = parse_info(fence.token.info)
    raw, repaired = _clean_code(fence.token.content)
    if repaired:
        ex.notes.append(f"block at line {fence.line}: non-breaking or zero-width spaces "
                        "replaced (a copy from a web page)")
    if not word and (glued := unglue(raw)) is not None:
        word, raw = glued
        ex.notes.append(f"block at line {fence.line}: its first line began with `{word}`, "
                        "the language label a copy from a chat page glues to the code; "
                        f"read as `{word}` code without it")
    language = normalise_language(word) if word else ""
    how, content, edit_path = edit_form(raw, language)
    if not fence.closed:
        ex.notes.append(f"the code block at line {fence.line} is not closed: "
                        "the answer may have been cut off")
    edit = (raw, how, edit_path or _path_line_before(items, index, fence))
    if how in ("search-replace", "diff") and content is not None:
        raw = content  # a new file made by an edit: judged as the file it makes
        info_name = info_name or edit[2] or None
        named = data_language(info_name) if info_name else ""
        language = named if named and named != language else language  # requirements.txt
    if how == "elided":
        ex.notes.append(f"block at line {fence.line} leaves parts of its file out (it says "
                        "the rest is unchanged): it is merged into the project's file")
    elif PARTIAL_RE.search(raw):
        ex.notes.append(f"block at line {fence.line} looks partial (it says the rest is "
                        "unchanged): it may need merging with the previous version")
    return language, info_name, raw, edit, content


def _read_fence(fence: Fence, index: int, items: list[Prose | Fence],
                ex: Extraction) -> _Pending:
    tok = fence.token
    language, info_name, raw, edit, content = _read_text(fence, index, items, ex)
    if edit[1] != "whole" and content is None:
        return _read_edit(fence, index, ex, language, edit)
    comment_name, code = comment_hint(raw)
    explicit = info_name or comment_name
    guessed = False
    prev = items[index - 1] if index > 0 else None
    after_output = isinstance(prev, Prose) and bool(OUTPUT_RE.search(prev.text))

    if language == "python" and command_lines(code) and not python_program(code):
        language = "bash"
        ex.notes.append(f"block at line {fence.line} is tagged python but holds shell "
                        "commands; read as bash")
    if not language:
        language = shebang_language(code)
    if not language and explicit:
        hinted = language_for_filename(explicit.replace("\\", "/"))
        language = hinted.name if hinted else ""

    reason = _neither_program_nor_file(code, language, after_output)
    kind = "other" if reason and code else ""  # an empty block may still name a file
    if (not reason and not explicit and language in ("bash", "") and not code.startswith("#!")
            and command_lines(code)):  # a script with its #! line is a program
        language = language or "bash"
        reason = "commands to set up or run the program, not a program"
        kind = "commands"
    if not reason and language in NOT_PROGRAM_LANGUAGES:
        reason = f"a `{language}` block: output or notes, not a program"
    how = ""
    if not language and not reason:
        language = _language_from_prose(items, index, explicit)
        how = "from its file name"
        if not language:
            language = guess_language(code)
            how = "from the code"
        guessed = bool(language)
    if not reason and not language:
        reason = "no language tag, and the code looks like no language VerifyBot runs"
    elif not reason and not language_named(language):
        reason = f"`{language}` is not a language VerifyBot runs"

    kind = kind or ("data" if reason else "program")
    block = CodeBlock(code=code, language=language, info=tok.info, filename=None,
                      runnable=not reason, reason=reason, line=fence.line, content=code)
    if guessed:
        ex.notes.append(f"block at line {fence.line} has no language tag; "
                        f"guessed {language} {how}")
    if edit[1] != "whole":
        block.code, block.how = edit[0], edit[1]
    return _Pending(block, fence, index, explicit, guessed, kind)


_EDIT_WORDS = {"search-replace": "a SEARCH/REPLACE edit", "diff": "a diff"}


def _read_edit(fence: Fence, index: int, ex: Extraction, language: str,
               edit: tuple[str, str, str]) -> _Pending:
    """A block that edits a file the answer does not hold: no program, no file of its
    own; tree_changes applies it to the project's file."""
    code, how, path = edit
    reason = f"{_EDIT_WORDS[how]} of a file of the project: applied to that file, not run alone"
    block = CodeBlock(code=code, language=language, info=fence.token.info, filename=None,
                      runnable=False, reason=reason, line=fence.line, how=how, content=None)
    return _Pending(block, fence, index, path or None, False, "edit")


def _path_line_before(items: list[Prose | Fence], index: int, fence: Fence) -> str:
    """The path alone on the line right above an edit's fence (aider writes it so):
    the file the edit is for, whatever the fence's language says."""
    prev = items[index - 1] if index > 0 else None
    if not isinstance(prev, Prose) or prev.line + prev.raw.count("\n") != fence.line - 1:
        return ""
    last = prev.raw.rsplit("\n", 1)[-1].strip()
    names = raw_names(last)
    return names[0] if len(names) == 1 and len(last.split()) == 1 else ""


def _neither_program_nor_file(code: str, language: str, after_output: bool) -> str:
    """Why a block is neither a program nor a file to save ("" when it may be either)."""
    if not code:
        return "an empty block"
    if looks_like_transcript(code):
        return "a console transcript (lines start with a prompt such as `$ ` or `>>> `)"
    if looks_like_tree(code):
        return _TREE_REASON
    if TRACEBACK_RE.match(code):
        return "an error message (a Python traceback), not a program"
    if after_output and not looks_like_code(code, language) and not command_lines(code):
        return "sample output (the text before it says so), not a program"
    if language in NOT_PROGRAM_LANGUAGES and language not in TEXT_FILE_LANGUAGES:
        return f"a `{language}` block: output or notes, not a program"
    return ""


def _language_from_prose(items: list[Prose | Fence], index: int,
                         explicit: str | None) -> str:
    """An untagged block right after "**main.py**" is Python, after "src/main.rs" Rust:
    the name says so (the name its first-line comment gives, if any, first)."""
    if explicit:
        return data_language(explicit)
    for hint in _hint_candidates(items, index):
        if not hint.used:
            return data_language(hint.name)
    return ""


def _hint_candidates(items: list[Prose | Fence], index: int,
                     nearest_only: bool = False) -> Iterator[Hint]:
    """The hints that may name the block at ``index``, in the order a person tries them.

    The nearest prose first, each paragraph in reading order ("save `config.json` next
    to `main.py`"); a list counts as one paragraph, so its files are matched in its
    order, not reversed. The search goes past an earlier block only while the prose
    between holds no hint at all (two files announced, then two blocks).
    """
    gap_had_hint = False
    i = index - 1
    while i >= 0:
        item = items[i]
        if isinstance(item, Fence):
            if gap_had_hint:
                return
            i -= 1
            continue
        first = i
        while (item.group is not None and first > 0 and isinstance(items[first - 1], Prose)
               and items[first - 1].group == item.group):  # type: ignore[union-attr]
            first -= 1
        unit = [p for p in items[first:i + 1] if isinstance(p, Prose)]
        for prose in unit:
            yield from prose.hints
        gap_had_hint = gap_had_hint or any(prose.hints for prose in unit)
        if nearest_only and not (len(unit) == 1 and not unit[0].hints
                                 and unit[0].raw.lstrip().startswith(("---", "==="))):
            return  # a marker line ("--- package.json (v2) ---") hides no heading above it
        i = first - 1


def _take_hint(items: list[Prose | Fence], index: int, language: str,
               nearest_only: bool = False) -> Hint | None:
    """The first unused fitting hint of :func:`_hint_candidates`, now used."""
    for hint in _hint_candidates(items, index, nearest_only):
        if not hint.used and hint_fits(hint.name, language):
            hint.used = True
            return hint
    return None


def _assign(p: _Pending, name: str, ex: Extraction) -> None:
    safe, why = confine_name(name)
    if safe is None:
        ex.notes.append(f"filename '{shown_name(name)}' rejected: {why}; "
                        "saved under a generated name")
    p.block.filename = safe


def _name_explicitly(p: _Pending, name: str, items: list[Prose | Fence],
                     ex: Extraction) -> None:
    """The name a block gives itself, with the folder a heading above gives it ("/* irq.h"
    under "### include/irq.h"); that heading names no other block then."""
    for seen in _hint_candidates(items, p.index, nearest_only=True):
        if "/" not in name and seen.name.rsplit("/", 1)[-1] == name:
            name = seen.name
    _assign(p, name, ex)
    for seen in _hint_candidates(items, p.index, nearest_only=True):
        if confine_name(seen.name)[0] == p.block.filename:
            seen.used = True


def _name_blocks(pending: list[_Pending], items: list[Prose | Fence], ex: Extraction) -> None:
    for p in pending:
        if p.explicit:
            _name_explicitly(p, p.explicit, items, ex)
    for p in pending:
        if p.explicit or p.kind == "other":
            continue
        fits = "" if p.block.how == "diff" else p.block.language  # a diff of any file
        hint = _take_hint(items, p.index, fits, nearest_only=p.kind != "program")
        if hint and p.kind == "commands" and PurePosixPath(hint.name).suffix not in (
                ".sh", ".bash", ".ps1", ".bat", ".cmd"):
            hint.used = False  # set-up commands are saved only as the script they name
            continue
        if hint is None and p.index + 1 < len(items) and isinstance(
                after := items[p.index + 1], Prose) and (
                named := name_after(after.raw)) and hint_fits(named, p.block.language):
            hint = Hint(named, after.line)  # "Save this as x.cpp." after the block
        if hint:
            _assign(p, hint.name, ex)
            named_language = data_language(hint.name)
            if not p.block.language and named_language and p.block.filename:
                p.block.language = named_language
                if p.block.code:  # an empty __init__.py stays "an empty block"
                    p.block.reason = f"`{named_language}` is not a language VerifyBot runs"


_TREE_REASON = "a project tree: it shows the layout, it is no file and no program"


def _place_by_tree(pending: list[_Pending], ex: Extraction) -> None:
    """A file named without its folder (**App.js**) goes where the answer's own project
    tree shows it (src/App.js), when the tree shows it in one place only: its imports
    (./components/WelcomePage) then find their files, as laid out by hand."""
    shown: dict[str, list[str]] = {}
    for p in pending:
        if p.block.reason == _TREE_REASON:
            for path in tree_paths(p.block.code):
                shown.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    for p in pending:
        name = p.block.filename
        if name and "/" not in name and len(places := shown.get(name, [])) == 1 and (
                "/" in places[0]):
            safe, _ = confine_name(places[0])
            if safe:
                p.block.filename = safe
                ex.notes.append(f"{name} (block at line {p.block.line}) is placed at {safe}, "
                                "where the answer's project tree shows it")


def _mark_commands(pending: list[_Pending], items: list[Prose | Fence],
                   ex: Extraction) -> list[str]:
    """Install and run instructions are not the program when the answer has one.

    ``pip install x`` / ``python3 main.py`` blocks would otherwise be run as
    the entry; they still tell us the dependencies and the program's name.
    """
    commands: dict[int, list[list[str]]] = {}
    for i, p in enumerate(pending):
        if p.kind == "commands" and not p.block.filename:
            commands[i] = command_lines(p.block.code) or []
    others = [p for i, p in enumerate(pending) if p.block.runnable and i not in commands]
    if not others:
        return []
    mentions: list[str] = []
    installs: list[str] = []
    for i, argvs in commands.items():
        block = pending[i].block
        block.reason = "commands to install or run the program, not the program itself"
        installs += pip_installs(argvs)
        mentions += run_mentions(argvs)
    for item in items:
        if isinstance(item, Prose):
            for code in item.commands:
                try:
                    mentions += run_mentions([shlex.split(code)] if code.strip() else [])
                except ValueError:
                    continue
    taken = {p.block.filename for p in pending if p.block.filename}
    for name in dict.fromkeys(mentions):
        if confine_name(name)[0] in taken:
            continue  # `python lsfl/main.py` runs the file the answer named: no other block
        for p in others:
            if p.block.filename is None and p.explicit is None and hint_fits(
                    name, p.block.language) and PurePosixPath(name).suffix:
                _assign(p, name, ex)
                if p.block.filename:
                    ex.notes.append(f"block at line {p.block.line} named {p.block.filename} "
                                    "after the command that runs it")
                break
    return list(dict.fromkeys(installs))


def _mark_functions(pending: list[_Pending], items: list[Prose | Fence]) -> None:
    """"Replace `parse()` in main.py with:" and a block of one definition: the block is
    that function of main.py, not the program (tree_changes splices it in)."""
    for p in pending:
        prev = items[p.index - 1] if p.index > 0 else None
        if (p.block.how == "whole" and isinstance(prev, Prose) and says_function(prev.raw)
                and definition_name(p.block.code, p.block.language)):
            p.block.how, p.block.content = "function", None  # runnable as it was: in a
            # new chat, with no file to splice it into, it is the program as written


def _supersede_duplicates(pending: list[_Pending], ex: Extraction) -> None:
    """Two blocks named main.py: the answer revised it, the later one counts. Edits of
    a file are not revisions of it: each applies to the file as the ones before left it."""
    last: dict[str, _Pending] = {}
    for p in pending:
        name = p.block.filename
        if not name or p.block.how != "whole":
            continue
        earlier = last.get(name)
        if earlier is not None:
            if earlier.block.runnable:
                earlier.block.runnable = False
                earlier.block.reason = f"replaced by the later {name} at line {p.block.line}"
            earlier.block.filename = None
            ex.notes.append(f"two blocks are named {name}; the one at line {p.block.line} "
                            "is used")
        last[name] = p
