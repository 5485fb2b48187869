"""The language label a copy from a chat page glues to a block's first line.

A chat page shows a block's language as a label above the code; copying the page
as text puts the label and the first code line on one line under a bare fence:
"python import torch", "bash cd app", "html <!DOCTYPE html>". A person sees the
label and drops it; so does :func:`unglue`, only under a fence with no language,
and only when what follows the word reads as that language's first line.
"""

from __future__ import annotations

import re

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
