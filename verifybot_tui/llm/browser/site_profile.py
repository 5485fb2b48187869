"""A chat site's selectors and texts, kept in TOML files rather than in code.

The sites change their markup often, and a site may serve several pages at
once (chatgpt.com's legacy page and its "app-shell" page, per account): each
such page is a *renderer* with its own signature (what must be on the page to
claim it) and its own selector lists. The page script picks the first
renderer whose signature matches, at load and after every navigation; none
matching is an error, never a guess. When a site changes, a user fixes a
selector list in a file (their own, or one that `extends` a built-in) instead
of waiting for a release. Every selector is a list tried in order, newest first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.base.toml_file import TomlFileError, read_toml
from verifybot_tui.core.settings.config import user_config_dir

SITES_DIR = Path(__file__).with_name("sites")

# Selector lists the driver cannot work without: they must hold at least one selector.
REQUIRED_SELECTORS = (
    "prompt_box", "send_button", "stop_button", "user_turn", "assistant_turn",
    "finished_markers",
)
# Selector lists that may be empty (the check they feed is then skipped).
OPTIONAL_SELECTORS = (
    "user_message", "user_markdown", "assistant_message", "message_exclude", "copy_button",
    "busy_markers", "activity_header", "continue_button", "turn_error", "regenerate_button",
    "artifact_markers", "error_toast", "login_markers", "new_chat", "bot_check_markers",
    "account_picker_markers", "alert_containers", "model_picker", "model_option",
    "temporary_toggle", "action_row", "exchange", "dialog", "dialog_close", "model_label",
    "model_label_exclude", "model_effort",
)
TEXT_KEYS = (
    "login_buttons", "login_paths", "bot_check_titles", "account_picker", "limit",
    "not_limit", "error", "thinking", "turn_error", "continue", "answer_now", "stop", "copy",
    "regenerate", "dialog_close",
)
# A language table's name: "en", "ko", "pt-br"... (the page's <html lang>, lower case).
_LANG = re.compile(r"^[a-z]{2,3}(-[a-z0-9]{2,8})?$")
RENDERER_KEYS = ("signature", "scope", "message_id_attributes", "join_messages", "selectors",
                 "model_attributes")


@dataclass
class Renderer:
    """One page layout of a site: how to recognise it and where everything is on it."""

    name: str
    signature: list[str]  # any one present on the page claims it
    selectors: dict[str, list[str]]
    scope: list[str] = field(default_factory=list)  # queries run inside this element
    message_id_attributes: list[str] = field(default_factory=list)
    join_messages: bool = False  # the answer is every assistant_message block, in order
    # Attributes of the answer (or inside it) that name the model that wrote it.
    model_attributes: list[str] = field(default_factory=list)

    def sel(self, key: str) -> list[str]:
        return self.selectors.get(key, [])

    def page_config(self) -> dict[str, Any]:
        return {"name": self.name, "signature": self.signature, "scope": self.scope,
                "selectors": self.selectors, "idAttrs": self.message_id_attributes,
                "joinMessages": self.join_messages, "modelAttrs": self.model_attributes}


@dataclass
class SiteProfile:
    name: str
    source: str  # the file it came from, for messages
    renderers: list[Renderer]
    texts: dict[str, list[str]]
    conversation_url_pattern: str
    new_chat_url: str = ""  # empty: the [llm.NAME] url
    temporary_chat_query: str = ""  # added to the new-chat URL for a temporary chat
    # The UI languages the texts know ([texts.LANG] tables; plain [texts] lists are English).
    languages: list[str] = field(default_factory=lambda: ["en"])

    @property
    def selectors(self) -> dict[str, list[str]]:
        """The first renderer's selectors (the one a single-page site has)."""
        return self.renderers[0].selectors

    def sel(self, key: str) -> list[str]:
        return self.renderers[0].sel(key)

    def renderer(self, name: str) -> Renderer | None:
        return next((r for r in self.renderers if r.name == name), None)

    def conversation_id(self, url: str) -> str | None:
        """The stable conversation id in a URL, or None (not saved yet, or no chat)."""
        m = re.search(self.conversation_url_pattern, url or "")
        return m.group(0) if m else None

    def page_config(self) -> dict[str, Any]:
        """What the injected page scripts need to know, as JSON-able data."""
        return {"name": self.name, "texts": self.texts, "languages": self.languages,
                "renderers": [r.page_config() for r in self.renderers]}

    def signatures(self) -> str:
        """The renderers and their signatures, for a message when none matches."""
        return "; ".join(f"{r.name}: {', '.join(r.signature)}" for r in self.renderers)


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


def _selector_table(path: Path, where: str, table: Any) -> dict[str, list[str]]:
    if not isinstance(table, dict):
        raise LLMError(f"{path}: '{where}' must be a table ([{where}])")
    for key in table:
        if key not in REQUIRED_SELECTORS + OPTIONAL_SELECTORS:
            raise LLMError(f"{path}: unknown key '{where}.{key}'; expected one of: "
                           f"{', '.join(REQUIRED_SELECTORS + OPTIONAL_SELECTORS)}")
    return {k: _string_list(path, f"{where}.{k}", v) for k, v in table.items()}


def _renderer(path: Path, name: str, table: dict[str, Any], shared: dict[str, list[str]],
              forced: dict[str, list[str]] | None = None) -> Renderer:
    where = f"renderers.{name}"
    for key in table:
        if key not in RENDERER_KEYS:
            raise LLMError(f"{path}: unknown key '{where}.{key}'; expected one of: "
                           f"{', '.join(RENDERER_KEYS)}")
    own = _selector_table(path, f"{where}.selectors", table.get("selectors", {}))
    merged = {**shared, **own, **(forced or {})}
    selectors: dict[str, list[str]] = {}
    for key in REQUIRED_SELECTORS:
        if key not in merged:
            raise LLMError(f"{path}: key '{where}.selectors.{key}' is missing (a list of CSS "
                           f"selectors)")
        if not merged[key]:
            raise LLMError(f"{path}: key '{where}.selectors.{key}' must hold at least one "
                           f"selector")
        selectors[key] = merged[key]
    for key in OPTIONAL_SELECTORS:
        selectors[key] = merged.get(key, [])
    signature = _string_list(path, f"{where}.signature",
                             table.get("signature", selectors["prompt_box"]))
    if not signature:
        raise LLMError(f"{path}: key '{where}.signature' must hold at least one selector")
    join = table.get("join_messages", False)
    if not isinstance(join, bool):
        raise LLMError(f"{path}: key '{where}.join_messages' must be true or false")
    return Renderer(name=name, signature=signature, selectors=selectors,
                    scope=_string_list(path, f"{where}.scope", table.get("scope", [])),
                    message_id_attributes=_string_list(
                        path, f"{where}.message_id_attributes",
                        table.get("message_id_attributes", [])),
                    join_messages=join,
                    model_attributes=_string_list(path, f"{where}.model_attributes",
                                                  table.get("model_attributes", [])))


def _renderers(path: Path, data: dict[str, Any], name: str,
               forced: dict[str, list[str]]) -> list[Renderer]:
    """The file's renderers in the order they are tried (a file without any is one)."""
    shared = _selector_table(path, "selectors", data.get("selectors", {}))
    tables = data.get("renderers")
    if tables is None:
        if "selectors" not in data:
            raise LLMError(f"{path}: table [selectors] is missing")
        return [_renderer(path, name, {}, shared)]
    if not isinstance(tables, dict) or not tables:
        raise LLMError(f"{path}: 'renderers' must hold tables like [renderers.NAME]")
    order = _string_list(path, "renderer_order", data.get("renderer_order", list(tables)))
    for r in order:
        if r not in tables:
            raise LLMError(f"{path}: key 'renderer_order' names {r!r}, but there is no "
                           f"[renderers.{r}]")
    renderers = []
    for r in order + [t for t in tables if t not in order]:
        if not isinstance(tables[r], dict):
            raise LLMError(f"{path}: 'renderers.{r}' must be a table ([renderers.{r}])")
        renderers.append(_renderer(path, r, tables[r], shared, forced))
    return renderers


def parse_site_profile(data: dict[str, Any], path: Path) -> SiteProfile:
    """Validate a parsed site file; every problem names the file and the key."""
    forced: dict[str, list[str]] = {}
    if "extends" in data:
        parent = data["extends"]
        if not isinstance(parent, str) or parent not in builtin_sites():
            raise LLMError(f"{path}: key 'extends' must name a built-in site "
                           f"({', '.join(builtin_sites())}), got {parent!r}")
        # The user's own [selectors] win over every renderer's lists: a file that
        # fixes one list for a site fixes it whichever page the site serves.
        forced = _selector_table(path, "selectors", data.get("selectors", {}))
        data = _merge(_read(SITES_DIR / f"{parent}.toml"), {k: v for k, v in data.items()
                                                            if k != "extends"})
    known_top = {"name", "conversation_url_pattern", "new_chat_url", "selectors", "texts",
                 "renderers", "renderer_order", "temporary_chat_query"}
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
    temporary = data.get("temporary_chat_query", "")
    if not isinstance(temporary, str):
        raise LLMError(f"{path}: key 'temporary_chat_query' must be a string")

    renderers = _renderers(path, data, name, forced)
    texts, languages = _texts(path, data.get("texts", {}))
    return SiteProfile(name=name, source=str(path), renderers=renderers, texts=texts,
                       conversation_url_pattern=pattern, new_chat_url=new_chat_url,
                       temporary_chat_query=temporary, languages=languages)


def _texts(path: Path, table: Any) -> tuple[dict[str, list[str]], list[str]]:
    """Every text key's list, all languages together (a text of any language is a hint),
    and the languages known. Plain lists under [texts] are English (or need none);
    [texts.LANG] tables hold one UI language's texts, and a user's file that extends a
    built-in one adds its own [texts.LANG] or replaces one key of it."""
    if not isinstance(table, dict):
        raise LLMError(f"{path}: key 'texts' must be a table ([texts])")
    texts: dict[str, list[str]] = {key: [] for key in TEXT_KEYS}
    languages = ["en"]

    def add(where: str, key: str, value: Any) -> None:
        if key not in texts:
            raise LLMError(f"{path}: unknown key '{where}.{key}'; expected one of: "
                           f"{', '.join(TEXT_KEYS)} (or a language table [texts.LANG])")
        for text in _string_list(path, f"{where}.{key}", value):
            if text not in texts[key]:
                texts[key].append(text)

    for key, value in table.items():
        if isinstance(value, dict):
            if not _LANG.match(key):
                raise LLMError(f"{path}: table [texts.{key}] is not a language: name it by the "
                               f"page's language code (en, de, fr, es, ko, ja, pt-br...)")
            if key not in languages:
                languages.append(key)
            for k, v in value.items():
                add(f"texts.{key}", k, v)
        else:
            add("texts", key, value)
    return texts, languages


def user_site_file(site: str) -> Path:
    """The user's own profile of a built-in site (`doctor --repair` writes it there): it
    is read instead of the built-in one, so a repair takes effect without editing
    `site =` in the config."""
    return user_config_dir() / "sites" / f"{site}.toml"


def load_site_profile(site: str) -> SiteProfile:
    """A built-in name (chatgpt, claude), the user's own file of that name first, or a
    path to the user's TOML file."""
    if site in builtin_sites():
        own = user_site_file(site)
        path = own if own.is_file() else SITES_DIR / f"{site}.toml"
    else:
        path = Path(site).expanduser()
        if not path.is_file():
            raise LLMError(f"site profile {site!r} not found: use a built-in site "
                           f"({', '.join(builtin_sites())}) or the path of a TOML file")
    return parse_site_profile(_read(path), path)
