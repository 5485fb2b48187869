"""A workspace from someone else (a shared disk, an unpacked archive): opening it, even
with ``verifybot history``, kills nothing and writes nowhere its files point. Its
``runs/.live`` records once had pids SIGKILLed and "1" written through a
``cgroup.kill`` symlink (as root: any process, any file). Tried as root and as an
ordinary user, each on a workspace the other one made.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_runs import python_answer, replay
from other_users import NOBODY, USER_IDS, USERS, give, open_folder, verifybot_as
from proc_helpers import alive, kill_all

from verifybot_tui.targets import live_runs


def _bystander(uid: int) -> subprocess.Popen[bytes]:
    switch = [] if uid == 0 else ["setpriv", f"--reuid={uid}", f"--regid={uid}",
                                  "--clear-groups"]
    return subprocess.Popen([*switch, "sleep", "120"], start_new_session=True)


def _made_by(owner: int, home: Path) -> Path:
    """A real workspace (one run) made by ``owner``."""
    llm = replay(home, python_answer("print('hello')"), name=f"answers-{owner}.md")
    ws = home / f"ws-{owner}"
    give(owner, home)
    done = verifybot_as(owner, "run", "hello", "--llm", llm, "--target", "local", "--yes",
                        "--max-retries", "0", "--workspace", str(ws), cwd=home)
    assert done.returncode == 0, done.stdout + done.stderr
    return ws


def _plant(ws: Path, victim: Path, pid: int) -> list[Path]:
    """Records naming ``pid`` as group and owner's child, and a fake cgroup whose
    ``cgroup.kill`` is a link to ``victim`` and whose ``cgroup.procs`` lists ``pid``."""
    fake = ws / "runs" / "verifybot-1-1"
    fake.mkdir(parents=True, exist_ok=True)
    (fake / "cgroup.procs").write_text(f"{pid}\n")
    (fake / "cgroup.kill").symlink_to(victim)
    live = ws / live_runs.LIVE_DIR
    live.mkdir(parents=True, exist_ok=True)
    notes = []
    for i, cgroup in enumerate([str(fake), None]):
        note = live / f"1-{i}.json"
        note.write_text(json.dumps({"owner": 999999, "owner_start": 1, "pgid": pid,
                                    "leader_start": None, "cgroup": cgroup,
                                    "token": "1-1-0123456789abcdef"}))
        notes.append(note)
    return notes


@pytest.mark.parametrize("user", USERS, ids=USER_IDS)
def test_history_in_a_workspace_from_others_kills_nothing_and_writes_nowhere(user) -> None:
    other = NOBODY if user == 0 else 0
    with open_folder() as home:
        ws = _made_by(other, home)
        victim = home / "victim.txt"
        victim.write_text("untouched\n")
        os.chmod(victim, 0o666)  # writable by anyone: only a followed link would change it
        bystander = _bystander(user)
        try:
            notes = _plant(ws, victim, bystander.pid)
            give(other, ws)
            _shared(ws)
            done = verifybot_as(user, "history", "--workspace", str(ws), cwd=home)
            assert done.returncode == 0, done.stdout + done.stderr
            assert "hello" in done.stdout  # the history is there to browse
            assert alive(bystander.pid) and bystander.poll() is None
            assert victim.read_text() == "untouched\n"
            assert all(n.exists() for n in notes)  # not ours to sweep
            llm = replay(home, python_answer("print('mine')"), name="mine.md")
            give(user, home / "mine.md")
            ran = verifybot_as(user, "run", "mine", "--llm", llm, "--target", "local",
                               "--yes", "--workspace", str(ws), cwd=home)
            assert ran.returncode == 2, ran.stdout + ran.stderr
            assert f"workspace {ws} belongs to another user (uid {other})" in ran.stderr
            assert "runs nothing in it" in ran.stderr and "Traceback" not in ran.stderr
            assert not list((ws / "programs").glob("mine*"))
            assert alive(bystander.pid) and victim.read_text() == "untouched\n"
        finally:
            kill_all([bystander.pid])
            bystander.wait()


def _shared(ws: Path) -> None:
    """As on a shared disk: everyone may read, enter and write."""
    for p in [ws, *ws.rglob("*")]:
        if not p.is_symlink():
            os.chmod(p, os.stat(p).st_mode | 0o666 | (0o111 if p.is_dir() else 0))


@pytest.mark.parametrize("user", USERS, ids=USER_IDS)
def test_a_programs_link_does_not_move_where_answers_are_saved(user) -> None:
    with open_folder() as home:
        ws = _made_by(user, home)
        elsewhere = home / "elsewhere"
        elsewhere.mkdir()
        os.chmod(elsewhere, 0o777)
        saved = sorted(p.name for p in (ws / "programs").iterdir())
        (ws / "programs").rename(ws / "programs.old")
        (ws / "programs").symlink_to(elsewhere)
        give(user, ws)
        llm = replay(home, python_answer("print('again')"), name="again.md")
        give(user, home / "again.md")
        ran = verifybot_as(user, "run", "again", "--llm", llm, "--target", "local", "--yes",
                           "--workspace", str(ws), cwd=home)
        assert ran.returncode == 2, ran.stdout + ran.stderr
        assert f"workspace folder {ws / 'programs'} is a symlink" in ran.stderr
        assert list(elsewhere.iterdir()) == []
        assert sorted(p.name for p in (ws / "programs.old").iterdir()) == saved


def test_a_record_of_ours_names_no_pid_and_no_foreign_cgroup(tmp_path: Path) -> None:
    """Even a record this user's VerifyBot could have written (ours, 0600 in 0700) leads
    to no pid it names and to no cgroup outside the base VerifyBot makes them in."""
    from verifybot_tui.core.store.workspace import private_dir, write_private

    ws = tmp_path / "ws"
    victim = tmp_path / "victim.txt"
    victim.write_text("untouched\n")
    bystander = _bystander(0)
    try:
        notes = _plant(ws, victim, bystander.pid)
        private_dir(ws / live_runs.LIVE_DIR)
        for note in notes:
            text = note.read_text()
            note.unlink()
            write_private(note, text)
        assert live_runs.sweep_live(ws) == []
        assert bystander.poll() is None and victim.read_text() == "untouched\n"
        assert not any(n.exists() for n in notes)  # ours: swept
    finally:
        kill_all([bystander.pid])
        bystander.wait()
