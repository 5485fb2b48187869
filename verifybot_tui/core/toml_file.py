"""Reading a TOML file the user wrote (config, themes, site profiles): one reader.

Each caller turns a ``TomlFileError`` into its own error with the file's name;
the wording of what went wrong is the same everywhere.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


class TomlFileError(ValueError):
    """The file cannot be read, or is not valid TOML; the message says which."""


def read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise TomlFileError(f"not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise TomlFileError(f"cannot read: {e}") from None
