"""Which language an untagged block is written in: its shebang, its signals, Pygments."""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from verifybot_tui.core.answers.languages import (
    language_named,
)

_SHEBANG_RE = re.compile(r"^#!\s*(\S+)(.*)$")


def shebang_language(code: str) -> str:
    """The language the first line's #! names (``#!/usr/bin/env python3``), or ""."""
    first = code.lstrip("\n").split("\n", 1)[0]
    m = _SHEBANG_RE.match(first)
    if not m:
        return ""
    prog = PurePosixPath(m.group(1)).name
    if prog == "env":
        words = [w for w in m.group(2).split() if not w.startswith("-") and "=" not in w]
        prog = words[0] if words else ""
    prog = re.sub(r"[\d.]+$", "", prog)  # python3.11 -> python
    lang = language_named(prog)
    return lang.name if lang else ""


def python_program(code: str) -> bool:
    """Parses as Python and does something: bare names like ``ls -la`` parse too."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    doing = (ast.Call, ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
             ast.ClassDef, ast.Assign, ast.AugAssign, ast.For, ast.While, ast.With, ast.If)
    return any(isinstance(n, doing) for n in ast.walk(tree))


_SIGNALS: dict[str, tuple[str, ...]] = {
    "python": (r"^\s*def \w+\(.*\):", r"^\s*(?:from [\w.]+ )?import \w", r"\bprint\(",
               r"^\s*elif\b", r"\bself\b", r"^\s*if __name__ ==", r":\s*$"),
    "c": (r"^\s*#include\s*<\w+\.h>", r"\bint main\s*\(", r"\bprintf\s*\(", r"\bmalloc\(",
          r";\s*$"),
    "cpp": (r"^\s*#include\s*<\w+>", r"\bstd::", r"\bcout\b", r"\bnamespace\b", r"\btemplate\s*<",
            r"\bclass \w+\s*\{"),
    "javascript": (r"\bconsole\.\w+\(", r"\b(?:const|let)\s+\w+\s*=", r"=>", r"\brequire\(",
                   r"\bfunction\s*\w*\s*\(", r"\bdocument\.", r"\bprocess\."),
    "bash": (r"^\s*echo\b", r"^\s*(?:fi|done|esac)\s*$", r"\$\{?\w+", r";\s*then\b", r";\s*do\b",
             r"^\s*(?:sudo|apt|apt-get|ls|cd|mkdir|export)\b", r"\[\[? .* \]\]?"),
}


def guess_language(code: str) -> str:
    """Our own signals plus a Pygments vote; "" when nothing is convincing.

    Pygments' ``guess_lexer`` alone is wrong on most short snippets (it calls a
    print statement "Text only" and C++ "Arduino"), so it only adds weight.
    """
    code = sample(code)
    scores = {name: sum(1 for pat in pats if re.search(pat, code, re.M))
              for name, pats in _SIGNALS.items()}
    if python_program(code):
        scores["python"] += 2
    if scores["cpp"]:
        scores["cpp"] += scores["c"] // 2  # C++ code also shows C signals
    try:
        from pygments.lexers import guess_lexer
        from pygments.util import ClassNotFound

        try:
            lexer = guess_lexer(code)
        except ClassNotFound:
            lexer = None
        for alias in lexer.aliases if lexer else ():
            lang = language_named(alias)
            if lang:
                scores[lang.name] += 2
                break
    except ImportError:  # pragma: no cover - pygments is a dependency
        pass
    best = max(scores, key=lambda k: scores[k])
    return best if scores[best] >= 2 else ""


# Heuristics (console transcript, language guess) read at most this much of a block:
# a 50 MB block is judged by its start, not parsed whole by ast and Pygments.
SAMPLE = 256 * 1024


def sample(code: str) -> str:
    """The first SAMPLE characters of ``code``, cut at a line end."""
    if len(code) <= SAMPLE:
        return code
    cut = code.rfind("\n", 0, SAMPLE)
    return code[:cut if cut > 0 else SAMPLE]


def looks_like_code(code: str, language: str) -> bool:
    """Used after an "expected output:" paragraph, where a tag is not enough."""
    if shebang_language(code):
        return True
    if language == "python":
        return python_program(code)
    if language in ("c", "cpp"):
        return bool(re.search(r"#include|\bmain\s*\(", code))
    if language == "javascript":
        return bool(re.search(r"console\.|\bfunction\b|=>|require\(|\b(?:const|let)\s", code))
    return False


# --------------------------------------------------------------------------- copy glue
# The language label a copy from a chat page glues to a block's first line.
#
# A chat page shows a block's language as a label above the code; copying the page
# as text puts the label and the first code line on one line under a bare fence:
# "python import torch", "bash cd app", "html <!DOCTYPE html>". A person sees the
# label and drops it; so does :func:`unglue`, only under a fence with no language,
# and only when what follows the word reads as that language's first line.

# The labels chat pages show, and how a first line in that language may start.
_STARTS: dict[str, str] = {
    "python": r"(?:import|from|def|class|#|@|if|for|while|with|try|print|async|\"\"\"|'''|"
              r"[A-Za-z_]\w*\s*(?:=|\(|\.|:))",
    "bash": r"(?:#|cd|pip3?|python3?|npm|npx|yarn|node|git|export|sudo|mkdir|source|echo|apt|"
            r"apt-get|curl|wget|docker|chmod|\./|ls|cp|mv|rm|conda|uv|make|cmake|go|cargo)\b",
    "html": r"<",
    "xml": r"<",
    "css": r"(?:[.#@:*a-zA-Z][^{;]*\{|/\*)",
    "javascript": r"(?:import|export|const|let|var|function|class|async|//|/\*|'use strict'|"
                  r"\"use strict\"|require|module\.|document\.|console\.)",
    "typescript": r"(?:import|export|const|let|var|function|class|interface|type|//|/\*)",
    "json": r"[{\[]",
    "c": r"(?:#include|#define|/\*|//|int|void|static|struct|typedef)\b",
    "cpp": r"(?:#include|#define|/\*|//|int|void|static|struct|class|template|using)\b",
    "java": r"(?:package|import|public|class|//|/\*)\b",
    "go": r"(?:package|import|//)\b",
    "rust": r"(?:use|fn|pub|mod|struct|//|#\[)",
    "php": r"(?:<\?php|[\w.-]+/)",  # a page labels a project tree "php"
    "sql": r"(?:SELECT|CREATE|INSERT|UPDATE|DELETE|DROP|ALTER|WITH|--)\b",
    "yaml": r"[\w.-]+:",
    "ruby": r"(?:require|def|class|module|puts|#)\b",
    "dockerfile": r"(?:FROM|ARG)\b",
    "ini": r"\[",
    "toml": r"\[",
    "makefile": r"[\w.-]+:",
    "arduino": r"(?:#include|void|int|const|//|/\*|https?://|\S)",
    "plaintext": r"\S",
    "markdown": r"#",
    "jsx": r"(?:import|export|const|function|//)\b",
    "tsx": r"(?:import|export|const|function|//)\b",
    "dotenv": r"(?:#|[A-Z_]+=)",
}
_ALIASES = {"js": "javascript", "ts": "typescript", "py": "python", "c++": "cpp",
            "csharp": "csharp", "kotlin": "kotlin", "swift": "swift", "lua": "lua",
            "perl": "perl", "scss": "scss", "vue": "vue", "graphql": "graphql"}
_GLUED_RE = re.compile(r"^(?P<w>[A-Za-z+#]+) (?P<rest>\S.*)$")


def unglue(code: str) -> tuple[str, str] | None:
    """(the label, the code without it), or None when the first line carries none."""
    first, nl, rest = code.partition("\n")
    m = _GLUED_RE.match(first)
    if m:
        word = m.group("w")
        lang = _ALIASES.get(word, word)
        start = _STARTS.get(lang)
        if start is not None and re.match(start, m.group("rest")):
            return word, m.group("rest") + nl + rest
        return None
    if first in _STARTS and first != "bash" and rest.strip():
        return first, rest.lstrip("\n")  # the label alone on its line, the code below
    return None
