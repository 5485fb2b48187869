"""The UI-choices state file: what the user picked in the app (a theme, say).

Such choices are not configuration: writing them into config.toml would
rewrite the user's file (tomli-w keeps no comments or order), so they go to a
small file of our own in the state directory instead. The effective ``[ui]``
settings are config.toml's ``[ui]`` overlaid with this file's ``[ui]``;
config.toml is only ever written by an explicit ``config export``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import tomli_w

from verifybot_tui.core.base.toml_file import TomlFileError, read_toml


def state_path() -> Path:
    """``${XDG_STATE_HOME:-~/.local/state}/verifybot/state.toml``."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "verifybot" / "state.toml"


def _load_all(path: Path) -> dict[str, Any]:
    try:
        data = read_toml(path)
    except TomlFileError:
        return {}
    return data if isinstance(data, dict) else {}


def load_ui_state() -> dict[str, Any]:
    """The file's ``[ui]`` table; {} when there is none or it cannot be read.

    A broken state file is not worth stopping the app for: it only holds
    choices the user can make again, and the next choice rewrites it.
    """
    ui = _load_all(state_path()).get("ui")
    return dict(ui) if isinstance(ui, dict) else {}


def save_ui_choice(key: str, value: Any) -> None:
    """Keep one ``[ui]`` choice, written atomically (a crash leaves the old file)."""
    path = state_path()
    data = _load_all(path)
    ui = data.get("ui")
    if not isinstance(ui, dict):
        ui = data["ui"] = {}
    ui[key] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".state.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(tomli_w.dumps(data))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
