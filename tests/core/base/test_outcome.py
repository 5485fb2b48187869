"""Statuses are one closed set; every way a session ends is one Outcome."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_LLM,
    EXIT_TARGET,
    EXIT_USAGE,
    ConfigError,
    LLMError,
    TargetError,
)
from verifybot_tui.core.base.outcome import Outcome, Status
from verifybot_tui.core.store.history import History


def test_statuses_are_the_names_of_the_design() -> None:
    assert [s.value for s in Status] == [
        "VERIFIED", "PASSED", "FAILED", "STOPPED", "INTERRUPTED", "LLM_ERROR", "TARGET_ERROR",
        "ERROR"]
    assert Status.PASSED == "PASSED" and Status.PASSED.ok and Status.VERIFIED.ok
    assert not Status.FAILED.ok


def test_rows_an_older_version_wrote_as_success_read_back_as_passed(tmp_path: Path) -> None:
    history = History(tmp_path)
    sid = history.start_session(slug="s", prompt="p", target="local", llm="replay",
                                transcript="t.md")
    aid = history.add_attempt(sid, n=1, version=1, prompt_id=None, files=[], entry="s.py",
                              target="local")
    history.close()
    with sqlite3.connect(tmp_path / "history.db") as db:  # as the version before PASSED did
        db.execute("UPDATE sessions SET status='SUCCESS' WHERE id=?", (sid,))
        db.execute("UPDATE attempts SET status='SUCCESS' WHERE id=?", (aid,))
    history = History(tmp_path)
    assert history.session(sid)["status"] == "PASSED"
    assert [s["status"] for s in history.sessions()] == ["PASSED"]
    assert [a["status"] for a in history.attempts(sid)] == ["PASSED"]
    assert Status.parse("REJECTED") == "REJECTED"  # attempt-only states pass through
    history.close()


def test_each_way_a_session_ends_has_its_status_and_exit_code() -> None:
    cancel = asyncio.CancelledError()
    assert Outcome.of_error(cancel) == Outcome(Status.STOPPED, EXIT_FAILED, "stopped by the user")
    assert Outcome.of_error(cancel, Status.INTERRUPTED) == Outcome(
        Status.INTERRUPTED, EXIT_INTERRUPTED, "interrupted (Ctrl+C)")
    assert Outcome.of_error(LLMError("logged out")) == Outcome(
        Status.LLM_ERROR, EXIT_LLM, "logged out")
    assert Outcome.of_error(TargetError("unreachable")).exit_code == EXIT_TARGET
    assert Outcome.of_error(ConfigError("bad")) == Outcome(Status.ERROR, EXIT_USAGE, "bad")
    bug = Outcome.of_error(KeyError("x"))
    assert bug.status == Status.ERROR and bug.message == "internal error: KeyError('x')"


def test_a_backend_reports_each_state_change_to_its_listeners() -> None:
    from verifybot_tui.core.base.ports import ReportsState

    class Backend(ReportsState):
        def __init__(self) -> None:
            self.state = "stopped"

    backend, seen = Backend(), []
    backend.on_state(seen.append)
    backend.state = "starting"
    backend.state = "starting"  # no change, no call
    backend.state = "idle"
    assert seen == ["starting", "idle"] and backend.state == "idle"
