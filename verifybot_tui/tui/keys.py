"""Every key binding in one place (keys.toml beside this file), each with an id and a tooltip.

Ids are what users remap in ``[ui.keys]`` (id = "key"), applied with
``App.set_keymap``; the help screen and the command palette read the same
lists, so a remapped key shows up everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from textual.binding import Binding

from verifybot_tui.core.base.toml_file import parse_toml


def _load() -> dict[str, list[Binding]]:
    """keys.toml's lists; its fields are Binding's own."""
    text = (Path(__file__).parent / "keys.toml").read_text(encoding="utf-8")
    return {name: [Binding(**row) for row in rows] for name, rows in parse_toml(text).items()}


_LISTS = _load()
APP_BINDINGS = _LISTS["app"]
MAIN_BINDINGS = _LISTS["main"]  # quit first, so the footer always has room for it
# Priority bindings of the main screen: they work whichever pane has focus (the
# history's own r included), except while typing in a text box (check_action).
APPROVAL_BINDINGS = _LISTS["approval"]
EDIT_BINDINGS = _LISTS["edit"]
FEEDBACK_BINDINGS = _LISTS["feedback"]
OUTPUT_BINDINGS = _LISTS["output"]
CODE_BINDINGS = _LISTS["code"]
HISTORY_BINDINGS = _LISTS["history"]
PERMISSION_BINDINGS = _LISTS["permission"]

ALL_BINDINGS: dict[str, list[Binding]] = {
    "Anywhere": APP_BINDINGS + MAIN_BINDINGS,
    "Approval bar": APPROVAL_BINDINGS,
    "Output pane": OUTPUT_BINDINGS,
    "Code pane": CODE_BINDINGS,
    "Inline editor": EDIT_BINDINGS,
    "Feedback review": FEEDBACK_BINDINGS,
    "History pane": HISTORY_BINDINGS,
    "Questions": PERMISSION_BINDINGS,
}
BINDING_IDS = frozenset(b.id for group in ALL_BINDINGS.values() for b in group if b.id)


GLOBAL_IDS = frozenset(b.id for b in APP_BINDINGS + MAIN_BINDINGS if b.id)


def text_editing_keys() -> frozenset[str]:
    """The keys the prompt box (and the reject note) use to edit text.

    Read from the widgets' own bindings, so a Textual upgrade that adds one is
    caught too; plus the keys they handle without a binding.
    """
    from textual.widgets import Input, TextArea

    from verifybot_tui.tui.widgets.prompt import NEWLINE_KEYS

    keys = {"enter", "tab", "shift+tab", *NEWLINE_KEYS}
    for widget in (Input, TextArea):
        for b in widget.BINDINGS:
            key = b.key if isinstance(b, Binding) else b[0]
            keys.update(k.strip() for k in key.split(","))
    return frozenset(keys)


def _printable(key: str) -> bool:
    return len(key) == 1 or key in ("space", "slash", "question_mark", "full_stop", "comma")


# Sections whose keys apply whichever pane has the focus: a key there may be used by
# no other binding. The others are pane keys (the output pane's, the history's, ...):
# only one pane has the focus, so two panes may share a key ("w" wraps in either).
WIDE_SECTIONS = ("Anywhere", "Approval bar")
# Textual's own keys, bound by the framework rather than keys.toml.
FRAMEWORK_KEYS = {"ctrl+c": "copy / how to quit", "ctrl+p": "the command palette",
                  "tab": "next pane", "shift+tab": "previous pane"}
SPARE_CANDIDATES = tuple(f"ctrl+{c}" for c in "bfgnoqrlst") + tuple(
    f"f{n}" for n in range(1, 13))


def _keys_of(key: str) -> list[str]:
    return [k.strip().lower() for k in key.split(",") if k.strip()]


def _section_of() -> dict[str, str]:
    return {b.id: section for section, group in ALL_BINDINGS.items() for b in group if b.id}


def _clashes(binding_id: str, wanted: list[str], keymap: Mapping[str, str]) -> list[str]:
    """The other bindings that answer to one of ``wanted`` once ``keymap`` is applied.

    A binding of a pane may share its key with a binding of another pane; nothing
    shares a key with a binding that works anywhere.
    """
    sections = _section_of()
    mine = sections[binding_id]
    found = []
    for section, group in ALL_BINDINGS.items():
        for b in group:
            if not b.id or b.id == binding_id:
                continue
            shared = set(wanted) & set(_keys_of(keymap.get(b.id, b.key)))
            if not shared:
                continue
            if section == mine or section in WIDE_SECTIONS or mine in WIDE_SECTIONS:
                found.append(f"{', '.join(sorted(shared))} is {b.id} ({b.description})")
    found += [f"{k} is {FRAMEWORK_KEYS[k]}" for k in wanted if k in FRAMEWORK_KEYS]
    return found


def spare_keys(keymap: Mapping[str, str], count: int = 4) -> list[str]:
    """Keys nothing in the app uses, to suggest in a refusal: neither a binding's own
    key nor one it is remapped to (a refused remap leaves its binding its own key)."""
    taken = set(text_editing_keys()) | set(FRAMEWORK_KEYS)
    for group in ALL_BINDINGS.values():
        for b in group:
            taken.update(_keys_of(b.key))
            taken.update(_keys_of(keymap.get(b.id or "", "")))
    return [k for k in SPARE_CANDIDATES if k not in taken][:count]


def _refusal(binding_id: str, key: str, wanted: list[str],
             keymap: Mapping[str, str]) -> str | None:
    """Why this one remap cannot be used, with the rest of ``keymap`` applied; None: it can."""
    spare = ", ".join(spare_keys(keymap)) or "an F-key"
    clash = [k for k in wanted if k in text_editing_keys()]
    if clash:
        return (f"[ui.keys] {binding_id} = {key!r} not used: {', '.join(clash)} edits text "
                f"in the prompt box. Pick another key (free now: {spare}).")
    typed = [k for k in wanted if _printable(k)]
    if typed and binding_id in GLOBAL_IDS:
        return (f"[ui.keys] {binding_id} = {key!r} not used: {', '.join(typed)} would be "
                f"typed into the prompt box. Use a ctrl+ or F-key (free now: {spare}).")
    taken = _clashes(binding_id, wanted, keymap)
    if taken:
        return (f"[ui.keys] {binding_id} = {key!r} not used: {'; '.join(taken)}. Pick "
                f"another key (free now: {spare}), or move that one too.")
    return None


def check_keymap(keys: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The usable part of ``[ui.keys]`` and a message for each entry refused.

    Every remap is checked against every binding of the app (the others' keys as
    remapped, so two keys can swap): a key the prompt box uses to edit text would
    never reach its binding while you type, a plain character for a key meant to
    work anywhere would be typed instead, and a key another binding already answers
    to would take that binding's key away. Refusing one remap gives its binding its
    default key back, which may clash with another remap: checked again until stable.
    """
    problems: list[str] = []
    good: dict[str, str] = {}
    for binding_id, key in keys.items():
        if binding_id not in BINDING_IDS:
            problems.append(f"[ui.keys] {binding_id!r} is not a key id; known ids: "
                            f"{', '.join(sorted(BINDING_IDS))}")
        elif not isinstance(key, str) or not key.strip():
            problems.append(f"[ui.keys] {binding_id!r} has an empty key")
        else:
            good[binding_id] = ",".join(_keys_of(key))
    refused: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for binding_id in list(good):
            why = _refusal(binding_id, keys[binding_id], _keys_of(good[binding_id]), good)
            if why is not None:
                refused[binding_id] = why
                del good[binding_id]
                changed = True
    problems += [refused[b] for b in keys if b in refused]
    return good, problems


def effective_key(binding: Binding, keymap: Mapping[str, str]) -> str:
    """The key(s) a binding answers to once the user's keymap is applied."""
    return keymap.get(binding.id or "", binding.key)


# Keys that are not bindings of keys.toml (a widget's own, or a screen's), listed in the
# help all the same: (section, key, what). They cannot be remapped (no id).
FIXED_ROWS = (
    ("Prompt box", "enter", "Send the prompt"),
    ("Prompt box", "shift+enter,ctrl+j", "A new line in the prompt"),
    ("History pane", "enter", "Open the session or attempt under the cursor (its detail)"),
    ("History pane", "up,down", "Move between sessions and their attempts"),
    ("Attempt detail", "d", "Diff this attempt's version against the one before it"),
    ("Attempt detail", "r", "Resume this session"),
    ("Attempt detail", "escape,q", "Close the detail"),
)


def help_rows(keymap: Mapping[str, str]) -> Iterable[tuple[str, str, str, str]]:
    """(section, keys, what, id) for the help screen: every binding, then the fixed keys
    in their sections."""
    for section, bindings in ALL_BINDINGS.items():
        for b in bindings:
            yield section, effective_key(b, keymap), b.tooltip or b.description, b.id or ""
        for where, key, what in FIXED_ROWS:
            if where == section:
                yield where, key, what, ""
    for where, key, what in FIXED_ROWS:
        if where not in ALL_BINDINGS:
            yield where, key, what, ""


_KEY_NAMES = {"question_mark": "?", "slash": "/", "plus": "+", "minus": "-", "escape": "Esc",
              "enter": "Enter", "space": "Space", "full_stop": ".", "comma": ",",
              "tab": "Tab", "home": "Home", "end": "End", "pageup": "PgUp", "pagedown": "PgDn",
              "up": "↑", "down": "↓", "left": "←", "right": "→", "delete": "Del"}


def readable_key(keys: str) -> str:
    """"f1,question_mark" as a person reads it: "F1 / ?"; "ctrl+t" as "Ctrl+T"."""
    def one(key: str) -> str:
        *mods, last = key.strip().split("+")
        name = _KEY_NAMES.get(last) or (last.upper() if len(last) == 1 and mods
                                        else last.upper() if last[:1] == "f" and last[1:].isdigit()
                                        else last)
        return "+".join([*(m.capitalize() for m in mods), name])
    return " / ".join(one(k) for k in keys.split(",") if k.strip())
