"""Files from others that set commands: shown once, remembered by their content's hash.

A recipe or a board file can make VerifyBot run a program of its choosing: a
``compiler`` or ``qemu`` that is not the usual tool, or ``flags`` that run one
(``-wrapper``, ``-fplugin``, ``-B``, ``-specs`` from elsewhere, ``@file``).
Such a file runs only once the user has said yes to that exact content (asked
in the terminal, or ``--trust``); the yes is kept as the SHA-256 of the bytes in
the state folder, so a changed file is asked about again. ``--yes`` (accept every
version of the program) is no such answer.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings.ui_state import state_path

# The compilers everyone has by these names, found on PATH: the user's own tools.
_PLAIN_COMPILER = re.compile(
    r"^(?:[a-z0-9_]+-)*(?:gcc|g\+\+|cc|c\+\+|clang|clang\+\+)(?:-[0-9]+(?:\.[0-9]+)*)?$")
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9_.+-]+$")
_PLAIN_QEMU = re.compile(r"^qemu-system-[a-z0-9_]+$")
_QEMU_PLAIN_OPTIONS = ("-M", "-machine", "-cpu", "-m")
# The spec files the toolchains ship, found in their own folders.
_TOOLCHAIN_SPECS = ("nano.specs", "nosys.specs", "rdimon.specs", "rdimon-v2m.specs",
                    "rdpmon.specs")


@dataclass(frozen=True)
class Finding:
    """One key of a file that makes VerifyBot run something."""

    key: str
    value: str
    why: str

    def __str__(self) -> str:
        return f"{self.key} = {self.value} ({self.why})"


@dataclass
class FileToTrust:
    """A file that sets commands, as read (the bytes hashed are the bytes used)."""

    path: Path
    digest: str
    findings: list[Finding] = field(default_factory=list)

    def describe(self) -> str:
        return f"{self.path}: " + "; ".join(str(f) for f in self.findings)


class UntrustedFile(ConfigError):
    """A file that sets commands the user has not said yes to (exit 2)."""

    def __init__(self, files: list[FileToTrust], how: str = "") -> None:
        self.files = files
        keys = " | ".join(f.describe() for f in files)
        super().__init__(
            f"not run: a file from others sets commands (or widens what runs), and nobody "
            f"approved it: {keys}. "
            "Read the file; to run it, answer yes when asked in a terminal, or pass --trust"
            + (f" ({how})" if how else "") + ". --yes does not approve commands")


class RefusedFile(UntrustedFile):
    """The user was shown such a file and said no: nothing of it ran, nothing is kept.

    A front end that asked has already told the user; it need not say it again."""


def once_per_content(files: list[FileToTrust]) -> list[FileToTrust]:
    """The files that set commands nobody approved, each content once (two targets on
    one board file, or a file asked about twice at once, make one question)."""
    return list({f.digest: f for f in unapproved(files)}.values())


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _store() -> Path:
    return state_path().parent / "trusted-files"


_SESSION: set[str] = set()  # approved in this process (kept even if the store is read-only)


def is_approved(sha: str) -> bool:
    if sha in _SESSION:
        return True
    try:
        text = _store().read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.split(" ", 1)[0] == sha for line in text.splitlines())


def approve(f: FileToTrust) -> None:
    """Remember the yes for this content: in this process, and in the state folder."""
    _SESSION.add(f.digest)
    path = _store()
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as out:
            out.write(f"{f.digest} {str(f.path)!r}\n")
    except OSError:
        pass  # remembered for this run only; the next run asks again


def unapproved(files: list[FileToTrust]) -> list[FileToTrust]:
    return [f for f in files if f.findings and not is_approved(f.digest)]


def require(files: list[FileToTrust], how: str = "") -> None:
    """Raise UntrustedFile when any of ``files`` sets commands nobody approved."""
    missing = unapproved(files)
    if missing:
        raise UntrustedFile(missing, how)


# -- what counts as a command ------------------------------------------------------


def plain_compiler(name: str) -> bool:
    return bool(_PLAIN_COMPILER.match(name))


def compiler_finding(key: str, name: str) -> list[Finding]:
    if not name or plain_compiler(name):
        return []
    return [Finding(key, repr(name), "runs this program as the compiler")]


def qemu_finding(argv: list[str]) -> list[Finding]:
    """The emulator line: the usual ``qemu-system-X -M board`` is not a command of
    others; any other program or option (a chardev, a script, semihosting) is."""
    if not argv:
        return []
    plain = bool(_PLAIN_QEMU.match(argv[0])) and len(argv) % 2 == 1
    rest = argv[1:]
    for opt, value in zip(rest[::2], rest[1::2], strict=False):
        if opt not in _QEMU_PLAIN_OPTIONS or not _PLAIN_WORD.match(value):
            plain = False
    if plain:
        return []
    return [Finding("qemu", " ".join(argv), "runs this command as the emulator")]


def plain_word_finding(key: str, value: str, why: str) -> list[Finding]:
    if not value or _PLAIN_WORD.match(value):
        return []
    return [Finding(key, repr(value), why)]


def _specs_ok(value: str, package: Path | None) -> bool:
    if "/" not in value:
        return value in _TOOLCHAIN_SPECS
    if package is None:
        return False
    try:
        return Path(os.path.realpath(value)).is_relative_to(os.path.realpath(package))
    except OSError:
        return False


def risky_flags(key: str, flags: list[str], package: Path | None = None) -> list[Finding]:
    """Compiler flags that run a program or read options from elsewhere: ``-wrapper``,
    ``-fplugin``, ``-B`` (where the compiler finds its own programs), ``-specs``
    outside the board package, ``@file``, a linker plugin or another linker."""
    found: list[str] = []
    i = 0
    while i < len(flags):
        f = flags[i]
        nxt = flags[i + 1] if i + 1 < len(flags) else ""
        spec = re.match(r"^--?specs(?:=(.*))?$", f)
        if f == "-Xlinker" and "plugin" in nxt:
            found.append(f"{f} {nxt}")
            i += 2
            continue
        if f in ("-wrapper", "-B", "-specs", "--specs", "-iplugindir"):
            if f in ("-specs", "--specs") and _specs_ok(nxt, package):
                i += 2
                continue
            found.append(f"{f} {nxt}".strip())
            i += 2
            continue
        if spec and spec.group(1) is not None:
            if not _specs_ok(spec.group(1), package):
                found.append(f)
        elif (f.startswith(("-fplugin", "-B", "@", "--ld-path", "-iplugindir", "-wrapper"))
              or (f.startswith("-fuse-ld=") and "/" in f)
              or (f.startswith(("-Wl,", "-Xlinker")) and "plugin" in f)
              or re.match(r"^-W[pal],.*(?:-wrapper|-fplugin|-B|@|--plugin|-plugin)", f)):
            found.append(f)
        i += 1
    return [Finding(key, v, "makes the compiler run or read another program or file")
            for v in found]
