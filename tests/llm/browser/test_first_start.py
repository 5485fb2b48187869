"""What a login profile holds, and what a failed first start leaves of it (real folders).

`doctor` and the app tell a profile `verifybot login` finished in from one a browser
merely ran in; a profile a failed start made goes again, one that was there stays.
"""

from __future__ import annotations

from pathlib import Path

from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser.first_start import (
    LOGIN_STAMP,
    NewProfile,
    cannot_open,
    needs_display,
    profile_state,
)


def config(tmp_path: Path, **kw) -> LLMConfig:
    return LLMConfig(name="chatgpt", site="chatgpt", profile_dir=str(tmp_path / "p"), **kw)


def test_profile_states(tmp_path: Path) -> None:
    p = tmp_path / "p"
    assert profile_state(p) == "missing"
    p.mkdir()
    (p / "SingletonLock").symlink_to("host-1234")  # what a Chromium that failed leaves
    assert profile_state(p) == "unused"
    (p / "Variations").write_text("{}")
    assert profile_state(p) == "used"
    (p / LOGIN_STAMP).write_text("2026-11-29 03:00:00\n")
    assert profile_state(p) == "logged_in"


def test_a_new_profile_that_never_started_is_discarded(tmp_path: Path) -> None:
    profile = NewProfile(config(tmp_path))
    profile.path.mkdir()
    (profile.path / "SingletonLock").symlink_to("host-1234")
    (profile.path / "BrowserMetrics").mkdir()
    assert profile.discard() and not profile.path.exists()


def test_a_profile_kept_when_it_was_there_started_or_logged_in(tmp_path: Path) -> None:
    path = tmp_path / "p"
    path.mkdir()
    assert not NewProfile(config(tmp_path)).discard() and path.exists()  # there before
    path.rmdir()
    started = NewProfile(config(tmp_path))
    path.mkdir()
    started.started = True
    assert not started.discard() and path.exists()
    path.rmdir()
    logged = NewProfile(config(tmp_path))
    path.mkdir()
    (path / LOGIN_STAMP).write_text("now\n")  # `verifybot login` ran meanwhile
    assert not logged.discard() and path.exists()
    (path / LOGIN_STAMP).unlink()
    path.rmdir()
    browsed = NewProfile(config(tmp_path))
    (path / "Default").mkdir(parents=True)  # a browser opened pages: a login may be in it
    assert not browsed.discard() and path.exists()


def test_a_visible_browser_needs_a_display_a_headless_one_does_not(tmp_path: Path) -> None:
    assert needs_display({}, "linux")
    assert needs_display({"DISPLAY": ":0"}, "linux") is None
    assert needs_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert needs_display({}, "darwin") is None
    assert cannot_open(config(tmp_path), {}) is not None
    assert cannot_open(config(tmp_path, headless=True), {}) is None
    assert cannot_open(LLMConfig(name="api", kind="openai"), {}) is None
