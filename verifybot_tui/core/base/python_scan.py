"""One pass over a Python program for every check that reads its syntax tree.

Two checks read a program's AST: the packages it imports (answers.deps) and
the signs that it may never end (verify.verdict). Each parsing the whole
program was most of a big answer's cost: a 5 MB program made two trees of a
million nodes, hundreds of MB each, and walked both (issue 22). Here:

- the program is cut at top-level statements into chunks of about 64 KB,
  parsed and walked one at a time, so memory stays bounded by one chunk's tree;
- a chunk is turned into a tree only when its text holds a word one of the
  checks looks for (``import``, ``while``, ...). Every other chunk is only
  *lexed* (strings and comments stripped by one regex, brackets counted), to
  know the cut before it ends at a real statement boundary: compiling it, as
  the first version did, cost as much as the program's own start (1.4 s of a
  5 MB answer's 3.9 s);
- each check registers a *collector*; the first request for a program runs
  every registered collector in that one pass and keeps their (small) results,
  so the second check costs a lookup.

A program that does not parse gives ``None`` for every collector: one that a
chunk with a tree fails, one cut off inside a string or brackets (an answer cut
short), one holding a NUL. A grammar error inside a chunk no check reads is left
to the run to show: what the checks report comes from the chunks that parse,
and a chunk without their words holds nothing for them.
"""

from __future__ import annotations

import ast
import hashlib
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Protocol

CHUNK = 64 * 1024
KEPT = 8  # programs whose results are kept (results only: a few short lists each)

# A line that may start a top-level statement: not indented, not a comment, not a closing
# bracket, not a clause that continues the statement before it.
_BOUNDARY = re.compile(r"\n(?=[^ \t#)\]}\n\r\f])(?!(?:else|elif|except|finally)\b)")


class Collector(Protocol):
    """What one check gathers from the trees of a program's chunks, in order."""

    words: tuple[str, ...]  # a chunk holding none of these has nothing for it

    def visit(self, tree: ast.Module, first_line: int) -> None:
        """One chunk's tree; its line n is the program's line ``first_line + n``."""

    def result(self) -> object: ...


_COLLECTORS: dict[str, Callable[[], Collector]] = {}
_RESULTS: OrderedDict[bytes, dict[str, object]] = OrderedDict()
_LOCK = threading.Lock()


def register(name: str, factory: Callable[[], Collector]) -> None:
    """A check's collector, run in every later pass (at import of the check's module)."""
    _COLLECTORS[name] = factory


def collected(code: str, name: str) -> object | None:
    """The named collector's result over ``code``: None when the code does not parse."""
    key = hashlib.blake2b(code.encode("utf-8", "surrogatepass"), digest_size=20).digest()
    with _LOCK:
        known = _RESULTS.get(key)
        if known is not None and name in known:
            _RESULTS.move_to_end(key)
            return known[name]
    wanted = {n: make() for n, make in _COLLECTORS.items() if known is None or n not in known}
    results: dict[str, object] = dict.fromkeys(wanted)
    if _scan(code, list(wanted.values())):
        results = {n: c.result() for n, c in wanted.items()}
    with _LOCK:
        _RESULTS.setdefault(key, {}).update(results)
        _RESULTS.move_to_end(key)
        while len(_RESULTS) > KEPT:
            _RESULTS.popitem(last=False)
        return _RESULTS[key].get(name)


def _scan(code: str, collectors: list[Collector]) -> bool:
    """Feed every chunk's tree to the collectors that may want it; False: no parse."""
    try:
        for first_line, chunk, tree in _chunks(code, collectors):
            if tree is not None:
                for c in collectors:
                    if any(w in chunk for w in c.words):
                        c.visit(tree, first_line)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte
        return False
    return True


def _chunks(code: str, collectors: list[Collector]
            ) -> Iterator[tuple[int, str, ast.Module | None]]:
    """(line before the chunk, chunk, its tree or None when nobody needs it)."""
    words = {w for c in collectors for w in c.words}
    start, line = 0, 0
    while start < len(code):
        size = CHUNK
        while True:
            m = _BOUNDARY.search(code, start + size) if start + size < len(code) else None
            end = m.start() + 1 if m else len(code)
            chunk = code[start:end]
            tree = _parse(chunk, any(w in chunk for w in words), last=end == len(code))
            if tree is not False:
                break
            size *= 2  # cut inside a statement (a string, brackets): take more
        yield line, chunk, tree if isinstance(tree, ast.Module) else None
        line += chunk.count("\n")
        start = end


def _parse(chunk: str, tree_wanted: bool, last: bool) -> ast.Module | bool:
    """The tree (wanted), True (ends at a statement boundary), False (may be cut
    mid-statement: try more).

    Raises SyntaxError when the chunk runs to the program's end and still fails.
    """
    if "\0" in chunk:
        raise ValueError("a NUL byte")  # as compile and ast.parse do
    if not tree_wanted:
        if _balanced(chunk):
            return True
        if not last:
            return False  # cut inside a string or brackets: take more
    try:
        return ast.parse(chunk)
    except SyntaxError:
        if last:
            raise
        return False


# Comments and whole string literals (triple-quoted first, as Python's tokenizer reads
# them; a backslash escapes the next character in every kind, raw ones included).
# Possessive repeats: an unterminated string fails in one pass, never by backtracking.
_STRIP = re.compile(r'#[^\n]*|"""(?:[^"\\]|\\.|"(?!""))*+"""'
                    r"|'''(?:[^'\\]|\\.|'(?!''))*+'''"
                    r'|"(?:[^"\\\n]|\\.)*+"' r"|'(?:[^'\\\n]|\\.)*+'", re.S)


def _balanced(chunk: str) -> bool:
    """Whether ``chunk`` (which starts at a statement boundary) also ends at one: no
    string left open, brackets closed, no backslash continuing its last line, no
    decorator waiting for its ``def``. Lexical only, at regex speed."""
    code = _STRIP.sub("", chunk)
    if "\"" in code or "'" in code or code.endswith("\\\n"):
        return False
    opened = code.count("(") + code.count("[") + code.count("{")
    if opened != code.count(")") + code.count("]") + code.count("}"):
        return False
    last = code.rstrip().rpartition("\n")[2]
    return not last.startswith("@")
