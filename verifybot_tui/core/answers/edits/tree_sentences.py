"""Files an answer removes or renames in words: "delete `old.py`", "rename `a.py` to
`b.py`", ``rm old.py`` / ``git mv a.py b.py`` in a shell block.

A file leaves the project tree only when the answer says so in words a person acts
on, and only a file the tree holds: "remove the unused import" names no file, and
"don't delete `util.py`" keeps it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping

from verifybot_tui.core.answers.fence_repair import repair_fences

# A path as prose writes it: in backticks, bold, or bare (with a dot or a slash).
_PATH = r"[`*'\"]{{0,2}}(?P<{0}>[\w.\-/\\\[\]@+]+)[`*'\"]{{0,2}}"
_DELETE_RE = re.compile(
    r"\b(?:delete|remove|drop|get rid of)\s+(?:the\s+)?(?:old\s+|now[- ]unused\s+|unused\s+)?"
    r"(?:files?\s+|module\s+|folder\s+|directory\s+|package\s+)?"
    + _PATH.format("a") + r"(?=[\s.,;:)!]|$)", re.I)
_DELETED_RE = re.compile(
    _PATH.format("a") + r"\s+(?:(?:file|module|folder|directory|package)\s+)?"
    r"(?:is|are|can be|should be|must be|has been|was|will be)\s+"
    r"(?:now\s+)?(?:deleted|removed|no longer (?:needed|used|required))\b", re.I)
_RENAME_RE = re.compile(
    r"\b(?:rename|move)\s+(?:the\s+)?(?:files?\s+|module\s+)?" + _PATH.format("a")
    + r"\s+(?:to|as|into)\s+" + _PATH.format("b") + r"(?=[\s.,;:)!]|$)", re.I)
_RENAMED_RE = re.compile(
    _PATH.format("a") + r"\s+(?:is|was|has been|should be)\s+(?:now\s+)?(?:renamed|moved)\s+"
    r"(?:to\s+)?" + _PATH.format("b"), re.I)
_NEGATION_RE = re.compile(r"(?:n't|\bnot|\bno need to|\bnever|\bwithout|\binstead of)\s*"
                          r"(?:\w+\s+){0,2}$", re.I)
# "remove `config.py` from the imports" takes a name out of code, not a file away;
# "remove `old.py` from the project" does take it away.
_FROM_PART_RE = re.compile(
    r"[`*'\"]*\s+from\s+(?!(?:the\s+|your\s+|its\s+|this\s+)?"
    r"(?:project|repo\b|repository|folder|directory|tree|codebase|disk|workspace|root))\w", re.I)
_FENCE_RE = re.compile(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)")
_SHELL_INFO = frozenset({"bash", "sh", "shell", "console", "zsh", ""})

# The words every sentence and command above holds; a line without one is not read
# (str methods: an IGNORECASE alternation scans 50 MB of prose in seconds).
_ACTS = ("delet", "remov", "drop", "rid of", "renam", "move", "no longer", "rm ", "mv ")


def _acts(text: str) -> bool:
    low = text.lower()
    return any(word in low for word in _ACTS)


Found = tuple[str, str, str, int]  # (kind "removed"|"renamed", path, new path or "", line)


def removals_and_renames(answer: str, tree: Mapping[str, str]) -> list[Found]:
    """What the answer's words remove and rename among the files of ``tree``, in order."""
    found: list[Found] = []
    if not tree or not _acts(answer):
        return found  # most answers: no word that removes or renames (50 MB in a blink)
    names = {part for path in tree for part in path.split("/")}
    if not any(name in answer for name in names):
        return found
    mended, _ = repair_fences(answer.replace("\r\n", "\n"))  # a README's fences read right
    for line_no, line, shell in _lines(mended, names):
        if shell:
            found += _shell(line, line_no, tree)
            continue
        for m in _RENAME_RE.finditer(line):
            found += _rename(m, line, line_no, tree)
        for m in _RENAMED_RE.finditer(line):
            found += _rename(m, line, line_no, tree)
        moved = {f[1] for f in found if f[0] == "renamed"}
        for rx in (_DELETE_RE, _DELETED_RE):
            for m in rx.finditer(line):
                if not _negated(line, m.start()) and not _FROM_PART_RE.match(line, m.end()):
                    found += [("removed", p, "", line_no) for p in _files(m.group("a"), tree)
                              if not _moved_away(m.group("a"), moved)]
    return _once(found)


def _moved_away(raw: str, moved: set[str]) -> bool:
    """"Delete the original `llm.ts`" after "Move `llm.ts` to `src/llm.ts`": the file
    was moved, and the name is the old place's, never the new file's."""
    name = _norm(raw)
    return any(name in (old, old.rsplit("/", 1)[-1]) for old in moved)


def _lines(answer: str, names: set[str]) -> Iterator[tuple[int, str, bool]]:
    """(line number, text, inside a shell block) of the prose and shell-block lines that
    hold a word that acts and a name of the tree (str tests first: 50 MB stay quick)."""
    fence = ""
    shell = False
    for n, line in enumerate(answer.split("\n"), 1):
        if line[:6].lstrip(" ")[:3] in ("```", "~~~") and (m := _FENCE_RE.match(line)):
            if not fence:
                fence, shell = m.group(1), m.group(2).lower() in _SHELL_INFO
            elif line.strip().startswith(fence) and not m.group(2):
                fence = ""
            continue
        if (fence and not shell) or not any(name in line for name in names) or not _acts(line):
            continue
        yield n, line, bool(fence)


def _negated(line: str, at: int) -> bool:
    return bool(_NEGATION_RE.search(line[max(0, at - 30):at]))


def _rename(m: re.Match[str], line: str, line_no: int,
            tree: Mapping[str, str]) -> list[Found]:
    if _negated(line, m.start()):
        return []
    olds = _files(m.group("a"), tree)
    new = _norm(m.group("b"))
    if len(olds) != 1 or not new or "." not in new.rsplit("/", 1)[-1]:
        return []
    if "/" not in new and "/" in olds[0] and not m.group("b").startswith("./"):
        new = olds[0].rsplit("/", 1)[0] + "/" + new  # "rename `src/a.py` to `b.py`"
    return [("renamed", olds[0], new, line_no)] if new != olds[0] else []


def _shell(line: str, line_no: int, tree: Mapping[str, str]) -> list[Found]:
    """``rm old.py``, ``git rm -r config``, ``mv a.py b.py`` in a shell block."""
    try:
        argv = shlex.split(line.strip().lstrip("$ "))
    except ValueError:
        return []
    if argv[:1] == ["git"]:
        argv = argv[1:]
    words = [w for w in argv[1:] if not w.startswith("-")]
    if argv[:1] == ["rm"]:
        return [("removed", p, "", line_no) for w in words for p in _files(w, tree)]
    if argv[:1] == ["mv"] and len(words) == 2:
        olds = _files(words[0], tree)
        if len(olds) == 1 and (new := _norm(words[1])):
            return [("renamed", olds[0], new, line_no)]
    return []


def _norm(raw: str) -> str:
    name = raw.strip("`*'\"").replace("\\", "/")
    while name.startswith("./"):
        name = name[2:]
    return name.rstrip(".,;:")


def _files(raw: str, tree: Mapping[str, str]) -> list[str]:
    """The tree's files a written path means: the file itself, the files under a folder
    (``config/``, the ``config`` package), or the only file with that base name."""
    name = _norm(raw)
    if not name:
        return []
    if name in tree:
        return [name]
    folder = name.rstrip("/") + "/"
    under = [p for p in tree if p.startswith(folder)]
    if under:
        return under
    same = [p for p in tree if p.rsplit("/", 1)[-1] == name]
    return same if len(same) == 1 else []


def _once(found: list[Found]) -> list[Found]:
    seen: set[tuple[str, str]] = set()
    out: list[Found] = []
    for f in found:
        if (f[0], f[1]) not in seen:
            seen.add((f[0], f[1]))
            out.append(f)
    return out
