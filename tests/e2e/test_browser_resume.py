"""The model that answered, and an answer that outlives the wait: `verifybot run` as a
subprocess against the test site, on chatgpt's legacy and app-shell pages and on
claude's 2025-26 and hub pages.

The model the page names for the answer (legacy: the answer's own metadata; app-shell:
the picker's label; claude: the picker's name, without its grey mode) is kept in the
transcript, the history and the --json record; one that is not the model asked for is a
notice, and an error with strict_model. An answer still being written at the answer
timeout keeps its conversation: `run --resume N` reopens it and reads that same answer
whole, without sending the prompt again.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import site_config_file
from chatsite import SCENARIOS, ChatSite
from project import EXAMPLES, verifybot_cmd

pytestmark = [pytest.mark.browser, pytest.mark.timeout(240)]

# What each page names the model by: legacy the answer's slug, app-shell the picker.
SEEN = {"legacy": "gpt-5-thinking", "app_shell": "GPT-5 Thinking"}


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*verifybot_cmd(), "run", *args, "--yes", "--json", "--workspace",
         str(tmp_path / "ws"), "--config", str(tmp_path / "config.toml"), "--judge", "off"],
        cwd=tmp_path, capture_output=True, text=True, timeout=200, env=dict(os.environ))


def history(tmp_path: Path, sql: str) -> list[tuple]:
    db = sqlite3.connect(tmp_path / "ws" / "history.db")
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


@pytest.mark.parametrize("page", ["legacy", "app_shell"])
def test_another_model_answering_is_recorded_and_refused_with_strict_model(
        chatsite: ChatSite, tmp_path: Path, page: str) -> None:
    chatsite.configure("answer", renderer=page, answered_by="GPT-5 Thinking")
    site_config_file(tmp_path, chatsite.url, model="GPT-5 Instant")
    proc = run(tmp_path, "Print a greeting", "--llm", "site", "--target", "local")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert chatsite.prompts[-1].model == "GPT-5 Instant"  # the one picked was asked for
    record = json.loads(proc.stdout)
    assert record["model"] == SEEN[page]
    assert f"the answer came from {SEEN[page]!r}, not from the model asked for " \
           f"('GPT-5 Instant')" in proc.stderr
    transcript = (tmp_path / "ws" / record["transcript"]).read_text(encoding="utf-8")
    assert f"- model that answered: {SEEN[page]}" in transcript
    assert history(tmp_path, "SELECT model FROM sessions") == [(SEEN[page],)]
    assert history(tmp_path, "SELECT model FROM prompts") == [(SEEN[page],)]

    # the model asked for answers: no notice
    chatsite.configure("answer", renderer=page, answered_by="GPT-5 Instant")
    proc = run(tmp_path, "Print a greeting", "--llm", "site", "--target", "local")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not from the model asked for" not in proc.stderr

    # strict_model: refused, exit 3, the answer still recorded with its model
    chatsite.configure("answer", renderer=page, answered_by="GPT-5 Thinking")
    site_config_file(tmp_path, chatsite.url, model="GPT-5 Instant", strict_model=True)
    proc = run(tmp_path, "Print a greeting", "--llm", "site", "--target", "local")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "LLM_ERROR"
    assert "strict_model = true refuses it" in record["message"]
    assert record["model"] == SEEN[page] and record["attempts"] == []
    assert history(tmp_path, "SELECT model FROM sessions ORDER BY id DESC LIMIT 1") == \
        [(SEEN[page],)]


@pytest.mark.parametrize("layout", ["2025", "hub"])
def test_another_claude_model_answering_is_recorded_and_refused_with_strict_model(
        chatsite: ChatSite, tmp_path: Path, layout: str) -> None:
    models = ("Sonnet 4.5", "Opus 4.1", "Haiku 4.5")
    chatsite.configure("answer", claude_layout=layout, models=models, answered_by="Opus 4.1")
    site_config_file(tmp_path, chatsite.claude_url, site="claude", model="Sonnet 4.5")
    proc = run(tmp_path, "Print a greeting", "--llm", "site", "--target", "local")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert chatsite.prompts[-1].model == "Sonnet 4.5"  # the one picked was asked for
    record = json.loads(proc.stdout)
    assert record["model"] == "Opus 4.1"  # the picker's name, not "Opus 4.1 Extended"
    assert "the answer came from 'Opus 4.1', not from the model asked for " \
           "('Sonnet 4.5')" in proc.stderr
    transcript = (tmp_path / "ws" / record["transcript"]).read_text(encoding="utf-8")
    assert "- model that answered: Opus 4.1" in transcript
    assert history(tmp_path, "SELECT model FROM prompts") == [("Opus 4.1",)]

    # the model asked for answers: recorded, no notice
    chatsite.configure("answer", claude_layout=layout, models=models)
    proc = run(tmp_path, "Print a greeting", "--llm", "site", "--target", "local")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["model"] == "Sonnet 4.5"
    assert "not from the model asked for" not in proc.stderr

    # strict_model: refused, exit 3, the answer still recorded with its model
    chatsite.configure("answer", claude_layout=layout, models=models, answered_by="Opus 4.1")
    site_config_file(tmp_path, chatsite.claude_url, site="claude", model="Sonnet 4.5",
                     strict_model=True)
    proc = run(tmp_path, "Print a greeting", "--llm", "site", "--target", "local")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "LLM_ERROR"
    assert "strict_model = true refuses it" in record["message"]
    assert record["model"] == "Opus 4.1" and record["attempts"] == []


@pytest.mark.parametrize("page", ["legacy", "app_shell"])
def test_an_answer_longer_than_the_timeout_is_resumed_and_read_whole(
        chatsite: ChatSite, tmp_path: Path, page: str) -> None:
    chatsite.configure("long_thinking", renderer=page)
    before = len(chatsite.prompts)
    site_config_file(tmp_path, chatsite.url, answer_timeout=2)
    proc = run(tmp_path, "Print a greeting after long thought", "--llm", "site",
               "--target", "local")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    sid = record["session"]
    assert "No complete answer from chatgpt within 2 s" in record["message"]
    assert f"verifybot run --resume {sid}" in record["message"]
    url = record["conversation_url"]
    assert url and "/c/" in url and "WEB:" not in url and "local-" not in url
    transcript = (tmp_path / "ws" / record["transcript"]).read_text(encoding="utf-8")
    assert f"- conversation: {url}" in transcript
    assert history(tmp_path, "SELECT pending, answer FROM prompts") == [(1, None)]

    # an LLM that cannot wait again (a replay) is refused, the answer stays pending
    proc = run(tmp_path, "--resume", str(sid), "--llm", f"replay:{EXAMPLES / 'word_count.md'}")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "cannot wait for it again" in json.loads(proc.stdout)["message"]
    assert history(tmp_path, "SELECT pending FROM prompts") == [(1,)]

    # later, with room to wait: the same conversation, the same answer, nothing re-sent
    site_config_file(tmp_path, chatsite.url, answer_timeout=60)
    proc = run(tmp_path, "--resume", str(sid))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hello from the test site" in proc.stderr + proc.stdout
    record = json.loads(proc.stdout)
    assert record["session"] == sid and record["status"] == "PASSED"
    assert record["conversation_url"] == url
    assert len(chatsite.prompts) == before + 1  # asked once, in all
    assert history(tmp_path, "SELECT pending, answer FROM prompts") == \
        [(0, SCENARIOS["long_thinking"].replies[0].markdown)]
    transcript = (tmp_path / "ws" / record["transcript"]).read_text(encoding="utf-8")
    assert "## Waiting again for the pending answer" in transcript

    # nothing pending any more: --resume without a prompt is a usage error
    proc = run(tmp_path, "--resume", str(sid))
    assert proc.returncode == 2
    assert f"session {sid} has no answer still being written" in proc.stderr
