"""The raw_md transcript: a human-readable account of one run of the loop.

It is appended to as things happen and flushed each time, so a crash or kill
at any moment leaves a readable file with everything up to that moment. It
ends with a JSON run record. Answers are kept verbatim inside a fence longer
than any fence they hold, which is also how the replay backend reads them back.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any


def wrap_fence(text: str, info: str = "") -> str:
    """Fence ``text`` with more backticks than any run of backticks inside it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{fence}{info}\n{body}{fence}\n"


class Transcript:
    def __init__(self, path: Path, *, new: bool = False) -> None:
        """Open ``path`` to append (a resumed session), or create it (``new``: it must
        not exist, so two sessions never write into one file)."""
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if new else os.O_APPEND)
        self._f = open(os.open(path, flags, 0o600), "a", encoding="utf-8", newline="")

    @classmethod
    def create_new(cls, folder: Path, stem: str, ext: str) -> Transcript:
        """A transcript under a free name: ``stem.md``, else ``stem_2.md``, ... taken
        with O_EXCL, so sessions started in the same second never share one."""
        folder.mkdir(parents=True, exist_ok=True)
        i = 1
        while True:
            path = folder / (f"{stem}{ext}" if i == 1 else f"{stem}_{i}{ext}")
            try:
                return cls(path, new=True)
            except FileExistsError:
                i += 1

    def write(self, text: str, *, sync: bool = False) -> None:
        if self._f.closed:
            return
        self._f.write(text if text.endswith("\n") else text + "\n")
        self._f.flush()
        if sync:
            os.fsync(self._f.fileno())

    def section(self, title: str, body: str = "") -> None:
        self.write(f"\n## {title}\n\n{body}" if body else f"\n## {title}\n")

    def block(self, title: str, text: str, info: str = "") -> None:
        self.write(f"\n## {title}\n\n{wrap_fence(text, info)}")

    def record(self, record: dict[str, Any]) -> None:
        self.write("\n## Run record\n\n" + wrap_fence(json.dumps(record, indent=2), "json"),
                   sync=True)

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()


def read_record(path: Path) -> dict[str, Any] | None:
    """The JSON run record at the end of a transcript, if it got that far.

    `recipe new` reads a finished session's criteria and judge back from it.
    """
    text = path.read_text(encoding="utf-8", errors="replace")
    idx = text.rfind("\n## Run record\n")
    if idx < 0:
        return None
    m = re.search(r"(`{3,})json\n(.*?)\n\1", text[idx:], re.S)
    return json.loads(m.group(2)) if m else None
