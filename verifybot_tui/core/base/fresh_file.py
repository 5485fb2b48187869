"""One file written whole into a folder someone else may share (a report folder, the
user's config folder): the one way VerifyBot does it, for the store and the settings
alike (which do not import each other)."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path


def write_fresh(path: Path, text: str | bytes, mode: int = 0o644) -> None:
    """Write a whole file into a folder VerifyBot may not have made (``compare --report
    DIR``, a shared disk): through a new file of a name nobody could plant beforehand
    (mkstemp: O_EXCL, so never through a link), renamed over ``path`` once whole. A
    symlink, or anything but a regular file, at ``path`` is refused (OSError): the
    rename would not follow it, but it says someone else put it there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        what = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a regular file"
        raise OSError(f"{path} is {what}; VerifyBot writes only regular files there. "
                      "Remove it or choose another folder")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode() if isinstance(text, str) else text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
