"""Blocks that are not programs: console transcripts, sample output, tracebacks,
install and run commands, project trees."""

from __future__ import annotations

import re
import shlex

from verifybot_tui.core.answers.guess import (
    sample,
)
from verifybot_tui.core.answers.hints import looks_like_filename

_PROMPT_RE = re.compile(
    r"^(?:\s*\$|\s*>>>|\.\.\.|\s*[\w.-]+@[\w.-]+:[^\n]*?[$#]"
    r"|PS [A-Za-z]:\\[^>]*>|[A-Za-z]:\\[^>]*>)(?: |$)")
_FIRST_PROMPT_RE = re.compile(r"^\s*(?:\$ |>>> |[\w.-]+@[\w.-]+:[^\n]*?[$#] )")
OUTPUT_RE = re.compile(
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


TRACEBACK_RE = re.compile(r"^\s*Traceback \(most recent call last\):")
PARTIAL_RE = re.compile(
    r"^\s*(?:#|//|/\*|--)\s*(?:\.\.\.|…)?\s*\(?\s*(?:the\s+)?(?:rest|remaining|other|existing|"
    r"same|previous|unchanged)\b[^\n]*(?:unchanged|as before|same|here|code|above|before)",
    re.IGNORECASE | re.M)


def looks_like_transcript(code: str) -> bool:
    """Whether the block is a console session; judged on its first SAMPLE characters."""
    lines = [ln for ln in sample(code).split("\n") if ln.strip()]
    if not lines:
        return False
    prompts = sum(1 for ln in lines if _PROMPT_RE.match(ln))
    first = next((ln for ln in lines if not ln.lstrip().startswith("#")), lines[0])
    return bool(_FIRST_PROMPT_RE.match(first)) or prompts * 2 >= len(lines)


_COMMAND_WORDS = frozenset({
    "pip", "pip3", "python", "python3", "py", "node", "npm", "npx", "gcc", "g++", "cc",
    "clang", "clang++", "make", "cmake", "chmod", "cd", "apt", "apt-get", "brew", "dnf",
    "yum", "pacman", "source", "conda", "uv", "pipx", "mkdir", "bash", "sh", "virtualenv",
    "raspi-config", "export", "javac", "java", "deactivate", "go", "cargo",
    # what real answers put in their set-up blocks (issue 29: `yarn dev` is no program)
    "yarn", "pnpm", "bun", "deno", "touch", "git", "docker", "docker-compose", "podman", "cp",
    "mv", "rm", "ln", "ls", "cat", "rustup", "rustc", "curl", "wget", "nvm", "dotnet", "mvn",
    "gradle", "composer", "gem", "bundle", "rails", "flutter", "pytest", "uvicorn", "flask",
    "gunicorn", "streamlit", "tsc", "ts-node", "protoc", "ninja", "meson", "systemctl",
    "service", "chown", "pio", "arduino-cli", "west", "idf.py", "openocd", "ng", "vite",
    "code", "venv", "poetry", "pipenv", "npm.cmd", "setx", "set", "unzip", "tar",
})


def command_lines(code: str) -> list[list[str]] | None:
    """The block's commands as argv lists, or None if any line is not a run/install command."""
    out = []
    for raw in code.split("\n"):
        line = raw.strip()
        if not line or line.startswith(("#", "//", "REM ", "rem ")):
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


def requirement_name(token: str) -> str | None:
    """The project name of a requirement like ``numpy>=1.2``; None if it is not one."""
    token = token.strip().strip("`'\"*,;")
    if not token or not _PIP_ARG_RE.match(token):
        return None
    return re.split(r"[\[=<>!~]", token, maxsplit=1)[0]


def pip_installs(argvs: list[list[str]]) -> list[str]:
    """The packages that ``pip install`` (or ``python -m pip install``) commands name."""
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
                name = requirement_name(w)
                if name:
                    names.append(name)
    return names


_RUN_FILE_WORDS = {"python": ".py", "python3": ".py", "py": ".py", "node": ".js", "bash": ".sh",
                   "sh": ".sh", "gcc": "", "g++": "", "cc": "", "clang": "", "clang++": ""}


def run_mentions(argvs: list[list[str]]) -> list[str]:
    """Files a run command names: ``python3 blink.py`` says the code is blink.py."""
    found = []
    for argv in argvs:
        if argv[0].startswith("./") and looks_like_filename(argv[0][2:]):
            found.append(argv[0][2:])
            continue
        if argv[0] not in _RUN_FILE_WORDS:
            continue
        for w in argv[1:]:
            if w.startswith("-"):
                if argv[0].startswith("python") and w in ("-m", "-c"):
                    break
                continue
            if looks_like_filename(w):
                found.append(w)
            if not argv[0].endswith(("cc", "++", "clang")):
                break
    return found


_TREE_CHARS = frozenset("├└│─┣┗┃━┬")
_TREE_LINE_RE = re.compile(r"^\s*(?:\|--|\+--|`--|\|\s+\S|\|__)")
_LISTING_RE = re.compile(
    r"\s*(?:[-*+]\s+)?/?[\w.\[\]@+-]+(?:/[\w.\[\]@+-]+)*/?\s*(?:(?:#|//|<-|--).*)?")


def looks_like_tree(code: str) -> bool:
    """Whether the block is a project tree (├── src/, |-- main.py, or an indented
    listing of folders and names): it shows a layout, it is no file and no program."""
    lines = [ln for ln in code[:16_000].split("\n")[:200] if ln.strip()]  # trees are short
    if len(lines) < 2:
        return False
    drawn = sum(1 for ln in lines if _TREE_CHARS & set(ln) or _TREE_LINE_RE.match(ln))
    if drawn * 2 >= len(lines):
        return True
    if not all(_LISTING_RE.fullmatch(ln) for ln in lines):
        return False
    words = [ln.split()[0].lstrip("-*+ ") if ln.split()[0] in "-*+" else ln.split()[0]
             for ln in lines]
    folders = sum(1 for w in words if w.endswith("/") or w.startswith("/"))
    if folders and any(ln[:1].isspace() for ln in lines):
        return True
    # flat, as gpt-engineer prints it: folders and source files, one a line (a
    # .gitignore has folders too, but seldom names two source files)
    named = sum(1 for w in words if not w.endswith("/") and looks_like_filename(w)
                and not w.startswith("."))
    return folders >= 2 and named >= 2


_TREE_PREFIX = frozenset(" \t│├└─┣┗┃━┬|`+-")


def tree_paths(code: str) -> list[str]:
    """The files a drawn or indented project tree shows, as paths below its root folder
    (``spaced-repetition/`` then ``├── src/`` then ``│   └── App.js`` is src/App.js)."""
    entries: list[tuple[int, str]] = []  # (depth in columns, name)
    for line in code[:16_000].split("\n")[:400]:
        if not line.strip():
            continue
        at = 0
        while at < len(line) and line[at] in _TREE_PREFIX:
            at += 1
        words = line[at:].split()
        if not words:
            continue
        word = words[0] if words[0].startswith("//") else words[0].split("//", 1)[0]
        word = word.split("#", 1)[0]
        name = word.strip("/") + ("/" if word.endswith("/") or word.startswith("/") else "")
        if name.strip("/"):
            entries.append((at, name))
    paths: list[str] = []
    stack: list[tuple[int, str]] = []  # the folders above the current line
    for i, (depth, name) in enumerate(entries):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        deeper = i + 1 < len(entries) and entries[i + 1][0] > depth
        if name.endswith("/") or deeper:
            stack.append((depth, name.rstrip("/")))
        else:
            paths.append("/".join([*(s[1] for s in stack), name]))
    if entries and all(d > entries[0][0] for d, _ in entries[1:]):
        root = entries[0][1].rstrip("/") + "/"  # one folder holds it all: the project
        paths = [p[len(root):] for p in paths if p.startswith(root)]
    return paths
