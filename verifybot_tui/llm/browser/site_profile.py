"""A chat site's selectors and texts, kept in TOML files rather than in code.

The sites change their markup often; when they do, a user fixes a selector list
in a file (their own, or one that `extends` a built-in) instead of waiting for a
release. Every selector is a list tried in order, newest form first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifybot_tui.core.errors import LLMError
from verifybot_tui.core.toml_file import TomlFileError, read_toml

SITES_DIR = Path(__file__).with_name("sites")

# Selector lists the driver cannot work without: they must hold at least one selector.
REQUIRED_SELECTORS = (
    "prompt_box", "send_button", "stop_button", "user_turn", "assistant_turn",
    "finished_markers",
)
# Selector lists that may be empty (the check they feed is then skipped).
OPTIONAL_SELECTORS = (
    "user_message", "assistant_message", "copy_button", "busy_markers", "error_toast",
    "login_markers", "new_chat", "bot_check_markers", "account_picker_markers",
    "alert_containers",
)
TEXT_KEYS = (
    "login_buttons", "login_paths", "bot_check_titles", "account_picker", "limit",
    "not_limit", "error",
)


@dataclass
class SiteProfile:
    name: str
    source: str  # the file it came from, for messages
    selectors: dict[str, list[str]]
    texts: dict[str, list[str]]
    conversation_url_pattern: str
    new_chat_url: str = ""  # empty: the [llm.NAME] url
    extra: dict[str, Any] = field(default_factory=dict)

    def sel(self, key: str) -> list[str]:
        return self.selectors.get(key, [])

    def conversation_id(self, url: str) -> str | None:
        """The stable conversation id in a URL, or None (not saved yet, or no chat)."""
        m = re.search(self.conversation_url_pattern, url or "")
        return m.group(0) if m else None

    def page_config(self) -> dict[str, Any]:
        """What the injected page scripts need to know, as JSON-able data."""
        return {"name": self.name, "selectors": self.selectors, "texts": self.texts}


def builtin_sites() -> list[str]:
    return sorted(p.stem for p in SITES_DIR.glob("*.toml"))


def _read(path: Path) -> dict[str, Any]:
    try:
        return read_toml(path)
    except TomlFileError as e:
        raise LLMError(f"{path}: site profile: {e}") from None


def _string_list(path: Path, key: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise LLMError(f"{path}: key '{key}' must be a list of strings, got {value!r}")
    return list(value)


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def parse_site_profile(data: dict[str, Any], path: Path) -> SiteProfile:
    """Validate a parsed site file; every problem names the file and the key."""
    if "extends" in data:
        parent = data["extends"]
        if not isinstance(parent, str) or parent not in builtin_sites():
            raise LLMError(f"{path}: key 'extends' must name a built-in site "
                           f"({', '.join(builtin_sites())}), got {parent!r}")
        data = _merge(_read(SITES_DIR / f"{parent}.toml"), {k: v for k, v in data.items()
                                                            if k != "extends"})
    known_top = {"name", "conversation_url_pattern", "new_chat_url", "selectors", "texts"}
    for key in data:
        if key not in known_top:
            raise LLMError(f"{path}: unknown key '{key}'; expected one of: "
                           f"{', '.join(sorted(known_top | {'extends'}))}")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name:
        raise LLMError(f"{path}: key 'name' must be a non-empty string")
    pattern = data.get("conversation_url_pattern")
    if not isinstance(pattern, str) or not pattern:
        raise LLMError(f"{path}: key 'conversation_url_pattern' is missing or not a string "
                       f"(a regular expression matching a saved chat's URL path)")
    try:
        re.compile(pattern)
    except re.error as e:
        raise LLMError(f"{path}: key 'conversation_url_pattern' is not a valid regular "
                       f"expression: {e}") from None
    new_chat_url = data.get("new_chat_url", "")
    if not isinstance(new_chat_url, str):
        raise LLMError(f"{path}: key 'new_chat_url' must be a string")

    sel_table = data.get("selectors")
    if not isinstance(sel_table, dict):
        raise LLMError(f"{path}: table [selectors] is missing")
    selectors: dict[str, list[str]] = {}
    for key in REQUIRED_SELECTORS:
        if key not in sel_table:
            raise LLMError(f"{path}: key 'selectors.{key}' is missing (a list of CSS selectors)")
        selectors[key] = _string_list(path, f"selectors.{key}", sel_table[key])
        if not selectors[key]:
            raise LLMError(f"{path}: key 'selectors.{key}' must hold at least one selector")
    for key in OPTIONAL_SELECTORS:
        selectors[key] = _string_list(path, f"selectors.{key}", sel_table.get(key, []))
    for key in sel_table:
        if key not in selectors:
            raise LLMError(f"{path}: unknown key 'selectors.{key}'; expected one of: "
                           f"{', '.join(REQUIRED_SELECTORS + OPTIONAL_SELECTORS)}")

    text_table = data.get("texts", {})
    if not isinstance(text_table, dict):
        raise LLMError(f"{path}: key 'texts' must be a table ([texts])")
    texts = {key: _string_list(path, f"texts.{key}", text_table.get(key, []))
             for key in TEXT_KEYS}
    for key in text_table:
        if key not in texts:
            raise LLMError(f"{path}: unknown key 'texts.{key}'; expected one of: "
                           f"{', '.join(TEXT_KEYS)}")
    return SiteProfile(name=name, source=str(path), selectors=selectors, texts=texts,
                       conversation_url_pattern=pattern, new_chat_url=new_chat_url)


def load_site_profile(site: str) -> SiteProfile:
    """A built-in name (chatgpt, claude) or a path to the user's TOML file."""
    if site in builtin_sites():
        path = SITES_DIR / f"{site}.toml"
    else:
        path = Path(site).expanduser()
        if not path.is_file():
            raise LLMError(f"site profile {site!r} not found: use a built-in site "
                           f"({', '.join(builtin_sites())}) or the path of a TOML file")
    return parse_site_profile(_read(path), path)
