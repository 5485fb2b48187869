"""One function, class or method replaced in a file, as a person pastes it over the old.

"Replace `parse()` in main.py with:" and a block holding only ``def parse``: the
block goes where main.py's ``def parse`` is, indented as it was, when main.py has
exactly one definition of that name. Python is read by its syntax tree; C-family
languages, Go, Rust and JavaScript by the definition's line and its braces.
"""

from __future__ import annotations

import ast
import re
import textwrap

_KEYWORDS = frozenset({"if", "for", "while", "switch", "return", "else", "catch", "sizeof",
                       "new", "delete", "do", "case", "typeof", "await", "throw", "elif",
                       "defined", "using", "namespace", "template", "goto"})
_IDENT = r"[A-Za-z_$][\w$]*"
_DEF_RES = [
    re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*"
               rf"(?P<n>{_IDENT})\s*[<(]"),
    re.compile(r"^\s*(?:export\s+)?(?:default\s+)?(?:public\s+|private\s+|protected\s+)?"
               r"(?:abstract\s+|final\s+|static\s+)*(?:class|struct|interface|enum|union|trait|"
               rf"impl(?:<[^>]*>)?)\s+(?P<n>{_IDENT})"),
    re.compile(rf"^\s*(?:export\s+)?(?:const|let|var)\s+(?P<n>{_IDENT})\s*(?::[^=]+)?=\s*"
               rf"(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|{_IDENT}\s*=>)"),
    re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
               r"fn\s+(?P<n>\w+)"),
    re.compile(r"^\s*func\s+(?:\([^)]*\)\s*)?(?P<n>\w+)\s*[\[(]"),
    re.compile(r"^\s*(?:[\w:<>,*&\[\]]+\s+)*?[*&]*(?P<n>~?[A-Za-z_]\w*(?:::~?[A-Za-z_]\w*)*)"
               r"\s*\([^;]*$"),
]


def python_definition(code: str) -> str | None:
    """The name when ``code`` is exactly one def or class (comments around it allowed)."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return None
    body = tree.body
    if len(body) == 1 and isinstance(body[0], (ast.FunctionDef, ast.AsyncFunctionDef,
                                               ast.ClassDef)):
        return body[0].name
    return None


def splice_python(text: str, code: str, path: str) -> tuple[str | None, str]:
    """``text`` with its one definition named as ``code``'s replaced by ``code``."""
    name = python_definition(code)
    if name is None:
        return None, "the block is not one function or class"
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None, f"{path} as it stands does not parse, so `{name}` cannot be found in it"
    found = [n for n in ast.walk(tree) if isinstance(
        n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name]
    if len(found) != 1:
        return None, _count_problem(name, path, len(found))
    node = found[0]
    block = textwrap.dedent(code)
    if isinstance(node, ast.ClassDef) and (methods := _methods_only(block, node)) is not None:
        return _splice_methods(text, block, node, methods), ""
    return _put_over(text.split("\n"), node, block), ""


_Def = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


def _span(node: _Def) -> tuple[int, int]:
    """(first line index, end line index + 1) of a definition with its decorators."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1, (
        node.end_lineno or node.lineno)


def _put_over(lines: list[str], node: _Def, block: str) -> str:
    """``block`` in place of ``node``'s lines, indented as the definition was."""
    start, end = _span(node)
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    body = textwrap.indent(textwrap.dedent(block).rstrip("\n"), indent).split("\n")
    return "\n".join(lines[:start] + body + lines[end:])


def _methods_only(block: str, target: ast.ClassDef) -> list[ast.FunctionDef |
                                                          ast.AsyncFunctionDef] | None:
    """The block's methods when its class holds only methods (a docstring aside) and
    the file's class has members the block does not show: "class Cart:" around the one
    method that changes, not a class that drops the rest."""
    cls = ast.parse(block).body[0]
    assert isinstance(cls, ast.ClassDef)
    rest = [n for n in cls.body if not (isinstance(n, ast.Expr)
                                        and isinstance(n.value, ast.Constant))]
    members = [n for n in rest if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not members or len(members) != len(rest):
        return None
    shown = {n.name for n in members}
    theirs = [n for n in target.body if not (isinstance(n, ast.Expr)
                                             and isinstance(n.value, ast.Constant))]
    if all(getattr(n, "name", None) in shown for n in theirs):
        return None  # the block shows the whole class
    return members


def _splice_methods(text: str, block: str, target: ast.ClassDef,
                    methods: list[ast.FunctionDef | ast.AsyncFunctionDef]) -> str:
    """Each of the block's methods over the class's method of that name; a method the
    class lacks goes after its last member."""
    lines = text.split("\n")
    source = block.split("\n")
    own = {n.name: n for n in target.body if isinstance(n, (ast.FunctionDef,
                                                             ast.AsyncFunctionDef))}
    edits: list[tuple[int, int, list[str]]] = []
    last_end = target.end_lineno or target.lineno
    member_indent = " " * (target.body[0].col_offset if target.body else target.col_offset + 4)
    for method in methods:
        start, end = _span(method)
        text_of = textwrap.dedent("\n".join(source[start:end]))
        if method.name in own:
            o_start, o_end = _span(own[method.name])
            indent = lines[o_start][:len(lines[o_start]) - len(lines[o_start].lstrip())]
            edits.append((o_start, o_end, textwrap.indent(text_of, indent).split("\n")))
        else:
            edits.append((last_end, last_end,
                          ["", *textwrap.indent(text_of, member_indent).split("\n")]))
    for start, end, body in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[start:end] = body
    return "\n".join(lines)


def _count_problem(name: str, path: str, count: int) -> str:
    if count == 0:
        return f"`{name}` is not defined in {path}"
    return f"`{name}` is defined {count} times in {path}, so it is not clear which to replace"


def _def_name(line: str) -> str | None:
    for rx in _DEF_RES:
        m = rx.match(line)
        if m:
            name = m.group("n")
            first = line.split(None, 1)[0] if line.split() else ""
            if name.split("::")[-1] in _KEYWORDS or first in _KEYWORDS:
                return None
            return name
    return None


def braced_definition(code: str) -> tuple[str, int, int] | None:
    """(name, first line, last line) when ``code`` is exactly one braced definition,
    comments and blank lines around it allowed."""
    lines = code.split("\n")
    i = 0
    while i < len(lines) and (not lines[i].strip() or _is_comment(lines[i])):
        i += 1
    if i >= len(lines) or (name := _def_name(lines[i])) is None:
        return None
    end = _braced_end(lines, i)
    if end is None:
        return None
    if any(ln.strip() and ln.strip() != ";" and not _is_comment(ln) for ln in lines[end + 1:]):
        return None
    return name, i, end


def _is_comment(line: str) -> bool:
    """A comment line of a braced language (``#include`` is code: a block that starts
    with it is a file, not one function)."""
    return line.lstrip().startswith(("//", "/*", "*"))


def _braced_end(lines: list[str], start: int) -> int | None:
    """The line of the brace closing the definition that starts at ``start``; None when
    a ``;`` ends it first (a declaration or a call) or the braces never close."""
    depth = 0
    opened = False
    state = ""  # "", "//", "/*", or the quote character a string runs to
    for n in range(start, len(lines)):
        line = lines[n]
        k = 0
        while k < len(line):
            c = line[k]
            two = line[k:k + 2]
            if state == "/*":
                if two == "*/":
                    state, k = "", k + 1
            elif state in ("'", '"', "`"):
                if c == "\\":
                    k += 1
                elif c == state:
                    state = ""
            elif two == "//":
                break
            elif two == "/*":
                state, k = "/*", k + 1
            elif c in "'\"`":
                state = c
            elif c == ";" and not opened and depth == 0:
                return None
            elif c == "{":
                depth, opened = depth + 1, True
            elif c == "}":
                depth -= 1
                if opened and depth == 0:
                    return n
            k += 1
        if state in ("'", '"'):
            state = ""  # an unclosed quote (a char such as '{' read wrong) ends at the line
    return None


def splice_braced(text: str, code: str, path: str) -> tuple[str | None, str]:
    """``text`` with its one braced definition named as ``code``'s replaced."""
    found_def = braced_definition(code)
    if found_def is None:
        return None, "the block is not one function or class"
    name, first, last = found_def
    lines = text.split("\n")
    spans = []
    for n, line in enumerate(lines):
        if _def_name(line) == name and (end := _braced_end(lines, n)) is not None:
            spans.append((n, end))
    if len(spans) != 1:
        return None, _count_problem(name, path, len(spans))
    start, end = spans[0]
    block = code.rstrip("\n").split("\n")
    if _DEF_RES[1].match(block[first]):  # a class around the methods that change
        shown, theirs = _members(block, first, last), _members(lines, start, end)
        if shown and theirs is not None and {m[0] for m in theirs} - {m[0] for m in shown}:
            return _splice_members(lines, block, shown, theirs, end)
    head = block[:first]
    while head and lines[start - 1:start] and head[-1].strip() == lines[start - 1].strip():
        head.pop()  # the comment above the definition, sent again
        start -= 1
    indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
    own = block[first][:len(block[first]) - len(block[first].lstrip())]
    body = [indent + ln[len(own):] if ln.startswith(own) and ln.strip() else ln
            for ln in head + block[first:]]
    return "\n".join(lines[:start] + body + lines[end + 1:]), ""


_Member = tuple[str, int, int]  # (name, first line, closing line)


def _members(lines: list[str], start: int, end: int) -> list[_Member] | None:
    """The braced definitions directly inside the class at ``start``..``end``; None
    when it holds anything else (a field, a statement): then it is replaced whole."""
    found: list[_Member] = []
    i = start + 1
    while i < end:
        line = lines[i]
        if not line.strip() or _is_comment(line) or line.strip().startswith("@"):
            i += 1
            continue
        name = _def_name(line)
        close = _braced_end(lines, i) if name else None
        if name is None or close is None or close >= end:
            return None
        found.append((name, i, close))
        i = close + 1
    return found


def _splice_members(lines: list[str], block: list[str], shown: list[_Member],
                    theirs: list[_Member], end: int) -> tuple[str | None, str]:
    """Each method the block's class shows over the file's method of that name; a
    method the class lacks goes before its closing brace."""
    by_name: dict[str, list[_Member]] = {}
    for m in theirs:
        by_name.setdefault(m[0], []).append(m)
    inner = lines[theirs[0][1]] if theirs else lines[end - 1] if end else ""
    member_indent = inner[:len(inner) - len(inner.lstrip())] or "    "
    edits: list[tuple[int, int, list[str]]] = []
    for name, first, last in shown:
        own = block[first][:len(block[first]) - len(block[first].lstrip())]
        text = [ln[len(own):] if ln.startswith(own) else ln.lstrip()
                for ln in block[first:last + 1]]
        same = by_name.get(name, [])
        if len(same) > 1:
            return None, (f"`{name}` is defined {len(same)} times in the class, so it is not "
                          "clear which to replace")
        if same:
            at = lines[same[0][1]]
            indent = at[:len(at) - len(at.lstrip())]
            edits.append((same[0][1], same[0][2] + 1, [indent + t if t else t for t in text]))
        else:
            edits.append((end, end, ["", *(member_indent + t if t else t for t in text)]))
    for start, stop, body in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[start:stop] = body
    return "\n".join(lines), ""


def definition_name(code: str, language: str) -> str | None:
    """The name of the one definition ``code`` holds, in ``language``'s way."""
    if language == "python":
        return python_definition(code)
    if language in BRACED:
        found = braced_definition(code)
        return found[0] if found else None
    return None


def splice(text: str, code: str, language: str, path: str) -> tuple[str | None, str]:
    """Replace the definition ``code`` holds in ``text`` (see the module's docstring)."""
    if language == "python":
        return splice_python(text, code, path)
    return splice_braced(text, code, path)


def definition_count(text: str, name: str, language: str) -> int:
    """How many definitions named ``name`` ``text`` holds."""
    if language == "python":
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            return 0
        return sum(1 for n in ast.walk(tree) if isinstance(
            n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name)
    lines = text.split("\n")
    return sum(1 for n, line in enumerate(lines)
               if _def_name(line) == name and _braced_end(lines, n) is not None)


BRACED = frozenset({"c", "cpp", "javascript", "typescript", "java", "csharp", "go", "rust",
                    "jsx", "tsx", "arduino", "kotlin", "swift", "php", "dart", "scala"})
