"""Shared test set-up: keep the developer's own config and profiles out of every test."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tui_support import TuiDriver

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
T = TypeVar("T")


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads ~/.config/verifybot or writes browser profiles into the real home."""
    home = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)


def verifybot_cmd() -> list[str]:
    """The installed entry point's equivalent, run by the test's own interpreter."""
    return [sys.executable, "-m", "verifybot_tui"]


def cli_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(extra)
    return env


# -- the TUI tests' fixtures ---------------------------------------------------------------


@pytest.fixture
def tui_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Colours on (the autouse fixture above sets NO_COLOR), no animations.

    Use it with ``pytestmark = pytest.mark.usefixtures("tui_env")``.
    """
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


class AppMessages:
    """What the app said while a test ran, read from its public messages.

    Pass ``hook`` as ``run_test(message_hook=...)``. ``events`` are the loop
    events the screen handled (each once: a message is seen at each pump it
    passes); ``notices`` are the notifications, from Textual's Notify message.
    """

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.notices: list[Any] = []  # textual.notifications.Notification

    def hook(self, message: object) -> None:
        from textual.notifications import Notify

        from verifybot_tui.tui.messages import LoopEvent

        if isinstance(message, LoopEvent):
            if not any(e is message.event for e in self.events):
                self.events.append(message.event)
        elif isinstance(message, Notify):
            if not any(n is message.notification for n in self.notices):
                self.notices.append(message.notification)

    def of(self, kind: type[T]) -> list[T]:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture
def tui(tmp_path: Path) -> TuiDriver:
    """The TUI helpers (make_app, type_prompt, wait_for, ...) and the test's workspace."""
    return TuiDriver(tmp_path)


@pytest.fixture
def app_messages() -> AppMessages:
    return AppMessages()


@pytest.fixture
def notices(app_messages: AppMessages) -> list[Any]:
    """The notifications the app showed (needs ``message_hook=app_messages.hook``)."""
    return app_messages.notices
