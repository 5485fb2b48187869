"""Every key binding in one place, each with an id and a tooltip.

Ids are what users remap in ``[ui.keys]`` (id = "key"), applied with
``App.set_keymap``; the help screen and the command palette read the same
lists, so a remapped key shows up everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from textual.binding import Binding

APP_BINDINGS: list[Binding] = [
    Binding("f1,question_mark", "help", "Help", id="help", key_display="F1",
            tooltip="List every key and what it does"),
    Binding("y", "copy_shown", "Copy", id="copy",
            tooltip="Copy the selection, else the code file shown, to the clipboard "
                    "(OSC 52: works in tmux with set-clipboard on)"),
    Binding("f9", "change_theme", "Theme", id="change_theme", show=False,
            tooltip="Pick a colour theme (kept in the state file, not in config.toml)"),
]

MAIN_BINDINGS: list[Binding] = [
    Binding("ctrl+t", "switch_target", "Target", id="switch_target",
            tooltip="Switch to the next configured target (connects in the background)"),
    Binding("ctrl+o", "toggle_auto_accept", "Auto", id="toggle_auto_accept",
            tooltip="Run each new version without asking (on/off)"),
    Binding("f3", "toggle_review_feedback", "Review", id="toggle_review_feedback",
            tooltip="Show each feedback prompt for editing before it is sent (on/off)"),
    Binding("ctrl+n", "new_chat", "New chat", id="new_chat",
            tooltip="Start over: the next prompt opens a new conversation"),
    Binding("ctrl+r", "retry", "Retry", id="retry",
            tooltip="Send the last prompt again in a new conversation"),
    Binding("ctrl+g", "stop", "Stop", id="stop",
            tooltip="Stop the running program and the loop"),
    Binding("f2", "toggle_history", "History", id="toggle_history",
            tooltip="Show or hide past sessions"),
    Binding("f4", "toggle_diff", "Diff", id="toggle_diff",
            tooltip="Show what changed since the previous version"),
    Binding("ctrl+l", "focus_prompt", "Prompt", id="focus_prompt", show=False,
            tooltip="Put the cursor in the prompt box"),
]

APPROVAL_BINDINGS: list[Binding] = [
    Binding("a", "accept", "Accept", id="approval.accept",
            tooltip="Run this version on the target"),
    Binding("e", "edit", "Edit", id="approval.edit",
            tooltip="Edit the code here; ctrl+s keeps the edits, then accept runs them"),
    Binding("o", "external_edit", "$EDITOR", id="approval.external_edit",
            tooltip="Edit the selected file in $VISUAL/$EDITOR"),
    Binding("r", "reject", "Reject", id="approval.reject",
            tooltip="Ask the LLM for another version, with an optional note"),
    Binding("s", "stop", "Stop", id="approval.stop",
            tooltip="Stop here: nothing more is run or sent"),
]

EDIT_BINDINGS: list[Binding] = [
    Binding("ctrl+s", "save_edit", "Keep edits", id="edit.save",
            tooltip="Keep the edits and go back to the approval bar (accept runs them)"),
    Binding("escape", "cancel_edit", "Discard edits", id="edit.cancel", priority=True,
            tooltip="Leave the editor without keeping changes"),
]

FEEDBACK_BINDINGS: list[Binding] = [
    Binding("ctrl+s", "send", "Send", id="feedback.send", priority=True,
            tooltip="Send this feedback prompt to the LLM"),
    Binding("ctrl+g", "stop", "Stop", id="feedback.stop", priority=True,
            tooltip="Do not send: stop the loop"),
]

OUTPUT_BINDINGS: list[Binding] = [
    Binding("end", "scroll_end", "Follow", id="output.follow", show=False,
            tooltip="Go to the last line and follow new output again"),
    Binding("w", "toggle_wrap", "Wrap", id="output.wrap",
            tooltip="Wrap long output lines, or let them run on (scroll sideways)"),
    Binding("y", "copy", "Copy", id="output.copy",
            tooltip="Copy the output shown to the clipboard (OSC 52 in tmux)"),
]

CODE_BINDINGS: list[Binding] = [
    Binding("w", "toggle_wrap", "Wrap", id="code.wrap",
            tooltip="Wrap long code lines (off by default: code reads best unwrapped)"),
]

HISTORY_BINDINGS: list[Binding] = [
    Binding("r", "resume", "Resume", id="history.resume",
            tooltip="Continue the selected session in its conversation"),
    Binding("slash", "filter", "Filter", id="history.filter",
            tooltip="Filter sessions by text, status or target (Enter keeps, Esc clears)"),
]

PERMISSION_BINDINGS: list[Binding] = [
    Binding("y", "answer(True)", "Yes", id="permission.yes"),
    Binding("n,escape", "answer(False)", "No", id="permission.no"),
]

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


def check_keymap(keys: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The usable part of ``[ui.keys]`` and a message for each id we do not know."""
    good: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, key in keys.items():
        if binding_id not in BINDING_IDS:
            problems.append(f"[ui.keys] {binding_id!r} is not a key id; known ids: "
                            f"{', '.join(sorted(BINDING_IDS))}")
        elif not key.strip():
            problems.append(f"[ui.keys] {binding_id!r} has an empty key")
        else:
            good[binding_id] = key
    return good, problems


def effective_key(binding: Binding, keymap: Mapping[str, str]) -> str:
    """The key(s) a binding answers to once the user's keymap is applied."""
    return keymap.get(binding.id or "", binding.key)


def help_rows(keymap: Mapping[str, str]) -> Iterable[tuple[str, str, str, str]]:
    """(section, keys, what, id) for the help screen."""
    for section, bindings in ALL_BINDINGS.items():
        for b in bindings:
            yield section, effective_key(b, keymap), b.tooltip or b.description, b.id or ""
