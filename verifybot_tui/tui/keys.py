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
    # First, so the footer always has room for it.
    Binding("ctrl+q", "app.quit", "Quit", id="quit", priority=True,
            tooltip="Quit (asks first while a run is going on)"),
    Binding("ctrl+t", "switch_target", "Target", id="switch_target",
            tooltip="Switch to the next configured target (connects in the background)"),
    Binding("f8", "switch_llm", "LLM", id="switch_llm",
            tooltip="Switch to the next configured LLM (the next prompt opens a new chat)"),
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
    Binding("escape", "focus_decision", "Back", id="focus_decision", show=False,
            tooltip="Back to what waits for you (the approval bar, the feedback review), "
                    "else to the prompt box"),
    Binding("f5", "toggle_top", "Code/Chat", id="toggle_top",
            tooltip="On a narrow screen: show the code or the conversation"),
]

# Priority bindings of the main screen: they work whichever pane has focus (the
# history's own r included), except while typing in a text box (check_action).
APPROVAL_BINDINGS: list[Binding] = [
    Binding("a", "approve('accept')", "Accept", id="approval.accept", priority=True,
            tooltip="Run this version on the target"),
    Binding("e", "approve('edit')", "Edit", id="approval.edit", priority=True,
            tooltip="Edit the code here; ctrl+s keeps the edits, then accept runs them"),
    Binding("o", "approve('external_edit')", "$EDITOR", id="approval.external_edit",
            priority=True, tooltip="Edit the selected file in $VISUAL/$EDITOR"),
    Binding("r", "approve('reject')", "Reject", id="approval.reject", priority=True,
            tooltip="Ask the LLM for another version, with an optional note"),
    Binding("s", "approve('stop')", "Stop", id="approval.stop", priority=True,
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
