"""``verifybot run PROMPT --race A,B,C``: the first VERIFIED wins, the others stop.

Three contenders as a user would race them: a replay whose program takes two minutes,
the loopback API server's ``slow`` model (an answer that streams for a minute) and a
replay that is right in about a second. The losers must be stopped within 2 s of the
win (their program's process gone, their answer's stream hung up) and keep their
transcripts and history rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
from api_fixtures import KEY, KEY_ENV, llm_table
from apiserver import ApiServer
from cli_runs import answers, db_rows, python_answer
from project import verifybot_cmd

from verifybot_tui.core.store.transcript import read_record


def _sleepers(marker: str) -> list[int]:
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                cmd = Path(f"/proc/{d}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmd:
                out.append(int(d))
    return out


@pytest.mark.timeout(180)
def test_the_first_verified_wins_and_the_losers_stop_within_2_s(tmp_path: Path) -> None:
    server = ApiServer(key=KEY).start()
    try:
        (tmp_path / "slow.md").write_text(answers(python_answer(
            'import time\nprint("working", flush=True)\ntime.sleep(120)\nprint("RESULT=42")')))
        (tmp_path / "fast.md").write_text(answers(python_answer(
            'import time\ntime.sleep(1.5)\nprint("RESULT=42")')))
        (tmp_path / "config.toml").write_text(
            '[run]\ndefault_llm = "api"\n\n' + llm_table("api", "openai", server.url, "slow"))
        ws = tmp_path / "ws"
        proc = subprocess.Popen(
            [*verifybot_cmd(), "run", "print RESULT=42", "--race",
             "replay:slow.md,api,replay:fast.md", "--expect", "contains:RESULT=42",
             "--judge", "off", "--timeout", "200", "--max-retries", "0", "--json",
             "--workspace", str(ws), "--config", str(tmp_path / "config.toml")],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, KEY_ENV: KEY})
        err: list[str] = []
        threading.Thread(target=lambda: err.extend(iter(proc.stderr.readline, "")),
                         daemon=True).start()
        end = time.monotonic() + 120
        program_seen = False
        while not any("wins" in line for line in err):
            program_seen = program_seen or bool(_sleepers("time.sleep(120)")
                                                or _sleepers(str(ws / "runs")))
            assert proc.poll() is None and time.monotonic() < end, "".join(err)
            time.sleep(0.02)
        won = time.monotonic()
        assert server.chats(), "the API contender was asked"
        while _sleepers(str(ws / "runs")) and time.monotonic() < won + 2.0:
            time.sleep(0.02)
        assert not _sleepers(str(ws / "runs")), "a loser's program still runs 2 s after the win"
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == 0, "".join(err)
        assert program_seen
        result = json.loads(out)
        assert result["winner"] == "replay:fast.md"
        rows = {r["llm"]: r for r in result["contenders"]}
        assert rows["replay:fast.md"]["status"] == "VERIFIED"
        for loser in ("replay:slow.md", "api"):
            assert rows[loser]["status"] == "STOPPED", rows
            assert rows[loser]["stopped_after_win"] < 2.0, rows
        # The API's stream was hung up, not left to run its minute.
        deadline = time.monotonic() + 5
        while not server.hangups and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.hangups
        # Each contender keeps its transcript (with its run record) and its history row.
        statuses = dict(db_rows(ws, "SELECT llm, status FROM sessions"))
        assert statuses == {"replay:slow.md": "STOPPED", "api": "STOPPED",
                            "replay:fast.md": "VERIFIED"}
        for r in rows.values():
            record = read_record(ws / r["transcript"])
            assert record is not None and record["status"] == r["status"]
            assert record["session"] == r["session"]
    finally:
        server.stop()


def test_a_race_needs_two_llms(tmp_path: Path) -> None:
    done = subprocess.run([*verifybot_cmd(), "run", "x", "--race", "replay:a.md",
                           "--workspace", str(tmp_path / "ws")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "name two LLMs or more" in done.stderr
