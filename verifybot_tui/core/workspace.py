"""The workspace folders and the rule that nothing saved is ever overwritten.

Programs and outputs are versioned: a new version takes the next free number,
created with O_EXCL so two sessions in one workspace cannot take the same name.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

_SLUG_WORDS = 6
_SLUG_MAX = 40


def slugify(text: str) -> str:
    """A short file-name-safe name for a prompt: its first few words."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = "_".join(words[:_SLUG_WORDS])[:_SLUG_MAX].strip("_")
    return slug or "program"


def atomic_write(path: Path, text: str) -> None:
    """Write a whole file so a crash leaves either the old or the new content."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


@dataclass
class Workspace:
    root: Path

    @property
    def programs(self) -> Path:
        return self.root / "programs"

    @property
    def outputs(self) -> Path:
        return self.root / "outputs"

    @property
    def raw_md(self) -> Path:
        return self.root / "raw_md"

    @property
    def context(self) -> Path:
        return self.root / "context"

    @property
    def db_path(self) -> Path:
        return self.root / "history.db"

    def ensure(self) -> Workspace:
        for d in (self.programs, self.outputs, self.raw_md, self.context):
            d.mkdir(parents=True, exist_ok=True)
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
            taken = (self.outputs / f"{output_stem}_{n}.txt").exists() or any(
                (self.programs / versioned(name, n)).exists() for name in names)
            if not taken:
                return n
            n += 1

    def save_program(self, name: str, n: int, content: str) -> Path:
        """Create programs/<stem>_<n><ext>; refuses to overwrite (FileExistsError)."""
        path = self.programs / versioned(name, n)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(content)
        return path


def versioned(name: str, n: int) -> str:
    """'src/main.py', 2 -> 'src/main_2.py' (the folder kept, the number before the extension)."""
    p = PurePosixPath(name)
    return str(p.with_name(f"{p.stem}_{n}{p.suffix}"))
