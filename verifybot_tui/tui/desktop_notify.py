"""A desktop notification when a run ends while the user is in another window.

The terminal tells the app when it loses and regains focus (Textual's AppBlur
and AppFocus, from the FocusIn/FocusOut reports it switches on); a run that
ends after the app has been in the background for ``[ui] notify_after`` seconds
sends one escape sequence: OSC 9 (iTerm2, WezTerm, Ghostty, kitty, Windows
Terminal), OSC 777 (foot, urxvt, VTE terminals that carry the patch), or the
bell where neither is known to work. Inside tmux an OSC sequence goes through
its passthrough (``set -g allow-passthrough on``); the bell needs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from verifybot_tui.core.settings.config import NOTIFY_KINDS

OSC9_PROGRAMS = ("iterm.app", "wezterm", "ghostty", "vscode")
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f;]")

__all__ = ["NOTIFY_KINDS", "pick_kind", "sequence"]


def pick_kind(wanted: str, env: Mapping[str, str]) -> str:
    """The kind to send: ``wanted``, or for "auto" what this terminal is known to show."""
    if wanted != "auto":
        return wanted
    if env.get("TMUX"):
        return "bell"  # the outer terminal is unknown; tmux shows a bell in its status
    program = env.get("TERM_PROGRAM", "").lower()
    term = env.get("TERM", "").lower()
    if program in OSC9_PROGRAMS or env.get("WT_SESSION") or term.startswith("xterm-kitty"):
        return "osc9"
    if term.startswith(("foot", "rxvt")) or env.get("VTE_VERSION"):
        return "osc777"
    return "bell"


def sequence(kind: str, title: str, body: str, env: Mapping[str, str]) -> str:
    """The bytes to write for one notification ("" for "off"); text made inert first."""
    kind = pick_kind(kind, env)
    title, body = _UNSAFE.sub(" ", title)[:80], _UNSAFE.sub(" ", body)[:200]
    if kind == "osc9":
        seq = f"\x1b]9;{title}: {body}\x07"
    elif kind == "osc777":
        seq = f"\x1b]777;notify;{title};{body}\x07"
    elif kind == "bell":
        return "\x07"
    else:
        return ""
    if env.get("TMUX"):  # tmux passes a sequence on only inside its DCS wrapper
        seq = "\x1bPtmux;" + seq.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return seq
