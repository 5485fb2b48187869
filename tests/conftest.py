"""Shared test set-up: keep the developer's own config and profiles out of every test.

The fixtures that tests in several folders use live here: the TUI's (below), and
the chat site's, sshd's and the API server's, loaded as plugins from
tests/support/ (on pytest's pythonpath with the other shared helpers), and
``shared_gate``, which deselects the checks that read ../shared when a plain
clone has no ../shared beside it and says so in the run's summary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tui_support import AppMessages, TuiDriver

pytest_plugins = ["browser_fixtures", "sshd_fixtures", "api_fixtures", "shared_gate"]


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads ~/.config/verifybot or writes browser profiles into the real home."""
    home = tmp_path_factory.mktemp("user")
    # The cache (the probe's kept answers) is one per test process, as a user's is one
    # per account: each test still starts from its own config, data and state.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / "state"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)


# -- the TUI tests' fixtures ---------------------------------------------------------------


@pytest.fixture
def tui_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Colours on (the autouse fixture above sets NO_COLOR), no animations.

    Use it with ``pytestmark = pytest.mark.usefixtures("tui_env")``.
    """
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def tui(tmp_path: Path) -> TuiDriver:
    """The TUI helpers (make_app, type_prompt, wait_for, ...) and the test's workspace."""
    return TuiDriver(tmp_path)


@pytest.fixture
def frozen_run_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's time in the output pane ("after 0.1 s") frozen at 0, for pictures of
    the app: a busy machine makes a run last a second, which is not a change of screen."""
    import dataclasses

    from verifybot_tui.tui.screens.main import loop_controller

    summary = loop_controller._run_summary

    def timeless(ev: Any) -> Any:
        return summary(dataclasses.replace(ev, result=dataclasses.replace(ev.result,
                                                                          duration=0.0)))

    monkeypatch.setattr(loop_controller, "_run_summary", timeless)


@pytest.fixture
def app_messages() -> AppMessages:
    return AppMessages()


@pytest.fixture
def notices(app_messages: AppMessages) -> list[Any]:
    """The notifications the app showed (needs ``message_hook=app_messages.hook``)."""
    return app_messages.notices
