"""Text from outside in the real app (issue 11, item 1): a program's escapes and a
file name made of markup and bidi controls are shown escaped, never acted on."""

from __future__ import annotations

from pathlib import Path

import pytest
from proc_helpers import alive
from textual.notifications import Notify

from verifybot_tui.tui.widgets.approval import ApprovalBar
from verifybot_tui.tui.widgets.conversation import ConversationPane

pytestmark = pytest.mark.usefixtures("tui_env")

NAME = "[/b][red]ev\u202eil.py"  # markup and a bidi override: the extractor keeps it
CODE = ('import sys; sys.stderr.write("boom \\x1b]0;TITLE\\x07 \\x1b[2J\\n"); '
        'sys.exit(1)')


async def test_hostile_names_and_reasons_are_shown_escaped(tui, tmp_path: Path) -> None:
    ws = tui.ws
    transcript = tmp_path / "t.md"
    transcript.write_text(f"## Answer 1\n\n````markdown\n```python title=\"{NAME}\"\n"
                          f"{CODE}\n```\n````\n", encoding="utf-8")
    app = tui.make_app(ws, transcript, data={"run": {"max_retries": 0}})
    toasts: list[str] = []

    def hook(message: object) -> None:
        if isinstance(message, Notify):
            toasts.append(message.notification.message)

    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "hostile")
        await tui.wait_approval(pilot)
        question = str(tui.main(app).query_one(ApprovalBar).query_one(
            "#approval-question").render())
        assert "\u202e" not in question and "\x1b" not in question
        assert "[/b][red]ev\\u202eil" in question  # shown as text, not as markup
        await pilot.press("a")
        await tui.wait_idle(pilot)
        notices = [str(w.render()) for w in
                   tui.main(app).query_one(ConversationPane).query(".notice")]
    shown = "\n".join(notices + toasts)
    assert "Verdict for attempt 1" in shown and "\\x1b]0;TITLE\\x07" in shown
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown


# -- item 3: a second stop (or quit) during the grace period kills at once ------------------

STUBBORN = """
    import os, signal, subprocess, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = subprocess.Popen([sys.executable, "-c",
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
    open({pidfile!r}, "w").write(f"{{os.getpid()}} {{child.pid}}")
    print("stubborn", flush=True)
    time.sleep(600)
"""


@pytest.mark.parametrize("key", ["ctrl+g", "ctrl+q"])
async def test_a_second_stop_or_quit_kills_a_term_ignoring_program_at_once(
        tui, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    """The grace period is made 600 s long: the program ignores TERM, so only the
    second key's KILL can end it before the test's 60 s wait runs out."""
    from verifybot_tui.core.store.history import History
    from verifybot_tui.targets.containment import tree

    monkeypatch.setattr(tree, "GRACE", 600.0)
    monkeypatch.setenv("VERIFYBOT_NO_SANDBOX", "1")  # the pids are looked up in /proc
    pidfile = tmp_path / "pids"
    ws = tui.ws
    answers = tui.write_answers(tmp_path / "t.md", STUBBORN.format(pidfile=str(pidfile)))
    app = tui.make_app(ws, answers, data={"run": {"max_retries": 0, "timeout": 300.0}})
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.prompt_and_accept(pilot, "stubborn")
        await tui.wait_for(pilot, lambda: pidfile.exists() and " " in pidfile.read_text(),
                           30, "the program's pids")
        pids = [int(p) for p in pidfile.read_text().split()]
        await pilot.press(key)
        if key == "ctrl+q":  # quitting during a run asks first
            from verifybot_tui.tui.screens.dialogs import ConfirmScreen

            await tui.wait_screen(pilot, ConfirmScreen, 10, "asked")
            await pilot.press("y")
            await tui.wait_for(pilot, lambda: app.session.stopping, 10, "the stop to begin")
        await pilot.pause(0.3)
        assert all(alive(p) for p in pids), "TERM is ignored: the first stop only waits"
        await pilot.press(key)
        await tui.wait_for(pilot, lambda: not any(alive(p) for p in pids), 60,
                           "the second stop to kill the tree")
        if key == "ctrl+g":
            await tui.wait_idle(pilot)
        else:  # the quit goes on once the loop ended
            await tui.wait_for(pilot, lambda: app.return_code is not None, 30, "the app to quit")
    sessions = History(ws).sessions()
    assert [s["status"] for s in sessions] == ["STOPPED"], sessions


# -- item 7: the app's start marks a session whose process is gone ----------------------------


async def test_the_apps_start_marks_a_dead_session_interrupted(tui, tmp_path: Path) -> None:
    """Not only the next run: opening the app is reading history, so a session left
    RUNNING by a process that is gone is INTERRUPTED before anything lists it."""
    import sqlite3
    import subprocess

    from cli_runs import run_once

    ws = tui.ws
    assert run_once(tmp_path, "print('ok')", ws=ws).returncode == 0
    dead = subprocess.Popen(["true"])
    dead.wait()
    con = sqlite3.connect(ws / "history.db")
    con.execute("UPDATE sessions SET status='RUNNING', finished_at=NULL, pid=?", (dead.pid,))
    con.execute("UPDATE attempts SET status='RUNNING'")
    con.commit()
    con.close()
    app = tui.make_app(ws)
    async with app.run_test(size=tui.SIZE) as pilot:
        await pilot.pause()
        con = sqlite3.connect(ws / "history.db")
        try:
            rows = con.execute("SELECT s.status, a.status FROM sessions s "
                               "JOIN attempts a ON a.session_id = s.id").fetchall()
        finally:
            con.close()
    assert rows == [("INTERRUPTED", "INTERRUPTED")]
    transcript = next((ws / "raw_md").glob("*.md")).read_text()
    assert transcript.rstrip().endswith("(found at the next start)")
