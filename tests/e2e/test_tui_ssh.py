"""The app against a real sshd: switch to the Pi mid-session, trust its key, type its
password, and lose it mid-run without the app going down.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from sshd_fixtures import leftover_pids, session_processes
from textual.widgets import Input

from verifybot_tui.core.loop.events import Finished, RunStarted
from verifybot_tui.tui.screens.dialogs import ConfirmScreen, SecretScreen
from verifybot_tui.tui.widgets.output import OutputPane
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = [pytest.mark.ssh, pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(180)]


def pi_table(sshd, remote: str, **over) -> dict:
    table = {"kind": "ssh", "host": sshd.host, "port": sshd.port, "user": sshd.user,
             "key_file": str(sshd.client_key), "known_hosts": str(sshd.known_hosts),
             "password_env": "VERIFYBOT_TEST_NO_SUCH_VAR", "remote_dir": remote}
    table.update(over)
    return table



async def test_switch_to_the_pi_mid_session_with_the_key(tui, sshd, remote_dir, tmp_path: Path,
                                                         app_messages):
    ws = tui.ws
    app = tui.make_app(ws, tui.EXAMPLE, data={"targets": {"pi": pi_table(sshd, remote_dir[0])}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "count the words")
        await tui.wait_approval(pilot)
        await pilot.press("a")  # attempt 1 runs here and fails
        await tui.wait_feedback(pilot, timeout=30,
                           what="feedback")
        await pilot.press("ctrl+s")  # send the feedback as shown
        await tui.wait_approval(pilot, attempt=2, timeout=30, what="fix")
        await pilot.press("ctrl+t")
        status = tui.main(app).query_one(StatusBar)
        await tui.wait_for(pilot, lambda: status.target == "pi"
                           and status.target_state == "connected"
                       and app.session.target_name == "pi", timeout=30, what="pi connected")
        await pilot.press("a")  # the fix runs on the Pi
        await tui.wait_idle(pilot, timeout=60)
        assert "Total words: 17" in tui.main(app).query_one(OutputPane).lines
    assert [r.target for r in seen if isinstance(r, RunStarted)] == ["local", "pi"]
    assert [f.status for f in seen if isinstance(f, Finished)] == ["PASSED"]
    assert len(list(Path(remote_dir[1], "runs").iterdir())) == 1
    assert (ws / "context" / "pi.md").is_file()


async def test_a_prompt_about_the_pi_runs_there(tui, sshd, remote_dir, tmp_path: Path, app_messages,
                                                notices):
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "import socket\nprint('on', 'the pi')")
    app = tui.make_app(ws, transcript, data={"run": {"auto_accept": True},
                                             "targets": {"pi": pi_table(sshd, remote_dir[0])}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        assert app.session.target_name == "local"
        await tui.type_prompt(pilot, "blink the LED on GPIO 17 of my Raspberry Pi")
        await tui.wait_idle(pilot, timeout=60)
        assert any("Running on pi" == (n.title or "") for n in notices)
    assert [r.target for r in seen if isinstance(r, RunStarted)] == ["pi"]
    assert [f.status for f in seen if isinstance(f, Finished)] == ["PASSED"]


async def test_unknown_host_key_and_password_are_asked_in_dialogs(tui, sshd, remote_dir,
                                                                  tmp_path: Path, monkeypatch):
    known = tmp_path / "known_hosts"
    known.write_text("")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # no ~/.ssh keys, no agent: only a password works
    monkeypatch.setenv("SSH_AUTH_SOCK", "")
    app = tui.make_app(tui.ws, tui.EXAMPLE, target="pi", data={"targets": {"pi": pi_table(
        sshd, remote_dir[0], known_hosts=str(known), key_file="")}})
    async with app.run_test(size=tui.SIZE) as pilot:
        question = await tui.wait_screen(pilot, ConfirmScreen, what="the host key question")
        assert "fingerprint" in question.question and "SHA256:" in question.question
        await pilot.press("y")
        secret = await tui.wait_screen(pilot, SecretScreen, what="the password question")
        box = secret.query_one(Input)
        assert box.has_focus
        assert box.password, "the password is not shown"
        box.value = sshd.password
        await pilot.press("enter")
        # The connect's own deadline (15 s + 5, the typing left out) decides; wait for
        # its outcome, whatever it is, and say it.
        await tui.wait_for(pilot, lambda: app.session.target is not None
                           and app.session.target.state in ("connected", "error"),
                           timeout=60, what="the connection's outcome")
        assert app.session.target.state == "connected", app.session.target.last_error
    assert f"[{sshd.host}]:{sshd.port}" in known.read_text()


async def test_pi_lost_mid_run_is_an_error_and_the_app_stays_up(tui, sshd, remote_dir,
                                                                tmp_path: Path, app_messages,
                                                                notices):
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md",
                                   "import time\nprint('before', flush=True)\ntime.sleep(60)",
                                   "print('back on local')")
    app = tui.make_app(ws, transcript, target="pi", data={
        "run": {"timeout": 90.0}, "targets": {"pi": pi_table(sshd, remote_dir[0])}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "sleep on the pi")
        await tui.wait_approval(pilot, timeout=30)
        await pilot.press("a")
        output = tui.main(app).query_one(OutputPane)
        await tui.wait_for(pilot, lambda: output.flush() or "before" in output.lines, timeout=30,
                           what="the program to start")
        progs = leftover_pids(remote_dir[1])
        assert len(progs) == 1
        sessions = session_processes(progs[0])
        assert sessions
        os.kill(sessions[0], signal.SIGKILL)  # the connection's sshd dies: the Pi is gone
        await tui.wait_idle(pilot, timeout=30)
        finished = [f for f in seen if isinstance(f, Finished)]
        assert [f.status for f in finished] == ["TARGET_ERROR"]
        assert any("lost" in n.message.lower() for n in notices)
        assert "before" in output.lines, "the output so far is kept"
        # Still usable: switch to this machine and go on in the same conversation.
        await pilot.press("ctrl+t")
        await tui.wait_for(pilot, lambda: app.session.target_name == "local", what="local")
        await tui.type_prompt(pilot, "run it here instead")
        await tui.wait_approval(pilot)
        await pilot.press("a")
        await tui.wait_idle(pilot)
        assert "back on local" in output.lines
    assert [f.status for f in seen if isinstance(f, Finished)] == ["TARGET_ERROR", "PASSED"]
