"""What a session's row keeps besides its last status (issue 10 item 7).

A success stays on record when a later follow-up fails, and a prompt that never
reached the LLM (target or LLM down before sending) is told apart from a failed
session: in history.db (old files migrated), in `verifybot history` and its JSON.
Real parts: history.db, the replay backend, the local target, the CLI as a
subprocess against a closed loopback port.
"""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

from old_history import old_db
from project import verifybot_cmd

from verifybot_tui.core.loop.events import Finished
from verifybot_tui.core.loop.verify_loop import VerifyLoop
from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.core.store.history import (
    SCHEMA_VERSION,
    History,
    kept_success,
    status_text,
    unanswered,
)
from verifybot_tui.llm.replay import ReplayLLM
from verifybot_tui.targets.local.target import LocalTarget

# history.db as versions before this one wrote it (no success_*, no llm_reached).


def test_an_old_history_db_is_migrated_keeping_every_row(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    old_db(ws)
    h = History(ws)
    rows = {s["slug"]: s for s in h.sessions()}
    assert sorted(rows) == ["cut_answer", "followed_up", "legacy_ok", "llm_down", "pi_down"]
    assert len(h.attempts(1)) == 3 and h.prompts(4)[0]["answer"] == "half an answer"
    assert (rows["followed_up"]["success_status"], rows["followed_up"]["success_attempt"]) == \
        ("VERIFIED", 2)
    assert status_text(rows["followed_up"]) == "VERIFIED (attempt 2), then follow-up FAILED"
    assert rows["legacy_ok"]["success_status"] == "PASSED", "legacy SUCCESS reads as PASSED"
    assert status_text(rows["legacy_ok"]) == "PASSED"
    assert [rows[s]["llm_reached"] for s in ("pi_down", "llm_down", "cut_answer")] == \
        [False, False, True]
    assert status_text(rows["pi_down"]) == "NOT SENT (target down)"
    assert status_text(rows["llm_down"]) == "NO ANSWER (LLM error)"
    assert status_text(rows["cut_answer"]) == "LLM_ERROR", "it answered half: a real error"
    assert h.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert "original" in {r[1] for r in h.db.execute("PRAGMA table_info(attempts)")}
    h.close()
    again = History(ws)  # a second open changes nothing
    assert {s["slug"]: s for s in again.sessions()} == rows
    again.close()


def make_loop(ws: Path, transcript: Path) -> VerifyLoop:
    cfg = parse_config({"run": {"workspace": str(ws)}})
    return VerifyLoop(config=cfg, llm=ReplayLLM(transcript, delay=0), history=History(ws),
                      target=LocalTarget(cfg.targets["local"], ws), workspace=ws,
                      auto_accept=True, max_retries=0)


def write_answers(path: Path, *codes: str) -> Path:
    path.write_text("\n".join(f"## Answer {i}\n\n````markdown\n```python\n{code}\n```\n````\n"
                              for i, code in enumerate(codes, 1)))
    return path


async def statuses(loop: VerifyLoop, prompt: str, **kw: object) -> list[str]:
    return [str(ev.status) async for ev in loop.events(prompt, **kw) if isinstance(ev, Finished)]


async def test_a_follow_up_that_fails_keeps_the_success_before_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    t = write_answers(tmp_path / "t.md", "print('ok')", "raise SystemExit(1)")
    loop = make_loop(ws, t)
    assert await statuses(loop, "print ok") == ["PASSED"]
    (row,) = loop.history.sessions()
    assert row["llm_reached"] is True and row["success_status"] == "PASSED"
    assert kept_success(row) == "", "nothing to keep apart while it still stands"
    assert await statuses(loop, "now fail", new_chat=False) == ["FAILED"]
    (row,) = loop.history.sessions()
    assert (row["status"], row["success_status"], row["success_attempt"]) == \
        ("FAILED", "PASSED", 1)
    assert status_text(row) == "PASSED (attempt 1), then follow-up FAILED"
    proc = subprocess.run([*verifybot_cmd(), "history", "--workspace", str(ws)],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "PASSED (attempt 1), then follow-up FAILED" in proc.stdout.splitlines()[0]
    data = json.loads(subprocess.run(
        [*verifybot_cmd(), "history", "--json", "--workspace", str(ws)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path).stdout)
    assert (data[0]["status"], data[0]["success_status"], data[0]["llm_reached"]) == \
        ("FAILED", "PASSED", True)


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_prompts_that_never_reached_the_llm_are_not_failed_sessions(tmp_path: Path) -> None:
    port = closed_port()
    (tmp_path / "config.toml").write_text(
        '[run]\nworkspace = "ws"\n\n'
        f'[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\nport = {port}\nuser = "nobody"\n\n'
        '[llm.down]\nkind = "openai"\nmodel = "m"\napi_key_env = "VB_TEST_NO_KEY"\n'
        f'base_url = "http://127.0.0.1:{port}/v1"\n')
    t = write_answers(tmp_path / "t.md", "print('never')")
    env_cmd = [*verifybot_cmd(), "run", "--config", str(tmp_path / "config.toml"), "--yes"]
    env = {"VB_TEST_NO_KEY": "sk-test", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    down_target = subprocess.run([*env_cmd, "--target", "pi", "--llm", f"replay:{t}",
                                  "read the sensor"], capture_output=True, text=True,
                                 timeout=120, cwd=tmp_path, env=env)
    assert down_target.returncode == 4, down_target.stderr
    down_llm = subprocess.run([*env_cmd, "--target", "local", "--llm", "down", "count words"],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path,
                              env=env)
    assert down_llm.returncode == 3, down_llm.stderr
    listing = subprocess.run([*verifybot_cmd(), "history", "--config",
                              str(tmp_path / "config.toml")], capture_output=True, text=True,
                             timeout=60, cwd=tmp_path, env=env)
    lines = listing.stdout.splitlines()
    assert "NO ANSWER (LLM error)" in lines[0] and "count words" in lines[0], lines
    assert "NOT SENT (target down)" in lines[1] and "read the sensor" in lines[1], lines
    assert "FAILED" not in listing.stdout
    h = History(tmp_path / "ws")
    rows = h.sessions()
    assert [(r["status"], r["llm_reached"]) for r in rows] == \
        [("LLM_ERROR", False), ("TARGET_ERROR", False)]
    assert [unanswered(r) for r in rows] == ["no answer: LLM error", "not sent: target down"]
    h.close()
