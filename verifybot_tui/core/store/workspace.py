"""The workspace folders and the rule that nothing saved is ever overwritten.

Programs and outputs are versioned: a new version takes the next free number,
created with O_EXCL so two sessions in one workspace cannot take the same name.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.fresh_file import write_fresh

_SLUG_WORDS = 6
_SLUG_MAX = 40
NAME_MAX = 255  # bytes in one file name on Linux file systems
_VERSION_ROOM = 8  # "_" and up to 7 digits of a version number
PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_SYSTEM_TREES = ("/proc", "/sys", "/dev")


def slugify(text: str) -> str:
    """A short file-name-safe name for a prompt: its first few words."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = "_".join(words[:_SLUG_WORDS])[:_SLUG_MAX].strip("_")
    return slug or "program"


def create_private(path: Path, mode: str = "x") -> int:
    """Open a new file 0600 (``x``: it must not exist yet); returns the descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if mode == "x" else os.O_APPEND)
    return os.open(path, flags, PRIVATE_FILE)


def private_dir(path: Path) -> Path:
    """A folder of ours, 0700 whatever the umask, and made 0700 again if it exists
    (a workspace from an older version, or made by hand, may be world-readable)."""
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
    try:
        if path.stat().st_mode & 0o077:
            os.chmod(path, PRIVATE_DIR)
    except OSError:
        pass  # not ours to change: it stays as its owner made it
    return path


def write_private(path: Path, text: str) -> None:
    """A new file (or a replaced one) that only we can read: 0600 from its creation.
    A symlink in its place is refused (OSError), never followed."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, PRIVATE_FILE)
    os.fchmod(fd, PRIVATE_FILE)  # an existing file keeps its mode through O_CREAT
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def atomic_write(path: Path, text: str) -> None:
    """Write a whole file (0600) so a crash leaves either the old or the new content."""
    private_dir(path.parent)
    write_fresh(path, text, mode=PRIVATE_FILE)


@dataclass
class Workspace:
    """The folders under one workspace root; the paths are fixed when it is made."""

    root: Path
    programs: Path = field(init=False)
    outputs: Path = field(init=False)
    raw_md: Path = field(init=False)
    context: Path = field(init=False)
    db_path: Path = field(init=False)
    claims: Path = field(init=False)  # .versions/<slug>_<n>: a version taken by one attempt

    def __post_init__(self) -> None:
        self.programs = self.root / "programs"
        self.outputs = self.root / "outputs"
        self.raw_md = self.root / "raw_md"
        self.context = self.root / "context"
        self.db_path = self.root / "history.db"
        self.claims = self.root / ".versions"

    def ensure(self) -> Workspace:
        """Make the folders (0700 where VerifyBot creates them); a bad place exits 2, and
        so does a workspace another user made (browsed read-only, never run in) or one
        whose folders are links (a ``programs/`` link would move where answers go)."""
        check_workspace(self.root, write=True)
        try:
            if not self.root.is_dir():
                self.root.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
                os.chmod(self.root, PRIVATE_DIR)  # whatever the umask
            for d in (self.programs, self.outputs, self.raw_md, self.context, self.claims,
                      self.root / "runs"):
                _not_a_link(d)
                private_dir(d)  # ours: 0700 even where an older run left them open
        except OSError as e:
            raise ConfigError(f"workspace {self.root}: cannot create its folders: "
                              f"{e.strerror}. Give a folder you can write to with "
                              "--workspace DIR or [run] workspace") from None
        return self

    def rel(self, path: Path | str) -> str:
        """A path as the user sees it: relative to the workspace when inside it."""
        p = Path(path)
        try:
            return str(p.relative_to(self.root))
        except ValueError:
            return str(p)

    def versioned_names(self, names: list[str], output_stem: str, start: int = 1) -> int:
        """The smallest version n >= start free for every file and for the output."""
        n = max(start, 1)
        while True:
            taken = (self.outputs / f"{output_stem}_{n}.txt").exists() or (
                self.claims / f"{output_stem}_{n}").exists() or any(
                (self.programs / versioned(name, n)).exists() for name in names)
            if not taken:
                return n
            n += 1

    def claim_version(self, output_stem: str, n: int) -> None:
        """Take version ``n`` for one attempt, for all its files at once (FileExistsError
        if another session took it first): two sessions never share a number."""
        self.claims.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)
        os.close(create_private(self.claims / f"{output_stem}_{n}"))

    def save_program(self, name: str, n: int, content: str) -> Path:
        """Create programs/<stem>_<n><ext>; refuses to overwrite (FileExistsError), and a
        name that leads out of programs/ (ValueError): the last check under every way
        an answer names a file (a block, a diff's path, a rename in its prose)."""
        path = self.programs / versioned(name, n)
        if not path.resolve().is_relative_to(self.programs.resolve()):
            raise ValueError(f"{name!r} leads out of programs/: not saved")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(content)
        return path


def made_by_others(root: Path) -> bool:
    """Whether the workspace folder exists and belongs to another user than this one
    (a shared disk, an unpacked archive): VerifyBot only reads it."""
    try:
        return os.lstat(root).st_uid != os.geteuid()
    except OSError:
        return False


def refuse_others(root: Path) -> None:
    """A run in a workspace another user made is refused (ConfigError, exit 2): what is
    in it (its history's paths, its run records, its folders) is not this user's."""
    if made_by_others(root):
        owner = os.lstat(root).st_uid
        raise ConfigError(
            f"workspace {root} belongs to another user (uid {owner}): VerifyBot only "
            f"browses it (verifybot history --workspace {root}) and runs nothing in it. "
            "Give a workspace of your own with --workspace DIR or [run] workspace")


def _not_a_link(folder: Path) -> None:
    """A workspace folder that is a symlink, or not a folder of ours, is refused."""
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        what = "a symlink" if stat.S_ISLNK(st.st_mode) else (
            "not a folder" if not stat.S_ISDIR(st.st_mode) else "another user's folder")
        raise ConfigError(f"workspace folder {folder} is {what}: VerifyBot saves only into "
                          "folders of its own there. Remove it, or give another workspace "
                          "with --workspace DIR")


def versioned(name: str, n: int) -> str:
    """'src/main.py', 2 -> 'src/main_2.py' (the folder kept, the number before the extension).

    A name too long for the file system once numbered is shortened (in bytes,
    whole characters only), keeping its extension.
    """
    p = PurePosixPath(name)
    stem, suffix = p.stem, p.suffix
    if len(suffix.encode()) > 16:
        stem, suffix = p.name, ""
    room = NAME_MAX - _VERSION_ROOM - len(suffix.encode())
    if len(stem.encode()) > room:
        stem = stem.encode()[:room].decode("utf-8", errors="ignore")
    return str(p.with_name(f"{stem}_{n}{suffix}"))


def check_workspace(root: Path, *, write: bool) -> None:
    """A workspace that cannot work is a usage error (exit 2) with what to do."""
    try:
        _check_workspace(root, write=write)
    except OSError as e:  # a folder on the way that we may not even look into
        raise ConfigError(f"workspace {root}: {e.strerror}. Give another folder with "
                          "--workspace DIR or [run] workspace in the config.") from None


def _check_workspace(root: Path, *, write: bool) -> None:
    fix = "Give another folder with --workspace DIR or [run] workspace in the config."
    resolved = Path(os.path.abspath(root))
    if any(str(resolved) == t or str(resolved).startswith(t + "/") for t in _SYSTEM_TREES):
        raise ConfigError(f"workspace {root} is inside /{resolved.parts[1]}, a system "
                          f"folder, not a place for files. {fix}")
    if resolved.exists() and not resolved.is_dir():
        raise ConfigError(f"workspace {root} is a file, not a folder. {fix}")
    if not write:
        return
    refuse_others(resolved)
    probe = resolved
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise ConfigError(f"workspace {root}: {probe} is not writable. {fix}")
