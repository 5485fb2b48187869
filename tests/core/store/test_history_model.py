"""The model that answered and a pending answer in history.db: an older file (layout 2)
gains the columns on open and keeps its rows; the session shows its last model; a
pending answer is found for a resume, and is no longer pending once answered."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from verifybot_tui.core.loop.steps.asking import same_model
from verifybot_tui.core.store.history import SCHEMA_VERSION, History

# history.db as layout 2 wrote it (before the model and pending columns).
_V2 = """
CREATE TABLE sessions (id INTEGER PRIMARY KEY, slug TEXT NOT NULL, prompt TEXT NOT NULL,
    target TEXT NOT NULL, llm TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'RUNNING',
    started_at REAL NOT NULL, finished_at REAL, conversation_url TEXT, transcript TEXT,
    pid INTEGER, host TEXT, success_status TEXT, success_attempt INTEGER,
    llm_reached INTEGER NOT NULL DEFAULT 0);
CREATE TABLE prompts (id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL, kind TEXT NOT NULL,
    text TEXT NOT NULL, answer TEXT, sent_at REAL NOT NULL, answered_at REAL);
CREATE TABLE attempts (id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL, n INTEGER NOT NULL,
    version INTEGER NOT NULL, prompt_id INTEGER, files TEXT NOT NULL DEFAULT '[]', entry TEXT,
    target TEXT, decision TEXT, note TEXT, status TEXT NOT NULL DEFAULT 'PENDING', verdict TEXT,
    reason TEXT, exit_code INTEGER, output_file TEXT, original TEXT, started_at REAL NOT NULL,
    finished_at REAL);
INSERT INTO sessions (slug, prompt, target, llm, status, started_at, llm_reached)
    VALUES ('old', 'an old prompt', 'local', 'chatgpt', 'PASSED', 1.0, 1);
INSERT INTO prompts (session_id, kind, text, answer, sent_at) VALUES (1, 'initial', 'p', 'a', 1.0);
PRAGMA user_version = 2;
"""


def test_an_older_file_gains_the_columns_and_keeps_its_rows(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "history.db")
    db.executescript(_V2)
    db.close()
    h = History(tmp_path)
    try:
        assert h.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
        old = h.session(1)
        assert old is not None and old["prompt"] == "an old prompt" and old["model"] is None
        assert h.prompts(1)[0]["answer"] == "a" and h.prompts(1)[0]["pending"] == 0
        assert h.pending_prompt(1) is None
    finally:
        h.close()


def test_the_model_per_answer_and_a_pending_answer(tmp_path: Path) -> None:
    h = History(tmp_path)
    try:
        sid = h.start_session(slug="s", prompt="p", target="local", llm="site", transcript="t")
        first = h.add_prompt(sid, "initial", "first")
        h.set_answer(first, "answer 1", "gpt-5-thinking")
        second = h.add_prompt(sid, "feedback", "second")
        h.set_pending(second)
        pending = h.pending_prompt(sid)
        assert pending is not None and pending["id"] == second and pending["text"] == "second"
        h.set_answer(second, "answer 2", "GPT-5 Instant")
        assert h.pending_prompt(sid) is None
        assert [(p["model"], p["pending"]) for p in h.prompts(sid)] == \
            [("gpt-5-thinking", 0), ("GPT-5 Instant", 0)]
        session = h.session(sid)
        assert session is not None and session["model"] == "GPT-5 Instant"
    finally:
        h.close()


def test_model_names_compare_as_pages_and_apis_spell_them() -> None:
    assert same_model("gpt-5-thinking", "GPT-5 Thinking")
    assert same_model("gpt-5-6-thinking", "GPT-5.6 Thinking")
    assert same_model("gpt-4o-2024-08-06", "gpt-4o")  # a dated version of it
    assert not same_model("gpt-5-thinking", "GPT-5 Instant")
    assert not same_model("gpt-4o-mini", "gpt-4o")
    assert not same_model("gpt-5", "GPT-5 Thinking")
