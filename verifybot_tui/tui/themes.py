"""Theme files: TOML tables of Textual theme colours, loaded at start.

Themes come from the repo's themes/ folder (the built-in ones) and from
<user config dir>/themes/, so a user adds a theme by dropping a file there.
A broken file is reported and skipped: a typo in a colour must not stop the app.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

from verifybot_tui.core.base.toml_file import TomlFileError, read_toml
from verifybot_tui.core.settings.config import user_config_dir

BUILTIN_DIRS = (
    Path(__file__).resolve().parents[2] / "themes",  # the repo (editable installs)
    Path(sys.prefix) / "share" / "verifybot" / "themes",  # a wheel install (data-files)
)
_COLOURS = ("primary", "secondary", "warning", "error", "success", "accent", "foreground",
            "background", "surface", "panel", "boost")
_FLOATS = ("luminosity_spread", "text_alpha")
_KNOWN = {f.name for f in fields(Theme)}


@dataclass
class ThemeProblem:
    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class ThemeFileError(ValueError):
    pass


def theme_dirs() -> list[Path]:
    return [*BUILTIN_DIRS, user_config_dir() / "themes"]


def _colour(key: str, value: object) -> str:
    if not isinstance(value, str):
        raise ThemeFileError(f"key '{key}' must be a colour string, got {value!r}")
    try:
        Color.parse(value.split()[0] if value.strip() else value)
    except ColorParseError:
        raise ThemeFileError(f"key '{key}': {value!r} is not a colour") from None
    return value


def parse_theme(data: dict[str, object]) -> Theme:
    """Validate one theme table into a Theme (raises ThemeFileError)."""
    unknown = sorted(set(data) - _KNOWN)
    if unknown:
        raise ThemeFileError(f"unknown key(s) {', '.join(unknown)}; expected some of "
                             f"{', '.join(sorted(_KNOWN))}")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ThemeFileError("key 'name' is required (a string)")
    if "primary" not in data:
        raise ThemeFileError("key 'primary' is required (a colour)")
    kwargs: dict[str, object] = {"name": name}
    for key, value in data.items():
        if key in _COLOURS:
            kwargs[key] = _colour(key, value)
        elif key in ("dark", "ansi"):
            if not isinstance(value, bool):
                raise ThemeFileError(f"key '{key}' must be true or false")
            kwargs[key] = value
        elif key in _FLOATS:
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ThemeFileError(f"key '{key}' must be a number")
            kwargs[key] = float(value)
        elif key == "variables":
            if not isinstance(value, dict) or not all(
                    isinstance(v, str) for v in value.values()):
                raise ThemeFileError("[variables] must map names to strings")
            kwargs[key] = dict(value)
    theme = Theme(**kwargs)  # type: ignore[arg-type]
    try:
        theme.to_color_system()
    except Exception as e:  # a colour Textual accepts alone but not in a system
        raise ThemeFileError(f"colours do not make a theme: {e}") from None
    return theme


def load_theme_file(path: Path) -> Theme:
    try:
        data = read_toml(path)
    except TomlFileError as e:
        raise ThemeFileError(str(e)) from None
    return parse_theme(data)


def load_themes(dirs: list[Path] | None = None) -> tuple[list[Theme], list[ThemeProblem]]:
    """Every valid theme in the folders (later folders win a name), and the problems."""
    themes: dict[str, Theme] = {}
    problems: list[ThemeProblem] = []
    seen: set[Path] = set()
    for folder in theme_dirs() if dirs is None else dirs:
        if not folder.is_dir() or folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        for path in sorted(folder.glob("*.toml")):
            try:
                theme = load_theme_file(path)
            except ThemeFileError as e:
                problems.append(ThemeProblem(path, str(e)))
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems
