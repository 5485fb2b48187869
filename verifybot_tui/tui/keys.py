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


def check_keymap(keys: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The usable part of ``[ui.keys]`` and a message for each entry refused.

    A key the prompt box uses to edit text would never reach its binding while
    you type (or would take the edit away): such a remap is refused, and so is a
    plain character for a key meant to work anywhere.
    """
    good: dict[str, str] = {}
    problems: list[str] = []
    editing = text_editing_keys()
    for binding_id, key in keys.items():
        if binding_id not in BINDING_IDS:
            problems.append(f"[ui.keys] {binding_id!r} is not a key id; known ids: "
                            f"{', '.join(sorted(BINDING_IDS))}")
            continue
        if not isinstance(key, str) or not key.strip():
            problems.append(f"[ui.keys] {binding_id!r} has an empty key")
            continue
        wanted = [k.strip().lower() for k in key.split(",") if k.strip()]
        clash = [k for k in wanted if k in editing]
        if clash:
            problems.append(f"[ui.keys] {binding_id} = {key!r} not used: {', '.join(clash)} "
                            "edits text in the prompt box. Pick another key (F-keys and "
                            "ctrl+letters such as ctrl+t, ctrl+o are free).")
            continue
        typed = [k for k in wanted if _printable(k)]
        if typed and binding_id in GLOBAL_IDS:
            problems.append(f"[ui.keys] {binding_id} = {key!r} not used: {', '.join(typed)} "
                            "would be typed into the prompt box. Use a ctrl+ or F-key.")
            continue
        good[binding_id] = ",".join(wanted)
    return good, problems


def effective_key(binding: Binding, keymap: Mapping[str, str]) -> str:
    """The key(s) a binding answers to once the user's keymap is applied."""
    return keymap.get(binding.id or "", binding.key)


def help_rows(keymap: Mapping[str, str]) -> Iterable[tuple[str, str, str, str]]:
    """(section, keys, what, id) for the help screen."""
    for section, bindings in ALL_BINDINGS.items():
        for b in bindings:
            yield section, effective_key(b, keymap), b.tooltip or b.description, b.id or ""
