"""Before a browser is started: can a window open here, and was the profile ever logged in?

A start that cannot work (a visible browser with no display) is refused before
Chromium runs, because a Chromium that fails leaves a half-made profile behind
(its `Singleton*` lock files, a `Variations` file) that later reads as if a login
had happened. What a failed start did make is removed again: `profile_state` then
tells a profile that `verifybot login` finished in from one a browser merely ran in.
Light on purpose: the app reads this before its first frame, without Playwright.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser.chromium import profile_dir

LOGIN_STAMP = ".verifybot-login"
"""Written into a profile by a finished `verifybot login` (the same name doctor reads)."""

ProfileState = Literal["missing", "unused", "used", "logged_in"]


def needs_display(env: Mapping[str, str] | None = None, platform: str = sys.platform) -> str | None:
    """Why a visible browser window cannot open here, or None when one can."""
    env = os.environ if env is None else env
    if platform != "linux" or env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"):
        return None
    return "neither $DISPLAY nor $WAYLAND_DISPLAY is set"


def cannot_open(config: LLMConfig, env: Mapping[str, str] | None = None) -> str | None:
    """Why starting this browser LLM here would fail before any page loads, or None."""
    if config.kind != "browser" or config.headless:
        return None
    return needs_display(env)


def profile_state(profile: Path) -> ProfileState:
    """What a login profile holds: nothing, only a failed start's lock files, a browser's
    files but no finished login, or a login `verifybot login` finished."""
    if (profile / LOGIN_STAMP).is_file():
        return "logged_in"
    try:
        names = [p.name for p in profile.iterdir()]
    except OSError:
        return "missing"
    return "used" if any(not n.startswith("Singleton") for n in names) else "unused"


class NewProfile:
    """The profile of one LLM as it was before this program started a browser on it.

    ``discard`` removes it again when it did not exist before, no start on it
    succeeded and no browser got as far as its ``Default`` folder (where pages, and a
    login typed into the window, are kept): a failed first start leaves nothing that
    looks like a login, and a login is never thrown away."""

    def __init__(self, config: LLMConfig) -> None:
        self.path = profile_dir(config)
        self.existed = self.path.exists()
        self.started = False  # a start on it succeeded: it is the user's now

    def discard(self) -> bool:
        if self.existed or self.started or profile_state(self.path) == "logged_in":
            return False
        if not self.path.exists() or (self.path / "Default").exists():
            return False  # a browser opened pages in it: a login typed there is kept
        shutil.rmtree(self.path, ignore_errors=True)
        return not self.path.exists()
