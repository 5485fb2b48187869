"""The local probe's slow answers, kept between sessions while their sources are unchanged.

Every session starts with a probe, and most of its time goes to two kinds of facts:
the interpreter's installed packages (it is started and reads every distribution's
metadata: about 0.1 s of CPU, the rest of the probe costs a tenth of that) and each
tool's version. Both come from files: the interpreter and the folders on its sys.path
(installing or removing a package adds or removes an entry in one of them), a tool's
executable. So an answer is kept with a stamp of each of those files (mtime, size,
inode) and used again only while every one is as it was; anything else asks the
machine again. The cache lives in $XDG_CACHE_HOME/verifybot/probe (~/.cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from verifybot_tui.core.store.workspace import atomic_write

FORMAT = 1  # bump when what is kept changes shape

Stamp = list[Any]  # [path, mtime_ns, size, inode], or [path, None]: it did not exist


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "verifybot" / "probe"


def stamp(path: str) -> Stamp:
    """What a file or folder is now; a change to its entries changes a folder's mtime."""
    try:
        st = os.stat(path)
    except OSError:
        return [path, None]
    return [path, st.st_mtime_ns, st.st_size, st.st_ino]


def _entry(kind: str, key: str) -> Path:
    digest = hashlib.sha256(f"{FORMAT}\0{kind}\0{key}".encode()).hexdigest()[:32]
    return cache_dir() / f"{kind}-{digest}.json"


def load(kind: str, key: str) -> Any | None:
    """The kept answer for ``key``, if every file it came from is as it was then."""
    try:
        entry = json.loads(_entry(kind, key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    stamps = entry.get("stamps")
    if not isinstance(stamps, list) or not stamps:
        return None
    for kept in stamps:
        if not isinstance(kept, list) or not kept or stamp(str(kept[0])) != kept:
            return None
    return entry.get("value")


def store(kind: str, key: str, value: Any, stamps: list[Stamp]) -> None:
    """Keep ``value`` with the stamps taken before it was read; a cache that cannot be
    written only costs the next session the probe."""
    with contextlib.suppress(OSError, TypeError, ValueError):
        atomic_write(_entry(kind, key), json.dumps({"key": key, "stamps": stamps,
                                                    "value": value}))
