"""Reading TOML the user wrote (config, recipes, criteria, themes, site profiles): one reader.

Each caller turns a ``TomlFileError`` into its own error with the file's name;
the wording of what went wrong is the same everywhere. No other module
imports tomllib (tests/repo/test_repo_hygiene.py keeps it so).
"""

from __future__ import annotations

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


def read_toml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise TomlFileError(f"cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise TomlFileError(f"cannot read: not UTF-8 text (byte {e.start})") from None
    return parse_toml(text)
