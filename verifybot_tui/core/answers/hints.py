"""Where an answer names its files: prose, headings, info strings, first-line comments.

A person reads "**app/__init__.py**", "src/main.rs" alone on a line, "Proto file
(chat.proto):" or "// Create a file called `database.js`." as the name of the
block that follows; these are the readings, kept exactly as written.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.token import Token

from verifybot_tui.core.answers.languages import (
    LANGUAGES,
    language_for_filename,
    language_named,
)

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
    # what real multi-file answers bring beside their code (issue 29)
    ".proto": "protobuf", ".kt": "kotlin", ".swift": "swift", ".cs": "csharp",
    ".scala": "scala", ".dart": "dart", ".vue": "vue", ".svelte": "svelte", ".scss": "scss",
    ".sass": "sass", ".less": "less", ".lock": "text", ".mod": "go-mod", ".sum": "text",
    ".gradle": "groovy", ".properties": "properties", ".svg": "xml", ".graphql": "graphql",
    ".gql": "graphql", ".prisma": "prisma", ".tf": "hcl", ".hcl": "hcl", ".bat": "batch",
    ".ps1": "powershell", ".cmake": "cmake", ".tsv": "csv", ".jsonl": "json", ".ejs": "html",
    ".hbs": "handlebars", ".pug": "pug", ".j2": "jinja", ".jinja": "jinja", ".ex": "elixir",
    ".exs": "elixir", ".hs": "haskell", ".ml": "ocaml", ".zig": "zig", ".sol": "solidity",
    ".pl": "perl", ".r": "r", ".S": "asm", ".asm": "asm", ".lds": "ld", ".cxx": "cpp",
    ".dockerfile": "dockerfile", ".example": "text", ".in": "text", ".cjs": "javascript",
}
# Files whose usual name has no extension, named in prose as **Makefile**.
_BARE_FILE_NAMES = frozenset({  # not "makefile" nor "dockerfile": fence languages
    "Makefile", "GNUmakefile", "Dockerfile", "Procfile", "Gemfile", "Rakefile", "Jenkinsfile",
    "Vagrantfile", "Containerfile"})
# Names that start with a dot and have no other extension.
_DOT_FILES = frozenset({
    ".gitignore", ".gitattributes", ".dockerignore", ".env", ".editorconfig", ".prettierrc",
    ".eslintrc", ".babelrc", ".npmrc", ".nvmrc", ".flake8", ".pylintrc", ".clang-format",
    ".gdbinit", ".env.example", ".env.local", ".eslintignore", ".prettierignore"})
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
_DATA_LANGUAGE_EXTS["cmake"] = {".cmake", ".txt"}
_DATA_LANGUAGE_EXTS["proto"] = {".proto"}


_FILENAME_RE = re.compile(r"^[^\s`*'\"<>|]+\.[A-Za-z][A-Za-z0-9+_-]{0,9}$")
_LABEL_RE = re.compile(r"(?:^|\n)\s*(?:file ?name|file)\s*:\s*`?([^\s`]+)`?", re.IGNORECASE)
_HEADING_PREFIX_RE = re.compile(
    r"^(?:(?:step\s*)?\d+[.):]\s*|(?:file|filename|path)\s*:\s*)", re.IGNORECASE)
_COMMENT_HINT_RE = re.compile(
    r"^\s*(?:#|//|--|;|/\*|<!--)\s*(?:(?:file ?name|file|path)\s*[:=]\s*)?"
    r"`?([^\s`*]+?)`?\s*(?:\*/|-->)?\s*$",
    re.IGNORECASE)
_COMMENT_LABELLED_RE = re.compile(r"(?:file ?name|file|path)\s*[:=]", re.IGNORECASE)
TEXT_FILE_LANGUAGES = frozenset({"text", "txt", "plaintext", "plain", "none"})


def _names_a_file(text: str) -> bool:
    """Loose test for explicitly labelled names: a title such as "Blink LED" is not one."""
    return bool(PurePosixPath(text.replace("\\", "/")).suffix) or "/" in text or "\\" in text


# Product names that look like files: "Install **Node.js** first" names no block.
_NOT_FILES = frozenset({
    "node.js", "vue.js", "express.js", "three.js", "chart.js", "next.js", "nuxt.js", "d3.js",
    "p5.js", "moment.js", "ember.js", "backbone.js", "alpine.js", "react.js", "angular.js",
    "deno.js", "bun.js", "anime.js", "pixi.js", "babylon.js", "socket.io", "htmx.js",
})


def looks_like_filename(text: str) -> bool:
    """A word that names a file: a known extension, a bare Makefile, a dot file."""
    text = text.strip()
    base = text.replace("\\", "/").rsplit("/", 1)[-1]
    if base in _BARE_FILE_NAMES or base in _DOT_FILES:
        return not any(c.isspace() for c in text) and "://" not in text
    if "://" in text or text.lower() in _NOT_FILES or not _FILENAME_RE.match(text):
        return False
    return PurePosixPath(text.replace("\\", "/")).suffix.lower() in _KNOWN_EXTENSIONS


# What the raw markdown of a paragraph holds when its inline text may name a file:
# a dot before a letter (every name looks_like_filename takes, and every one a run
# command mentions), the word "file" (a "File: Makefile" label, see _LABEL_RE), or
# an "&" (an entity such as &#46; that renders as a dot). A superset, never a test.
_DOT_LETTER_RE = re.compile(r"\.[A-Za-z]")


def may_name(text: str) -> bool:
    """See above; str methods and a literal-led pattern (an alternation under
    IGNORECASE scanned at a tenth of the speed)."""
    return "&" in text or "file" in text.lower() or _DOT_LETTER_RE.search(text) is not None


@dataclass
class Hint:
    """A file name seen in the prose, where it was seen, and whether a block took it."""

    name: str
    line: int
    used: bool = False


class Prose:
    """A paragraph or heading; its inline markdown is parsed only when first read.

    Inline parsing is most of the cost of a big answer, and only the prose near
    a code block is ever read (hints, commands): a 50 MB wall of text costs its
    block parse alone.
    """

    def __init__(self, inline: Token, line: int, heading: bool, md: MarkdownIt,
                 group: int | None = None) -> None:
        self.line = line
        self.group = group  # the outermost list it stands in, if any
        self._inline = inline
        self._heading = heading
        self._md = md
        self._parsed: tuple[str, list[Hint], list[str]] | None = None
        # Most paragraphs can hold no file name at all: then hints and commands are
        # known without parsing their inline markdown (what made a 50 MB answer of
        # prose cost tens of seconds: every paragraph before a block was parsed).
        self._may_name = may_name(inline.content)

    def _parse(self) -> tuple[str, list[Hint], list[str]]:
        if self._parsed is None:
            tok = self._inline
            if not tok.children:
                children: list[Token] = []
                self._md.inline.parse(_near_end(tok.content), self._md, {}, children)
                tok.children = children
            self._parsed = _prose_hints(tok, self.line, self._heading)
        return self._parsed

    @property
    def raw(self) -> str:
        """The paragraph's markdown source, as the answer wrote it."""
        return self._inline.content

    @property
    def text(self) -> str:
        return self._parse()[0]

    @property
    def hints(self) -> list[Hint]:
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


def _prose_hints(inline: Token, line: int, heading: bool) -> tuple[str, list[Hint], list[str]]:
    text, _spans, codes = _inline_parts(inline)
    hints = [Hint(n, line) for n in raw_names(_near_end(inline.content), heading)]
    return text, hints, codes


# Names are read from the paragraph's markdown source, not from its rendered text:
# markdown turns **app/__init__.py** into "app/" + bold "init" + ".py".
_CODE_SPAN_RE = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_STAR_RE = re.compile(r"(\*{1,3})(?=\S)(.+?)(?<=\S)\1", re.S)
_PAREN_RE = re.compile(r"\(([^()\s]+(?:\([^()\s]*\)[^()\s]*)?)\)")
_TOKEN_RE = re.compile(r"\S+")
_ESCAPED_RE = re.compile(r"\\([!-/:-@\[-`{-~])")
# Words after which a plain name in prose is the block's: "Save this as factorial.cpp",
# "a file called main.py", "add this to src/app.js:".
_TRIGGERS = frozenset({"as", "called", "named", "file", "filename", "into", "to", "in", "create",
                       "save", "edit", "update", "open", "path", "file:", "filename:", "path:"})
_STRIP = "*`\"'(),;:!?<>"
# A marker line before a block: "--- ./src/config.ts ---", "=== main.py ===".
_MARKER_RE = re.compile(r"^(-{2,}|={2,}|#{3,}|\*{3,})\s*(?:file:?\s*)?([^\s`*]+|`[^`]+`)\s*\1$",
                        re.I)
# A name and a remark after it: "main.py (entrypoint)", "app.js - the server".
_REMARK_RE = re.compile(r"^\S+\s+(?:\([^()]*\)|[-–—:]\s+.*)$")
_LEAD_WORDS_RE = re.compile(
    r"^(?:#+\s*)?(?:(?:step\s*)?\d+[.):]\s*)?(?:(?:file ?name|file|path)\s*:?\s*)?", re.I)


def _clean_name(raw: str, code: bool = False) -> str:
    name = raw.strip()
    if not code:
        name = html.unescape(_ESCAPED_RE.sub(r"\1", name))
    name = name.strip().strip(_STRIP).rstrip(".").strip(_STRIP)
    if name.startswith("__") and name.endswith("__") and not looks_like_filename(name):
        name = name[2:-2]  # __main.py__: underscore bold, not a dunder
    return name


def raw_names(raw: str, heading: bool = False) -> list[str]:
    """The file names a paragraph or heading gives, in reading order, exactly as written.

    Strong marks name a file wherever they stand: a code span, bold or italics, a name
    in parentheses, a ``File: x`` label. A plain word names one in a heading, alone on
    its line (``src/main.rs``, ``project/CMakeLists.txt:``), or after a word such as
    "as", "called" or "to" ("Save this as factorial.cpp.").
    """
    marker = _MARKER_RE.match(raw.strip())
    if marker and looks_like_filename(name := _clean_name(marker.group(2))):
        return [name]  # "--- ./src/config.ts ---" on its own line
    found: list[tuple[int, str]] = []
    masked = raw
    spaced = set()  # names in code spans or bold may hold spaces ("my app/run.py")
    for m in _CODE_SPAN_RE.finditer(raw):
        found.append((m.start(), name := _clean_name(m.group(2), code=True)))
        spaced.add(name)
        masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
    for m in _STAR_RE.finditer(masked):
        found.append((m.start(), name := _clean_name(m.group(2))))
        spaced.add(name)
    for m in _PAREN_RE.finditer(masked):
        found.append((m.start(), _clean_name(m.group(1))))
    labelled = set()  # "File: x" says it is a file name: no known extension needed
    for m in _LABEL_RE.finditer(masked):
        found.append((m.start(1), name := m.group(1).rstrip(".,;:)")))
        labelled.add(name)
    tokens = list(_TOKEN_RE.finditer(masked))
    lead = _LEAD_WORDS_RE.sub("", masked.strip().strip("*_` "))
    alone = len(lead.split()) == 1 or bool(_REMARK_RE.match(lead))  # "main.py (entrypoint)"
    for i, m in enumerate(tokens):
        before = tokens[i - 1].group().strip(_STRIP).lower() if i else ""
        after = tokens[i + 1].group().strip(_STRIP).lower() if i + 1 < len(tokens) else ""
        if (heading or alone or before in _TRIGGERS or before.rstrip(":") in _TRIGGERS
                or after == "file"):  # "the updated main.py file:"
            found.append((m.start(), _clean_name(m.group())))
    names: list[str] = []
    for _, name in sorted(found, key=lambda f: f[0]):
        if name not in names and (looks_like_filename(name) or name in labelled or (
                name in spaced and " " in name.strip() and "  " not in name
                and not set(name) & set("()[]{}")
                and looks_like_filename(name.replace(" ", "_")))):
            names.append(name)
    return names


def hint_fits(name: str, language: str) -> bool:
    """Whether a hint can name a block: ``utils.py`` never names a bash block, and
    ``chat.proto`` names a ``proto`` block (a language we know no extensions of)."""
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
        return language == "jsx" and hinted.name == "javascript"  # App.js in a jsx block
    if language not in _DATA_LANGUAGE_EXTS:
        return True  # a language we know no extensions of: any data name fits
    return suffix in _DATA_LANGUAGE_EXTS[language]


def data_language(name: str) -> str:
    """The language a file's name says, runnable or not (``Cargo.toml`` is toml)."""
    lang = language_for_filename(name.replace("\\", "/"))
    if lang:
        return lang.name
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if base in ("Makefile", "GNUmakefile"):
        return "makefile"
    if base in ("Dockerfile", "Containerfile"):
        return "dockerfile"
    if base == "CMakeLists.txt":
        return "cmake"
    return _DATA_EXTENSIONS.get(PurePosixPath(base).suffix.lower(), "")


# --------------------------------------------------------------------------- info strings

_INFO_NAME_RE = re.compile(
    r"""(?:title|file|filename|name|path)\s*=\s*(?:"([^"]*)"|'([^']*)'|(\S+))""", re.IGNORECASE)


def parse_info(info: str) -> tuple[str, str | None]:
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
            if looks_like_filename(token):
                filename = token
                break
    if not language_named(word) and looks_like_filename(word):
        filename = filename or word
        lang = language_for_filename(word)
        word = lang.name if lang else _DATA_EXTENSIONS.get(
            PurePosixPath(word).suffix.lower(), "")
    return word, filename


def normalise_language(word: str) -> str:
    """A fence's language word as the language's own name (``py`` is python)."""
    lang = language_named(word)
    return lang.name if lang else word.strip().lower()


_COMMENT_MARK_RE = re.compile(r"^\s*(?:#|//|--|;|/\*|<!--)\s*(.*?)\s*(?:\*/|-->)?\s*$")
_COMMENT_SAYS_RE = re.compile(
    r"\b(?:file|called|named|as|save\w*\s+(?:this|it)\s+(?:as|in|to))\s+(?=`?([^\s`]+))", re.I)


_SAVE_AFTER_RE = re.compile(
    r"^\W*(?:save|store|put|name|call)\s+(?:this|it|that|the\s+(?:above\s+)?(?:code|file|"
    r"program|script))(?:\s+(?:code|file|program|script))?\s+(?:as|in|to|into)\s+"
    r"(?:a\s+file\s+(?:called|named)\s+)?(\S+)", re.I)


def name_after(raw: str) -> str | None:
    """The name a paragraph right after a block gives it: "Save this as factorial.cpp"."""
    m = _SAVE_AFTER_RE.match(raw)
    if m:
        name = _clean_name(m.group(1))
        if looks_like_filename(name):
            return name
    return None


def comment_hint(code: str) -> tuple[str | None, str]:
    """A first-line comment naming the file, and the code a person would save.

    ``# file: main.py`` or just ``// main.c`` name the file and stay in it. A comment
    that tells what to do (``// Create a file called `database.js`.``, then ``touch
    database.js`` and ``// Add the following code to `database.js`.``) names it too,
    and those instruction lines are not part of the file.
    """
    lines = code.split("\n", 3)[:3]
    if (bare := _path_line(lines)) is not None:
        return bare, code.split("\n", 1)[1]
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    for line in lines[:1]:
        m = _COMMENT_HINT_RE.match(line)
        if m:
            name = m.group(1)
            if looks_like_filename(name) or (
                    _COMMENT_LABELLED_RE.search(line) and _names_a_file(name)):
                return name, code
        said = _COMMENT_MARK_RE.match(line)
        for told in _COMMENT_SAYS_RE.finditer(said.group(1) if said else ""):
            if looks_like_filename(name := _clean_name(told.group(1))):
                return name, _without_instructions(code, name)
    return None, code


def _path_line(lines: list[str]) -> str | None:
    """``src/components/EmojiBubble.jsx`` alone on a block's first line, code below: the
    name, which no program starts with (a listing of paths is a tree, not this)."""
    if len(lines) < 2:
        return None
    first = lines[0].strip().rstrip(":")
    rest = next((ln.strip() for ln in lines[1:] if ln.strip()), "")
    if (first != lines[0].rstrip().rstrip(":") or not looks_like_filename(first)
            or not rest or looks_like_filename(rest.rstrip("/"))):
        return None
    return first


def _without_instructions(code: str, name: str) -> str:
    """The code after "Create a file called x" / "touch x" / "Add this code to x"."""
    lines = code.split("\n")
    i = 0
    while i < len(lines) and i < 6:
        line = lines[i].strip()
        said = _COMMENT_MARK_RE.match(line)
        if not line or line in (f"touch {name}", f"touch ./{name}") or (
                said and line[:1] in "#/-;<" and name in said.group(1)):
            i += 1
            continue
        break
    return "\n".join(lines[i:]) if i < len(lines) else code


# --------------------------------------------------------------------------- confinement
# An answer's file names made safe: nothing it names may leave the run folder. Names
# from an answer are untrusted input, so every one goes through confine_name before
# it can name a file under programs/.

_WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)
_PORTABILITY_BAD = set('<>:"|?*')
_MAX_COMPONENT_BYTES = 255
_MAX_NAME_CHARS = 1024


def shown_name(name: str, limit: int = 80) -> str:
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
