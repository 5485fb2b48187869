"""Turn an LLM's markdown answer into code blocks, file names and run hints.

The answer is parsed with markdown-it (CommonMark), never with regexes for
fences: regexes get nested fences, tildes, list indentation and unclosed
fences wrong, and a wrong split runs the wrong code. Names from the answer are
untrusted input, so every one goes through :func:`confine_name` before it can
name a file under ``programs/``.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.token import Token

from verifybot_tui.core.answers.languages import (
    LANGUAGES,
    NOT_PROGRAM_LANGUAGES,
    language_for_filename,
    language_named,
)


@dataclass
class CodeBlock:
    code: str  # "\r" removed, ends with exactly one "\n" ("" when empty)
    language: str  # a core.answers.languages name, the lower-cased info word, or "" if unknown
    info: str  # raw info string of the fence
    filename: str | None  # confined relative posix name from a hint, else None
    runnable: bool
    reason: str  # why not runnable ("" when runnable)
    line: int  # 1-based line of the opening fence


@dataclass
class Extraction:
    blocks: list[CodeBlock] = field(default_factory=list)
    timeout: float | None = None
    dependencies: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def programs(self) -> list[CodeBlock]:
        return [b for b in self.blocks if b.runnable]


# --------------------------------------------------------------------------- names

_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)
_PORTABILITY_BAD = set('<>:"|?*')
_MAX_COMPONENT_BYTES = 255
_MAX_NAME_CHARS = 1024


def _shown(name: str, limit: int = 80) -> str:
    """A name safe to print: control characters escaped, long names shortened."""
    out = "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}"
        for c in name)
    return out if len(out) <= limit else out[: limit - 3] + "..."


def confine_name(name: str) -> tuple[str | None, str]:
    """Make an answer's file name safe to create under ``programs/``.

    Returns ``(relative posix name, "")`` or ``(None, reason)``. Nothing is
    repaired silently except harmless spelling (``./``, doubled slashes,
    backslashes): a name that tries to leave the folder is refused outright.
    """
    raw = name.strip().strip("`'\"")
    if not raw.strip():
        return None, "it is empty"
    if any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in raw):
        return None, "it holds control characters"
    if len(raw) > _MAX_NAME_CHARS:
        return None, f"it is longer than {_MAX_NAME_CHARS} characters"
    path = raw.replace("\\", "/")
    if re.match(r"^[A-Za-z]:", path):
        return None, "it names a drive: it leaves programs/"
    if path.startswith("/"):
        return None, "it is an absolute path: it leaves programs/"
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if not parts:
        return None, "it names no file"
    if parts[0].startswith("~"):
        return None, "it starts with ~ (a home folder): it leaves programs/"
    for part in parts:
        if part == "..":
            return None, "it leaves programs/"
        if set(part) == {"."}:
            return None, f"'{part}' is not a file name"
        if len(part.encode("utf-8")) > _MAX_COMPONENT_BYTES:
            return None, f"a part is longer than {_MAX_COMPONENT_BYTES} bytes"
        if _PORTABILITY_BAD & set(part):
            return None, "it holds characters not allowed in file names (<>:\"|?*)"
        stem = part.split(".")[0].rstrip(" ").lower()
        if stem in _WINDOWS_RESERVED:
            return None, f"{stem.upper()} is a reserved device name on Windows"
    return "/".join(parts), ""


# --------------------------------------------------------------------------- hints

# Extensions a bare **name.ext** or `name.ext` must carry to count as a file
# name: inline code such as `time.sleep` or `GPIO.setup` must not.
_DATA_EXTENSIONS = {
    ".h": "c", ".hpp": "cpp", ".hh": "cpp", ".txt": "text", ".json": "json",
    ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".ini": "ini", ".cfg": "ini",
    ".conf": "conf", ".csv": "csv", ".md": "markdown", ".html": "html", ".htm": "html",
    ".css": "css", ".xml": "xml", ".sql": "sql", ".env": "dotenv", ".service": "ini",
    ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx", ".ino": "arduino", ".rs": "rust",
    ".go": "go", ".java": "java", ".rb": "ruby", ".php": "php", ".lua": "lua",
    # firmware projects (mcu targets): linker scripts, assembly start-up code, make
    ".ld": "ld", ".s": "asm", ".mk": "makefile",
}
# Files whose usual name has no extension, named in prose as **Makefile**.
_BARE_FILE_NAMES = frozenset({"Makefile", "GNUmakefile"})  # not "makefile": a fence language
_KNOWN_EXTENSIONS = {ext for lang in LANGUAGES for ext in lang.extensions} | set(_DATA_EXTENSIONS)
_DATA_LANGUAGE_EXTS: dict[str, set[str]] = {}
for _ext, _lang in _DATA_EXTENSIONS.items():
    _DATA_LANGUAGE_EXTS.setdefault(_lang, set()).add(_ext)
_DATA_LANGUAGE_EXTS.setdefault("text", set()).update({".txt"})
for _alias in ("plaintext", "plain", "txt", "none", ""):
    _DATA_LANGUAGE_EXTS[_alias] = {".txt"}
_DATA_LANGUAGE_EXTS["md"] = {".md"}
_DATA_LANGUAGE_EXTS["dockerfile"] = set()
for _alias in ("assembly", "armasm", "gas", "arm", "nasm"):
    _DATA_LANGUAGE_EXTS[_alias] = {".s"}
for _alias in ("linker", "linkerscript", "linker-script", "lds"):
    _DATA_LANGUAGE_EXTS[_alias] = {".ld"}
_DATA_LANGUAGE_EXTS["make"] = {".mk"}

_FILENAME_RE = re.compile(r"^[^\s`*'\"<>|]+\.[A-Za-z][A-Za-z0-9+_-]{0,9}$")
_LABEL_RE = re.compile(r"(?:^|\n)\s*(?:file ?name|file)\s*:\s*`?([^\s`]+)`?", re.IGNORECASE)
_HEADING_PREFIX_RE = re.compile(
    r"^(?:(?:step\s*)?\d+[.):]\s*|(?:file|filename|path)\s*:\s*)", re.IGNORECASE)
_COMMENT_HINT_RE = re.compile(
    r"^\s*(?:#|//|--|;|/\*|<!--)\s*(?:(?:file ?name|file|path)\s*[:=]\s*)?"
    r"`?([^\s`*]+?)`?\s*(?:\*/|-->)?\s*$",
    re.IGNORECASE)
_COMMENT_LABELLED_RE = re.compile(r"(?:file ?name|file|path)\s*[:=]", re.IGNORECASE)
_TEXT_FILE_LANGUAGES = frozenset({"text", "txt", "plaintext", "plain", "none"})


def _names_a_file(text: str) -> bool:
    """Loose test for explicitly labelled names: a title such as "Blink LED" is not one."""
    return bool(PurePosixPath(text.replace("\\", "/")).suffix) or "/" in text or "\\" in text


# Product names that look like files: "Install **Node.js** first" names no block.
_NOT_FILES = frozenset({
    "node.js", "vue.js", "express.js", "three.js", "chart.js", "next.js", "nuxt.js", "d3.js",
    "p5.js", "moment.js", "ember.js", "backbone.js", "alpine.js", "react.js", "angular.js",
    "deno.js", "bun.js", "anime.js", "pixi.js", "babylon.js", "socket.io", "htmx.js",
})


def _looks_like_filename(text: str) -> bool:
    text = text.strip()
    if text in _BARE_FILE_NAMES:
        return True
    if "://" in text or text.lower() in _NOT_FILES or not _FILENAME_RE.match(text):
        return False
    return PurePosixPath(text.replace("\\", "/")).suffix.lower() in _KNOWN_EXTENSIONS


# What the raw markdown of a paragraph holds when its inline text may name a file:
# a dot before a letter (every name _looks_like_filename takes, and every one a run
# command mentions), the word "file" (a "File: Makefile" label, see _LABEL_RE), or
# an "&" (an entity such as &#46; that renders as a dot). A superset, never a test.
_DOT_LETTER_RE = re.compile(r"\.[A-Za-z]")


def _may_name(text: str) -> bool:
    """See above; str methods and a literal-led pattern (an alternation under
    IGNORECASE scanned at a tenth of the speed)."""
    return "&" in text or "file" in text.lower() or _DOT_LETTER_RE.search(text) is not None


@dataclass
class _Hint:
    name: str
    line: int
    used: bool = False


class _Prose:
    """A paragraph or heading; its inline markdown is parsed only when first read.

    Inline parsing is most of the cost of a big answer, and only the prose near
    a code block is ever read (hints, commands): a 50 MB wall of text costs its
    block parse alone.
    """

    def __init__(self, inline: Token, line: int, heading: bool, md: MarkdownIt) -> None:
        self.line = line
        self._inline = inline
        self._heading = heading
        self._md = md
        self._parsed: tuple[str, list[_Hint], list[str]] | None = None
        # Most paragraphs can hold no file name at all: then hints and commands are
        # known without parsing their inline markdown (what made a 50 MB answer of
        # prose cost tens of seconds: every paragraph before a block was parsed).
        self._may_name = _may_name(inline.content)

    def _parse(self) -> tuple[str, list[_Hint], list[str]]:
        if self._parsed is None:
            tok = self._inline
            if not tok.children:
                children: list[Token] = []
                self._md.inline.parse(_near_end(tok.content), self._md, {}, children)
                tok.children = children
            self._parsed = _prose_hints(tok, self.line, self._heading)
        return self._parsed

    @property
    def text(self) -> str:
        return self._parse()[0]

    @property
    def hints(self) -> list[_Hint]:
        return self._parse()[1] if self._may_name else []

    @property
    def commands(self) -> list[str]:
        return self._parse()[2] if self._may_name else []


_PROSE_READ = 8000  # characters of a paragraph that inline parsing reads, at its end


def _near_end(content: str) -> str:
    """A paragraph's end, where the hints for the next block are: inline parsing is
    quadratic on some input (4.8 MB of ``![`` took minutes), so a long one is cut
    to its last lines."""
    if len(content) <= _PROSE_READ:
        return content
    tail = content[-_PROSE_READ:]
    return tail[tail.find("\n") + 1:] if "\n" in tail else tail


def _inline_parts(inline: Token) -> tuple[str, list[str], list[str]]:
    """Plain text of an inline token, its emphasised/code spans, and its code spans."""
    text: list[str] = []
    spans: list[str] = []
    codes: list[str] = []
    depth = 0
    current: list[str] = []
    for child in inline.children or []:
        if child.type in ("strong_open", "em_open"):
            depth += 1
            current = []
        elif child.type in ("strong_close", "em_close"):
            depth = max(0, depth - 1)
            spans.append("".join(current))
        elif child.type in ("text", "code_inline"):
            text.append(child.content)
            if depth:
                current.append(child.content)
            if child.type == "code_inline":
                spans.append(child.content)
                codes.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            text.append("\n")
    return "".join(text), spans, codes


def _prose_hints(inline: Token, line: int, heading: bool) -> tuple[str, list[_Hint], list[str]]:
    text, spans, codes = _inline_parts(inline)
    names: list[str] = []
    if heading:
        title = _HEADING_PREFIX_RE.sub("", text.strip()).strip().rstrip(":").strip()
        title = re.sub(r"\s*\([^)]*\)$", "", title)  # "main.py (updated)"
        if _looks_like_filename(title):
            names.append(title)
    for m in _LABEL_RE.finditer(text):
        names.append(m.group(1).rstrip(".,;:)"))
    for span in spans:
        span = span.strip().rstrip(":,;")
        if _looks_like_filename(span):
            names.append(span)
    seen: set[str] = set()
    hints = []
    for n in names:
        if n not in seen:
            seen.add(n)
            hints.append(_Hint(n, line))
    return text, hints, codes


def _hint_fits(name: str, language: str) -> bool:
    """Whether a hint can name a block: ``utils.py`` never names a bash block."""
    suffix = PurePosixPath(name.replace("\\", "/")).suffix.lower()
    if not suffix:
        return True  # an explicit "File: Makefile" carries no extension to contradict
    if not language:
        return True
    hinted = language_for_filename(name.replace("\\", "/"))
    lang = language_named(language)
    if lang:
        if hinted:
            return hinted.name == lang.name
        return (suffix in (".h",) and lang.name in ("c", "cpp")) or (
            suffix in (".hpp", ".hh") and lang.name == "cpp")
    if hinted:
        return False
    return suffix in _DATA_LANGUAGE_EXTS.get(language, {f".{language}"})


# --------------------------------------------------------------------------- info strings

_INFO_NAME_RE = re.compile(
    r"""(?:title|file|filename|name|path)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))""", re.IGNORECASE)


def _parse_info(info: str) -> tuple[str, str | None]:
    """(language word, filename) from an info string such as ``python title="x.py"``."""
    info = info.strip()
    if not info:
        return "", None
    if info.startswith("{") and info.endswith("}"):
        info = info[1:-1].strip()
    word, _, rest = info.partition(" ")
    word = word.lstrip(".")
    filename: str | None = None
    if ":" in word:
        word, _, after = word.partition(":")
        filename = after or None
    if word.lower().startswith("language-"):
        word = word[len("language-"):]
    m = _INFO_NAME_RE.search(rest)
    if m:
        titled = next(g for g in m.groups() if g is not None)
        if _names_a_file(titled):
            filename = filename or titled
    elif not filename:
        for token in rest.split():
            if _looks_like_filename(token):
                filename = token
                break
    if not language_named(word) and _looks_like_filename(word):
        filename = filename or word
        lang = language_for_filename(word)
        word = lang.name if lang else _DATA_EXTENSIONS.get(
            PurePosixPath(word).suffix.lower(), "")
    return word, filename


def _normalise_language(word: str) -> str:
    lang = language_named(word)
    return lang.name if lang else word.strip().lower()


# --------------------------------------------------------------------------- guessing

_SHEBANG_RE = re.compile(r"^#!\s*(\S+)(.*)$")


def _shebang_language(code: str) -> str:
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


def _python_program(code: str) -> bool:
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
    code = _sample(code)
    scores = {name: sum(1 for pat in pats if re.search(pat, code, re.M))
              for name, pats in _SIGNALS.items()}
    if _python_program(code):
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


# --------------------------------------------------------------------------- not programs

_PROMPT_RE = re.compile(
    r"^(?:\s*\$|\s*>>>|\.\.\.|\s*[\w.-]+@[\w.-]+:[^\n]*?[$#]"
    r"|PS [A-Za-z]:\\[^>]*>|[A-Za-z]:\\[^>]*>)(?: |$)")
_FIRST_PROMPT_RE = re.compile(r"^\s*(?:\$ |>>> |[\w.-]+@[\w.-]+:[^\n]*?[$#] )")
_OUTPUT_RE = re.compile(
    r"\b(?:expected|sample|example|typical|console|program|script's|its)\s+output\b"
    r"|\boutput\s+(?:will|should|would|might|may)\b"
    r"|\boutput\s*(?:is|looks like|like this)?\s*:\s*$"
    r"|\bshould\s+(?:print|output|display|show|see)\b"
    r"|\b(?:will|would)\s+(?:print|output|display)\b"
    r"|\byou(?:'ll|\s+will|\s+should)?\s+see\b"
    r"|\bprints?\s*(?:something\s+like)?\s*:\s*$"
    r"|\bresult\s*:\s*$"
    r"|^\s*(?:output|results?|sample run|example run|test run)\s*:?\s*$",
    re.IGNORECASE | re.M)


# Heuristics (console transcript, language guess) read at most this much of a block:
# a 50 MB block is judged by its start, not parsed whole by ast and Pygments.
SAMPLE = 256 * 1024


def _sample(code: str) -> str:
    """The first SAMPLE characters of ``code``, cut at a line end."""
    if len(code) <= SAMPLE:
        return code
    cut = code.rfind("\n", 0, SAMPLE)
    return code[:cut if cut > 0 else SAMPLE]


_TRACEBACK_RE = re.compile(r"^\s*Traceback \(most recent call last\):")
_PARTIAL_RE = re.compile(
    r"^\s*(?:#|//|/\*|--)\s*(?:\.\.\.|…)?\s*\(?\s*(?:the\s+)?(?:rest|remaining|other|existing|"
    r"same|previous|unchanged)\b[^\n]*(?:unchanged|as before|same|here|code|above|before)",
    re.IGNORECASE | re.M)


def _transcript(code: str) -> bool:
    """Whether the block is a console session; judged on its first SAMPLE characters."""
    lines = [ln for ln in _sample(code).split("\n") if ln.strip()]
    if not lines:
        return False
    prompts = sum(1 for ln in lines if _PROMPT_RE.match(ln))
    first = next((ln for ln in lines if not ln.lstrip().startswith("#")), lines[0])
    return bool(_FIRST_PROMPT_RE.match(first)) or prompts * 2 >= len(lines)


def _looks_like_code(code: str, language: str) -> bool:
    """Used after an "expected output:" paragraph, where a tag is not enough."""
    if _shebang_language(code):
        return True
    if language == "python":
        return _python_program(code)
    if language in ("c", "cpp"):
        return bool(re.search(r"#include|\bmain\s*\(", code))
    if language == "javascript":
        return bool(re.search(r"console\.|\bfunction\b|=>|require\(|\b(?:const|let)\s", code))
    return False


_COMMAND_WORDS = frozenset({
    "pip", "pip3", "python", "python3", "py", "node", "npm", "npx", "gcc", "g++", "cc",
    "clang", "clang++", "make", "cmake", "chmod", "cd", "apt", "apt-get", "brew", "dnf",
    "yum", "pacman", "source", "conda", "uv", "pipx", "mkdir", "bash", "sh", "virtualenv",
    "raspi-config", "export", "javac", "java", "deactivate", "go", "cargo",
})


def _command_lines(code: str) -> list[list[str]] | None:
    """The block's commands as argv lists, or None if any line is not a run/install command."""
    out = []
    for raw in code.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        for part in re.split(r"\s*(?:&&|;|\|\|)\s*", line):
            try:
                argv = shlex.split(part)
            except ValueError:
                return None
            while argv and (argv[0] == "sudo" or re.match(r"^\w+=", argv[0])):
                argv = argv[1:]
            if not argv:
                continue
            word = argv[0]
            if not (word in _COMMAND_WORDS or word.startswith("./") or word == "."
                    or re.match(r"^python3?\.\d+$", word)):
                return None
            out.append(argv)
    return out or None


_PIP_ARG_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[A-Za-z0-9,._-]+\])?"
                         r"(?:(?:==|>=|<=|~=|!=|>|<)[A-Za-z0-9.*+!-]+)?$")


def _requirement_name(token: str) -> str | None:
    """The project name of a requirement like ``numpy>=1.2``; None if it is not one."""
    token = token.strip().strip("`'\"*,;")
    if not token or not _PIP_ARG_RE.match(token):
        return None
    return re.split(r"[\[=<>!~]", token, maxsplit=1)[0]


def _pip_installs(argvs: list[list[str]]) -> list[str]:
    names: list[str] = []
    for argv in argvs:
        words = argv
        if len(words) >= 3 and re.match(r"^python3?(\.\d+)?$", words[0]) and words[1:3] == [
                "-m", "pip"]:
            words = ["pip", *words[3:]]
        if words and words[0] in ("pip", "pip3") and len(words) > 1 and words[1] == "install":
            skip = False
            for w in words[2:]:
                if skip:
                    skip = False
                    continue
                if w.startswith("-"):
                    skip = w in ("-r", "--requirement", "-i", "--index-url", "-c",
                                 "--constraint", "-e", "--target", "-t", "--extra-index-url")
                    continue
                name = _requirement_name(w)
                if name:
                    names.append(name)
    return names


_RUN_FILE_WORDS = {"python": ".py", "python3": ".py", "py": ".py", "node": ".js", "bash": ".sh",
                   "sh": ".sh", "gcc": "", "g++": "", "cc": "", "clang": "", "clang++": ""}


def _run_mentions(argvs: list[list[str]]) -> list[str]:
    """Files a run command names: ``python3 blink.py`` says the code is blink.py."""
    found = []
    for argv in argvs:
        if argv[0].startswith("./") and _looks_like_filename(argv[0][2:]):
            found.append(argv[0][2:])
            continue
        if argv[0] not in _RUN_FILE_WORDS:
            continue
        for w in argv[1:]:
            if w.startswith("-"):
                if argv[0].startswith("python") and w in ("-m", "-c"):
                    break
                continue
            if _looks_like_filename(w):
                found.append(w)
            if not argv[0].endswith(("cc", "++", "clang")):
                break
    return found


# --------------------------------------------------------------------------- directives

_TIMEOUT_RE = re.compile(
    r"TIMEOUT[*_`]*[ \t]*:[*_` \t]*(\d+(?:\.\d+)?)[ \t]*"
    r"(ms|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b")
_DEPS_RE = re.compile(r"DEPENDENCIES[*_`]*[ \t]*:[*_`]*(.*)$")
_NONE_WORDS = {"none", "no", "n/a", "na", "-", "nothing", "stdlib", "standard"}
_MARKUP_CHARS = " \t>*_#/;-+•|`"


def _lines_holding(text: str, word: str) -> Iterator[str]:
    """Each line of ``text`` that holds ``word``, once (no split of a 50 MB answer)."""
    at = 0
    while (i := text.find(word, at)) != -1:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        end = len(text) if end == -1 else end
        yield text[start:end]
        at = end + 1


def _directive_lines(markdown: str, word: str) -> list[str]:
    """Lines that start (after list, quote, emphasis or comment marks) with ``word``.

    Done by stripping rather than one regex: a regex prefix such as ``[*_]*``
    followed by ``[*_`]*`` goes quadratic on a line of 20,000 asterisks.
    """
    found = []
    for line in _lines_holding(markdown, word):
        rest = line.lstrip(_MARKUP_CHARS)
        if rest.startswith("<!--"):
            rest = rest[4:].lstrip(_MARKUP_CHARS)
        if rest.startswith(word):
            found.append(rest)
    return found


def _timeouts(markdown: str) -> list[float]:
    values = []
    for line in _directive_lines(markdown, "TIMEOUT"):
        m = _TIMEOUT_RE.match(line)
        if not m:
            continue
        value = float(m.group(1))
        unit = (m.group(2) or "s").lower()
        if unit == "ms":
            value /= 1000
        elif unit.startswith("m"):
            value *= 60
        elif unit.startswith("h"):
            value *= 3600
        if value > 0:
            values.append(value)
    return values


def _declared_dependencies(markdown: str, notes: list[str]) -> list[str]:
    names: list[str] = []
    for line in _directive_lines(markdown, "DEPENDENCIES"):
        m = _DEPS_RE.match(line)
        if not m:
            continue
        rest = re.sub(r"\([^)]*\)", " ", m.group(1)).replace("`", " ").replace("*", " ")
        rest = re.sub(r"-->.*$", "", rest)
        tokens = [t for t in re.split(r"[,\s]+", rest) if t]
        if tokens[:2] in (["pip", "install"], ["pip3", "install"]):
            tokens = tokens[2:]
        if not tokens or tokens[0].lower().rstrip(".") in _NONE_WORDS:
            continue
        for token in tokens:
            if token.lower() in ("and", "&"):
                continue
            name = _requirement_name(token)
            if name is None:
                notes.append(f"dependency '{_shown(token)}' ignored: not a package name")
            elif name not in names:
                names.append(name)
    return names


# --------------------------------------------------------------------------- the walk

@dataclass
class _Fence:
    token: Token
    line: int
    closed: bool


def _items(markdown: str, md: MarkdownIt, offset: int = 0) -> list[_Prose | _Fence]:
    """Prose (paragraphs, headings) and fences in document order, lines absolute."""
    bodies: dict[int, tuple[int, str]] = {}
    prose_cuts: dict[int, int] = {}
    if offset == 0 and len(markdown) > COLLAPSE_ABOVE:
        markdown, bodies = collapse_fences(markdown)
        markdown, prose_cuts = collapse_prose(markdown)
    to_cut = line_mapper({at: (taken, "") for at, taken in prose_cuts.items()})
    in_cut = line_mapper(bodies)

    def line_of(n: int) -> int:
        return in_cut(to_cut(n))
    lines = markdown.split("\n")
    items: list[_Prose | _Fence] = []
    tokens = md.parse(markdown)
    for i, tok in enumerate(tokens):
        if tok.type == "inline" and i > 0 and tokens[i - 1].type in (
                "paragraph_open", "heading_open"):
            start = line_of((tok.map or tokens[i - 1].map or [0])[0]) + offset + 1
            items.append(_Prose(tok, start, tokens[i - 1].type == "heading_open", md))
        elif tok.type == "fence":
            assert tok.map is not None
            end_line = lines[tok.map[1] - 1] if tok.map[1] - 1 < len(lines) else ""
            closing = end_line.lstrip(" \t>").strip()
            closed = (tok.map[1] - tok.map[0] >= 2 and closing.startswith(tok.markup)
                      and not closing.strip(tok.markup[0]))
            if to_cut(tok.map[0]) in bodies:
                tok.content = bodies[to_cut(tok.map[0])][1]
            items.append(_Fence(tok, line_of(tok.map[0]) + offset + 1, closed))
        elif tok.type == "code_block" and tok.map is not None:
            # A fence indented too far (inside a list, say) arrives as indented code.
            if re.match(r"^(```|~~~)", tok.content.lstrip(" ")):
                items.extend(_items(tok.content, md, offset + line_of(tok.map[0])))
    return items


# Above this many characters, the bodies of fences that start a line are cut out
# before markdown-it parses the answer: its block parser keeps several Python
# ints per line, which for a 50 MB answer of code is most of a gigabyte.
COLLAPSE_ABOVE = 1 << 20
_OPEN_FENCE_RE = re.compile(r"^(`{3,}|~{3,})([^\n]*)$", re.M)


def collapse_fences(markdown: str) -> tuple[str, dict[int, tuple[int, str]]]:
    """The answer with the body of each fence at column 0 taken out, and the bodies:
    {line of the opening fence in the cut text: (lines taken out, body)}.

    A fence at column 0 is a fence wherever it stands (it ends a paragraph or a
    list, and is never a lazy continuation), so the cut text parses to the same
    blocks; the one case that differs, a fence line inside a raw HTML block,
    only shows in huge answers. Bodies are restored into the fence tokens.
    """
    out: list[str] = []
    bodies: dict[int, tuple[int, str]] = {}
    pos = 0  # how much of the answer is copied to ``out``
    line = 0  # lines in ``out``
    at = 0
    while (m := _OPEN_FENCE_RE.search(markdown, at)) is not None:
        fence, info = m.group(1), m.group(2)
        body_start = m.end() + 1
        if (fence[0] == "`" and "`" in info) or body_start > len(markdown):
            at = m.end() + 1
            continue
        close = _closing_fence(markdown, fence, body_start)
        body_end = close[0] if close else len(markdown)
        body = markdown[body_start:body_end]
        opening = line + markdown.count("\n", pos, m.start())
        out.append(markdown[pos:body_start])
        line = opening + 1
        taken = body.count("\n") + (1 if body and not body.endswith("\n") else 0)
        if body:
            bodies[opening] = (taken, body.replace("\0", "\ufffd"))
        pos = body_end
        if close is None:
            break
        at = close[1]
    out.append(markdown[pos:])
    return "".join(out), bodies


def _inert_paragraph(lines: list[str]) -> bool:
    """Lines that can only be a plain paragraph naming no file: each starts with a
    letter (no list, quote, heading, fence, HTML or setext line can) and none may
    name a file (_may_name)."""
    return all(line[:1].isascii() and line[:1].isalpha() and not _may_name(line)
               for line in lines)


def collapse_prose(text: str) -> tuple[str, dict[int, int]]:
    """The answer with each run of inert paragraphs but its last cut to one line "x",
    and the cuts: {line of that "x" in the cut text: lines taken out after it}.

    Such paragraphs give no hint and no command; only the one nearest a block is
    ever read for its text (sample output?) or its place (the nearest prose), and
    that one is the run's last, kept whole. A paragraph after a blank line that
    starts with a letter at column 0 ends any list or quote before it, so the cut
    text parses to the same blocks, fewer of them inert: 50 MB of prose costs the
    block parser a few lines, not 50 MB (issue 22).
    """
    lines = text.split("\n")
    groups: list[tuple[int, int, bool]] = []  # (first, last + 1, inert) of non-blank runs
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].strip():
            j += 1
        groups.append((i, j, _inert_paragraph(lines[i:j])))
        i = j
    out: list[str] = []
    cuts: dict[int, int] = {}
    copied = 0  # lines of ``lines`` already in ``out``
    g = 0
    while g < len(groups):
        h = g
        while h < len(groups) and groups[h][2]:
            h += 1
        if h - g >= 2:  # groups g .. h-2 become one "x"; h-1, the run's last, stays
            first, end = groups[g][0], groups[h - 2][1]
            out += lines[copied:first]
            cuts[len(out)] = end - first - 1
            out.append("x")
            copied = end
        g = max(h, g + 1)
    out += lines[copied:]
    return "\n".join(out), cuts


def _closing_fence(markdown: str, fence: str, start: int) -> tuple[int, int] | None:
    """(start, end) of the line closing ``fence`` from ``start`` on: up to 3 spaces, at
    least as many of the fence's character, nothing else (found by str.find: fast)."""
    at = start
    while (i := markdown.find(fence, at)) != -1:
        line_start = markdown.rfind("\n", 0, i) + 1
        line_end = markdown.find("\n", i)
        line_end = len(markdown) if line_end == -1 else line_end
        lead = markdown[line_start:i]
        if len(lead) <= 3 and not lead.strip(" ") and line_start >= start:
            if not markdown[i:line_end].rstrip(" \t").strip(fence[0]):
                return line_start, line_end
        at = line_end + 1
    return None


def line_mapper(bodies: dict[int, tuple[int, str]]) -> Callable[[int], int]:
    """Line in the cut text -> line in the answer (lines after a cut body move down)."""
    if not bodies:
        return lambda n: n
    starts = sorted(bodies)
    shift = list(itertools.accumulate(bodies[o][0] for o in starts))

    def line_of(n: int) -> int:
        k = bisect.bisect_left(starts, n)  # bodies whose opening line is before n
        return n + (shift[k - 1] if k else 0)
    return line_of


_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))


def _clean_code(content: str) -> tuple[str, bool]:
    """Trailing blank lines trimmed, one final newline; web-copy spaces repaired."""
    fixed = content.replace("\u00a0", " ").replace("\u202f", " ").translate(_ZERO_WIDTH)
    body = fixed.rstrip()
    return (body + "\n" if body else ""), fixed != content


def _comment_hint(code: str) -> str | None:
    """A first-line comment naming the file: ``# file: main.py`` or just ``// main.c``."""
    lines = code.split("\n", 3)[:3]
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    for line in lines[:1]:
        m = _COMMENT_HINT_RE.match(line)
        if not m:
            return None
        name = m.group(1)
        if _looks_like_filename(name) or (
                _COMMENT_LABELLED_RE.search(line) and _names_a_file(name)):
            return name
    return None


@dataclass
class _Pending:
    block: CodeBlock
    fence: _Fence
    index: int  # position in the items list
    explicit: str | None  # name from the info string or a first-line comment
    guessed: bool
    kind: str  # "program", "data", "other"


def extract(markdown: str) -> Extraction:
    """Every fenced block of an answer, judged runnable or not, with names and hints."""
    markdown = markdown.replace("\r\n", "\n").replace("\r", "")
    ex = Extraction()
    md = MarkdownIt("commonmark").disable("inline")  # per paragraph when read: _Prose
    items = _items(markdown, md)
    pending: list[_Pending] = []
    for index, item in enumerate(items):
        if isinstance(item, _Fence):
            pending.append(_read_fence(item, index, items, ex))

    _name_blocks(pending, items, ex)
    installs = _mark_commands(pending, items, ex)
    _supersede_duplicates(pending, ex)
    ex.blocks = [p.block for p in pending]

    timeouts = _timeouts(markdown)
    if timeouts:
        ex.timeout = max(timeouts)
        if len(set(timeouts)) > 1:
            ex.notes.append(f"several TIMEOUT values ({', '.join(f'{t:g}' for t in timeouts)}); "
                            f"using the longest, {ex.timeout:g} s")
    declared = _declared_dependencies(markdown, ex.notes)
    if declared or any(_DEPS_RE.match(ln) for ln in _directive_lines(markdown, "DEPENDENCIES")):
        ex.dependencies = declared
    elif installs:
        ex.dependencies = installs
        ex.notes.append(f"dependencies read from `pip install`: {', '.join(installs)}")
    return ex


def _read_fence(fence: _Fence, index: int, items: list[_Prose | _Fence],
                ex: Extraction) -> _Pending:
    tok = fence.token
    word, info_name = _parse_info(tok.info)
    code, repaired = _clean_code(tok.content)
    language = _normalise_language(word) if word else ""
    if repaired:
        ex.notes.append(f"block at line {fence.line}: non-breaking or zero-width spaces "
                        "replaced (a copy from a web page)")
    if _PARTIAL_RE.search(code):
        ex.notes.append(f"block at line {fence.line} looks partial (it says the rest is "
                        "unchanged): it may need merging with the previous version")
    if not fence.closed:
        ex.notes.append(f"the code block at line {fence.line} is not closed: "
                        "the answer may have been cut off")
    comment_name = _comment_hint(code)
    explicit = info_name or comment_name
    guessed = False
    prev = items[index - 1] if index > 0 else None
    after_output = isinstance(prev, _Prose) and bool(_OUTPUT_RE.search(prev.text))

    if language == "python" and _command_lines(code) and not _python_program(code):
        language = "bash"
        ex.notes.append(f"block at line {fence.line} is tagged python but holds shell "
                        "commands; read as bash")
    if not language:
        language = _shebang_language(code)
    if not language and explicit:
        hinted = language_for_filename(explicit.replace("\\", "/"))
        language = hinted.name if hinted else ""

    reason = _neither_program_nor_file(code, language, after_output)
    kind = "other" if reason else ""
    if not reason and language in NOT_PROGRAM_LANGUAGES:
        reason = f"a `{language}` block: output or notes, not a program"
    how = ""
    if not language and not reason:
        language = _language_from_prose(items, index)
        how = "from the file name before it"
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
                      runnable=not reason, reason=reason, line=fence.line)
    if guessed:
        ex.notes.append(f"block at line {fence.line} has no language tag; "
                        f"guessed {language} {how}")
    return _Pending(block, fence, index, explicit, guessed, kind)


def _neither_program_nor_file(code: str, language: str, after_output: bool) -> str:
    """Why a block is neither a program nor a file to save ("" when it may be either)."""
    if not code:
        return "an empty block"
    if _transcript(code):
        return "a console transcript (lines start with a prompt such as `$ ` or `>>> `)"
    if _TRACEBACK_RE.match(code):
        return "an error message (a Python traceback), not a program"
    if after_output and not _looks_like_code(code, language) and not _command_lines(code):
        return "sample output (the text before it says so), not a program"
    if language in NOT_PROGRAM_LANGUAGES and language not in _TEXT_FILE_LANGUAGES:
        return f"a `{language}` block: output or notes, not a program"
    return ""


def _language_from_prose(items: list[_Prose | _Fence], index: int) -> str:
    """An untagged block right after "**main.py**" is Python: the name says so."""
    for item in reversed(items[:index]):
        if isinstance(item, _Fence):
            break
        for hint in reversed(item.hints):
            if not hint.used:
                lang = language_for_filename(hint.name.replace("\\", "/"))
                if lang:
                    return lang.name
    return ""


def _take_hint(items: list[_Prose | _Fence], index: int, language: str,
               nearest_only: bool = False) -> _Hint | None:
    """The nearest unused fitting hint in the prose before this block.

    Within a paragraph, hints are tried in reading order ("save `config.json`
    next to `main.py`"). The search goes past an earlier block only while the
    prose between holds no hint at all (two files announced, then two blocks).
    """
    gap_had_hint = False
    for item in reversed(items[:index]):
        if isinstance(item, _Fence):
            if gap_had_hint:
                return None
            continue
        for hint in item.hints:
            if not hint.used and _hint_fits(hint.name, language):
                hint.used = True
                return hint
        gap_had_hint = gap_had_hint or bool(item.hints)
        if nearest_only:
            return None
    return None


def _assign(p: _Pending, name: str, ex: Extraction) -> None:
    safe, why = confine_name(name)
    if safe is None:
        ex.notes.append(f"filename '{_shown(name)}' rejected: {why}; "
                        "saved under a generated name")
    p.block.filename = safe


def _name_blocks(pending: list[_Pending], items: list[_Prose | _Fence], ex: Extraction) -> None:
    for p in pending:
        if p.explicit:
            _assign(p, p.explicit, ex)
    for p in pending:
        if p.explicit or p.kind == "other":
            continue
        hint = _take_hint(items, p.index, p.block.language, nearest_only=p.kind == "data")
        if hint:
            _assign(p, hint.name, ex)
            data_language = _DATA_EXTENSIONS.get(PurePosixPath(hint.name).suffix.lower())
            if not p.block.language and data_language and p.block.filename:
                p.block.language = data_language
                p.block.reason = f"`{data_language}` is not a language VerifyBot runs"


def _mark_commands(pending: list[_Pending], items: list[_Prose | _Fence],
                   ex: Extraction) -> list[str]:
    """Install and run instructions are not the program when the answer has one.

    ``pip install x`` / ``python3 main.py`` blocks would otherwise be run as
    the entry; they still tell us the dependencies and the program's name.
    """
    commands: dict[int, list[list[str]]] = {}
    for i, p in enumerate(pending):
        if p.block.runnable and p.block.language == "bash" and not p.block.filename:
            argvs = _command_lines(p.block.code)
            if argvs:
                commands[i] = argvs
    others = [p for i, p in enumerate(pending) if p.block.runnable and i not in commands]
    if not others:
        return []
    mentions: list[str] = []
    installs: list[str] = []
    for i, argvs in commands.items():
        block = pending[i].block
        block.runnable = False
        block.reason = "commands to install or run the program, not the program itself"
        installs += _pip_installs(argvs)
        mentions += _run_mentions(argvs)
    for item in items:
        if isinstance(item, _Prose):
            for code in item.commands:
                try:
                    mentions += _run_mentions([shlex.split(code)] if code.strip() else [])
                except ValueError:
                    continue
    for name in dict.fromkeys(mentions):
        for p in others:
            if p.block.filename is None and p.explicit is None and _hint_fits(
                    name, p.block.language) and PurePosixPath(name).suffix:
                _assign(p, name, ex)
                if p.block.filename:
                    ex.notes.append(f"block at line {p.block.line} named {p.block.filename} "
                                    "after the command that runs it")
                break
    return list(dict.fromkeys(installs))


def _supersede_duplicates(pending: list[_Pending], ex: Extraction) -> None:
    """Two blocks named main.py: the answer revised it, the later one counts."""
    last: dict[str, _Pending] = {}
    for p in pending:
        name = p.block.filename
        if not name:
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
