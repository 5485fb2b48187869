"""Reading TOML the user wrote (config, recipes, criteria, themes, site profiles): one reader.

Each caller turns a ``TomlFileError`` into its own error with the file's name;
the wording of what went wrong is the same everywhere. No other module
imports tomllib (tests/repo/test_repo_hygiene.py keeps it so).
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any


class TomlFileError(ValueError):
    """The file cannot be read, or is not valid TOML; the message says which."""


def parse_toml(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TomlFileError(f"not valid TOML: {e}") from None


TOML_LIMIT = 4 * 1024 * 1024  # bytes a config, recipe or criteria file may have


def read_text_file(path: Path, limit: int) -> str:
    """A regular file's UTF-8 text, at most ``limit`` bytes read.

    /dev/zero, a FIFO or a terminal given where a file is expected would be read
    for ever (or block): they are refused by type, and a file that grows past the
    limit while it is read is refused by the cap. TomlFileError says which.
    """
    try:  # O_NONBLOCK: opening a FIFO must not wait for a writer before it is refused
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise TomlFileError("cannot read: not a regular file (a device, a FIFO or a "
                                    "folder); give a file")
            data = f.read(limit + 1)
    except OSError as e:
        raise TomlFileError(f"cannot read: {e.strerror or e}") from None
    if len(data) > limit:
        raise TomlFileError(f"cannot read: larger than {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TomlFileError(f"cannot read: not UTF-8 text (byte {e.start})") from None


def read_toml(path: Path) -> dict[str, Any]:
    return parse_toml(read_text_file(path, TOML_LIMIT))
