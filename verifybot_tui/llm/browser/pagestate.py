"""Telling a chat page's states apart, each with its own message saying what to do.

The page script (observer.js) gathers raw facts; the judgement lives here, in
plain Python, so it is testable without a browser and the order of the checks
(a bot check hides everything else; a greeting that says "Welcome back" on a
page with a prompt box is not an account picker) is in one place.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from verifybot_tui.llm.browser.site_profile import SiteProfile


class PageState(enum.Enum):
    READY = "ready"  # a prompt box, nothing in the way
    LOADING = "loading"  # no prompt box yet, nothing recognised either
    LOGGED_OUT = "logged_out"
    ACCOUNT_PICKER = "account_picker"
    BOT_CHECK = "bot_check"
    LIMIT = "limit"
    ERROR = "error"
    # A message (or a dialog with no button to close it) that only its text could
    # explain, in a language or form VerifyBot cannot read: reported, never guessed.
    UNREADABLE = "unreadable"


BLOCKING = {PageState.LOGGED_OUT, PageState.ACCOUNT_PICKER, PageState.BOT_CHECK,
            PageState.LIMIT, PageState.ERROR, PageState.UNREADABLE}


@dataclass
class Verdict:
    state: PageState
    detail: str = ""  # the text on the page that gave it away


def classify(facts: dict[str, Any], profile: SiteProfile) -> Verdict:
    if not facts:
        return Verdict(PageState.LOADING)
    prompt_box = bool(facts.get("promptBox"))
    # Bot-management scripts sit on normal pages too: a challenge marker is a bot
    # check only when the app itself is not rendered (no renderer, no prompt box).
    app = prompt_box or bool(facts.get("renderer"))
    if facts.get("botCheck") and not app:
        return Verdict(PageState.BOT_CHECK, str(facts.get("title") or facts["botCheck"]))
    path = str(facts.get("path") or "")
    on_login_path = any(path == p or path.startswith(p.rstrip("/") + "/")
                        for p in profile.texts.get("login_paths", []))
    if on_login_path or facts.get("login"):
        return Verdict(PageState.LOGGED_OUT, str(facts.get("login") or path))
    if facts.get("picker") and (not prompt_box or facts.get("pickerInDialog")):
        return Verdict(PageState.ACCOUNT_PICKER, str(facts["picker"]))
    if facts.get("limit"):
        return Verdict(PageState.LIMIT, str(facts["limit"]))
    if facts.get("error"):
        return Verdict(PageState.ERROR, str(facts["error"]))
    if facts.get("unreadable"):
        return Verdict(PageState.UNREADABLE, str(facts["unreadable"]))
    return Verdict(PageState.READY if prompt_box else PageState.LOADING)


def message(verdict: Verdict, *, llm: str, site: str, headless: bool, profile_dir: str,
            site_file: str = "", url: str = "") -> str:
    """What the user reads: what the page shows, then what to do about it."""
    s, d = verdict.state, verdict.detail.strip()
    quoted = f' ("{d[:200]}")' if d else ""
    login = f"`verifybot login --llm {llm}`"
    solve = (f"set headless = false in [llm.{llm}] so the window shows, then solve the check "
             "in it" if headless else "solve the check in the visible browser window")
    see = f" Open {url} in a browser to see the conversation." if url else ""
    says = {
        PageState.LOGGED_OUT: f"Not logged in to {site} in the browser profile {profile_dir}"
        f"{quoted}. Run {login} and log in in the window that opens.",
        PageState.ACCOUNT_PICKER: f"{site} shows an account picker{quoted} that needs a click. "
        f"Run {login} and pick your account in the window that opens.",
        PageState.BOT_CHECK: f"{site} shows a bot check{quoted}: {solve}, then try again (or "
        f"run {login}).",
        PageState.LIMIT: f"{site} reports a usage limit{quoted}. Wait for the limit to reset "
        "(or use another --llm), then try again.",
        PageState.ERROR: f"{site} showed an error{quoted}. Try again; if it repeats, wait a "
        f"while.{see}",
        PageState.UNREADABLE: f"{site}: the page shows a message VerifyBot cannot read"
        f"{quoted}. Nothing was guessed: the page is saved as evidence (runs/log/). Open "
        f"the chat in a browser to see what it asks and answer it there, then try again; if "
        f"it is in a language VerifyBot has no texts for, add them to a site profile of your "
        f"own ([texts.LANG] in a file with extends = \"{site}\").",
        PageState.LOADING: f"{site} shows no prompt box (no prompt_box selector of {site_file} "
        "matched). The site may be down or have changed its page: open it in a browser to "
        "check, and update the selectors if needed.",
    }
    return says.get(s, f"{site} is ready.")
