"""Every command a reader of the README and the docs would type, as one list.

tests/docs/test_doc_commands.py holds each of them to a test (run offline) or to a reason
it cannot run here; this module only finds them, so that what counts as a command is
decided in one place and a new page under docs/ is read without anyone listing it.

What is a command:
- each line of a shell fence (```sh, ```bash, ```shell, ```console), continuations (`\\`)
  joined, `&&` / `;` chains split, comments dropped, a `$ ` prompt taken off;
- in a fence without a language and in an indented block, a line that starts like a
  command (``COMMAND_STARTS``); fences of other languages (toml, json, markdown) are not
  typed at a shell;
- an inline code span that starts like one (across a line break too; ``\\|`` of a table
  cell read as ``|``).
The benchmark scripts (bench/*.py) are not collected: they measure, for minutes, and are
run by hand (the README's Benchmarks table).

Normalised: ``.venv/bin/verifybot`` and ``python -m verifybot_tui`` are not merged into
``verifybot`` blindly: ``.venv/bin/verifybot`` is (the README says so), while ``python -m
verifybot_tui`` stays itself, since the docs name it to say that it is the same command.
Runs of spaces become one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SHELL_LANGS = {"sh", "bash", "shell", "console", "shell-session"}

# What a command starts with (after normalising). Our own command, its module form, the
# project's scripts, and the system commands the docs tell a reader to type.
COMMAND_STARTS = (
    "verifybot ", "python -m verifybot_tui", "python3 -m verifybot_tui", "scripts/",
    ".venv/bin/", ". .venv/bin/activate", "python3 -m venv", "sudo ", "apt ", "apt-get ",
    "pip ", "playwright ", "labgrid-client ", "usbipd ", "wsl ", "claude mcp ",
)

# A fence opens a line (indented as deep as a list item nests it); a backtick fence's
# info string holds no backtick (CommonMark), so ```` ```markdown ```` in text is a span.
FENCE = re.compile(r"^( *)(`{3,}(?=[^`]*$)|~{3,})\s*(\S*)")


@dataclass(frozen=True)
class Found:
    """One command as the docs write it (normalised) and where."""

    command: str
    where: str  # "README.md:42"


def doc_files(root: Path) -> list[Path]:
    """README.md and every page under docs/ (when there is a docs/), in a stable order."""
    docs = root / "docs"
    pages = sorted(docs.rglob("*.md")) if docs.is_dir() else []
    return [root / "README.md", *pages]


def normalise(command: str) -> str:
    text = " ".join(command.split())
    if text == ".venv/bin/verifybot" or text.startswith(".venv/bin/verifybot "):
        text = text[len(".venv/bin/"):]
    return text


def is_command(text: str) -> bool:
    """Starts like a command, and is one: ``verifybot ...`` (any command) is not."""
    words = normalise(text).split()
    if len(words) > 1 and set(words[1:]) == {"..."}:
        return False
    if len(words) == 1 and words[0] != "verifybot" and not words[0].startswith("scripts/"):
        return False  # `apt-get`, `labgrid-client`: a tool named, not a command to type
    return (" ".join(words) + " ").startswith(COMMAND_STARTS)


def split_chain(line: str) -> list[str]:
    """``a && b; c  # note`` -> ``["a", "b", "c"]``: outside quotes, ``&&`` and ``;``
    separate commands and ``#`` after a space starts a comment."""
    parts, current, quote, i = [], "", "", 0
    while i < len(line):
        ch = line[i]
        if quote:
            current += ch
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote, current = ch, current + ch
        elif ch == "#" and (not current or current[-1].isspace()):
            break
        elif line.startswith("&&", i) or ch == ";":
            parts.append(current)
            current = ""
            i += 2 if ch == "&" else 1
            continue
        else:
            current += ch
        i += 1
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def block_commands(lines: list[tuple[int, str]], shell: bool) -> list[tuple[int, str]]:
    """The commands of one code block's lines (numbered): a shell block's every line,
    another block's lines that start like a command."""
    found: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in lines:
        line = raw.strip()
        if line.startswith("#"):
            continue
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if shell and line.startswith("$ "):
            line = line[2:]
        for command in split_chain(line):
            if (shell and command.split()[1:] != ["..."]) or is_command(command):
                found.append((start, command))
    return found


def inline_commands(paragraph: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The inline code spans of one paragraph that are commands."""
    text = "\n".join(line for _, line in paragraph)
    found = []
    for match in re.finditer(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", text, flags=re.S):
        span = match.group(2).replace("\n", " ")
        if span.startswith(" ") and span.endswith(" ") and span.strip():
            span = span[1:-1]
        span = span.replace("\\|", "|")
        if is_command(span):
            number = paragraph[0][0] + text.count("\n", 0, match.start())
            found.append((number, span))
    return found


def page_commands(text: str) -> list[tuple[int, str]]:
    """(line number, command as written) for one markdown page."""
    found: list[tuple[int, str]] = []
    lines = list(enumerate(text.splitlines(), 1))
    paragraph: list[tuple[int, str]] = []
    i = 0

    def end_paragraph() -> None:
        found.extend(inline_commands(paragraph))
        paragraph.clear()

    while i < len(lines):
        number, line = lines[i]
        fence = FENCE.match(line)
        if fence:
            end_paragraph()
            marker, lang = fence.group(2), fence.group(3).lower()
            body: list[tuple[int, str]] = []
            i += 1
            while i < len(lines) and not (lines[i][1].strip().startswith(marker)
                                          and not lines[i][1].strip().strip(marker[0])):
                body.append(lines[i])
                i += 1
            i += 1
            if not lang or lang in SHELL_LANGS:  # toml, json, markdown...: not typed
                found.extend(block_commands(body, shell=lang in SHELL_LANGS))
            continue
        previous_blank = i == 0 or not lines[i - 1][1].strip()
        if line.startswith("    ") and line.strip() and previous_blank:
            end_paragraph()
            body = []
            while i < len(lines) and (lines[i][1].startswith("    ") or not lines[i][1].strip()):
                body.append(lines[i])
                i += 1
            found.extend(block_commands(body, shell=False))
            continue
        if line.strip():
            paragraph.append((number, line))
        else:
            end_paragraph()
        i += 1
    end_paragraph()
    return found


def collect(root: Path) -> list[Found]:
    """Every command of README.md and docs/**/*.md, normalised, in page order."""
    result = []
    for page in doc_files(root):
        for number, command in page_commands(page.read_text(encoding="utf-8")):
            result.append(Found(normalise(command), f"{page.relative_to(root)}:{number}"))
    return result


# -- how a documented command is checked ---------------------------------------------------


@dataclass(frozen=True)
class Run:
    """A command run here, for real, as the docs say it runs.

    ``args`` follow the installed ``verifybot`` (``module``: ``python -m verifybot_tui``;
    ``shell``: a bash line instead); each ``{name}`` in them, and in the other texts, is
    filled from ``Folder.values`` (the docs' FILE, N, DIR... made real). It runs in a
    folder of its own holding a copy of examples/ (so the docs' relative paths work as
    written) with ``given`` files written first and ``config`` as the user's config, as
    a user with a home of their own and no display, stdin closed (or ``stdin``).
    ``place``: "own"; "first" runs in the shared folder before the "world" commands
    there, which read what it made (a session, a comparison).
    It must exit with ``code``, print each of ``says`` (stdout or stderr) and none of
    ``never``, and leave a file matching each glob of ``files``.
    """

    args: tuple[str, ...] = ()
    code: int = 0
    says: tuple[str, ...] = ()
    never: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    given: tuple[tuple[str, str], ...] = ()
    config: str = ""
    stdin: str | None = None
    place: str = "own"
    shell: str = ""
    module: bool = False


@dataclass(frozen=True)
class Elsewhere:
    """A command another test already runs, the docs' placeholders filled there: that
    test (``path::name``) must exist, and its module (or a tests/support module it imports
    from) must spell each of ``args``."""

    test: str
    args: tuple[str, ...]


def fill(text: str, values: dict[str, str]) -> str:
    """``{name}`` replaced for the names in ``values``; any other brace stays (TOML, JSON)."""
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), text)


def verifybot_entry() -> list[str]:
    """The installed ``verifybot`` of this venv (the module form where none is installed)."""
    entry = Path(sys.executable).parent / "verifybot"
    return [str(entry)] if entry.exists() else [sys.executable, "-m", "verifybot_tui"]


@dataclass
class Folder:
    """Where one command runs: its folder, its user's home, the values its texts name."""

    path: Path
    home: Path
    values: dict[str, str]

    @classmethod
    def make(cls, path: Path, home: Path, cache: Path, root: Path,
             values: dict[str, str]) -> Folder:
        path.mkdir(parents=True)
        shutil.copytree(root / "examples", path / "examples")
        for task in BENCH_TASKS:
            shutil.copytree(root / "benchmarks" / "embedded" / task,
                            path / "benchmarks" / "embedded" / task)
        for sub in ("config/verifybot", "data", "state"):
            (home / sub).mkdir(parents=True, exist_ok=True)
        return cls(path, home, {**values, "home": str(home), "cache": str(cache)})

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if k not in ("DISPLAY", "WAYLAND_DISPLAY", "EDITOR", "VISUAL")}
        env.update(HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / "config"),
                   XDG_DATA_HOME=str(self.home / "data"),
                   XDG_STATE_HOME=str(self.home / "state"),
                   XDG_CACHE_HOME=self.values["cache"], NO_COLOR="1")
        return env

    def run(self, run: Run, timeout: float = 240) -> subprocess.CompletedProcess[str]:
        for name, text in run.given:
            (self.path / name).write_text(fill(text, self.values), encoding="utf-8")
        if run.config:
            (self.home / "config" / "verifybot" / "config.toml").write_text(
                fill(run.config, self.values), encoding="utf-8")
        if run.shell:
            argv = ["bash", "-c", fill(run.shell, self.values)]
        else:
            entry = [sys.executable, "-m", "verifybot_tui"] if run.module else verifybot_entry()
            argv = [*entry, *(fill(arg, self.values) for arg in run.args)]
        stdin = None if run.stdin is None else fill(run.stdin, self.values)
        return subprocess.run(argv, cwd=self.path, env=self.env(), input=stdin,
                              stdin=subprocess.DEVNULL if stdin is None else None,
                              capture_output=True, text=True, timeout=timeout)

    def problems(self, run: Run, done: subprocess.CompletedProcess[str]) -> list[str]:
        """What the docs say that this run did not show (empty: as documented)."""
        said = done.stdout + done.stderr
        found = []
        if done.returncode != run.code:
            found.append(f"exit {done.returncode}, the docs say {run.code}")
        found += [f"does not say {fill(t, self.values)!r}" for t in run.says
                  if fill(t, self.values) not in said]
        found += [f"says {fill(t, self.values)!r}" for t in run.never
                  if fill(t, self.values) in said]
        for pattern in run.files:
            pattern = fill(pattern, self.values)
            base, rel = (Path("/"), pattern[1:]) if pattern.startswith("/") else (self.path,
                                                                                 pattern)
            if not list(base.glob(rel)):
                found.append(f"left no {pattern}")
        return found


# Two of the embedded benchmark's tasks that run on this machine (no board): the compare
# commands of the docs run on them (the whole benchmark is compare --check's, in
# tests/cli/test_compare_check.py).
BENCH_TASKS = ("crc32-local", "modbus-crc16-local")
