"""A history.db as an older VerifyBot wrote it (schema before v1), for the migration tests."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

OLD_SCHEMA = """
CREATE TABLE sessions (id INTEGER PRIMARY KEY, slug TEXT NOT NULL, prompt TEXT NOT NULL,
    target TEXT NOT NULL, llm TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'RUNNING',
    started_at REAL NOT NULL, finished_at REAL, conversation_url TEXT, transcript TEXT,
    pid INTEGER, host TEXT);
CREATE TABLE prompts (id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL, kind TEXT NOT NULL,
    text TEXT NOT NULL, answer TEXT, sent_at REAL NOT NULL, answered_at REAL);
CREATE TABLE attempts (id INTEGER PRIMARY KEY, session_id INTEGER NOT NULL, n INTEGER NOT NULL,
    version INTEGER NOT NULL, prompt_id INTEGER, files TEXT NOT NULL DEFAULT '[]', entry TEXT,
    target TEXT, decision TEXT, note TEXT, status TEXT NOT NULL DEFAULT 'PENDING', verdict TEXT,
    reason TEXT, exit_code INTEGER, output_file TEXT, started_at REAL NOT NULL,
    finished_at REAL);
"""


def old_db(ws: Path) -> None:
    """Five sessions as an older version left them."""
    ws.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(ws / "history.db")
    db.executescript(OLD_SCHEMA)
    now = time.time()
    for sid, slug, status in [(1, "followed_up", "FAILED"), (2, "pi_down", "TARGET_ERROR"),
                              (3, "llm_down", "LLM_ERROR"), (4, "cut_answer", "LLM_ERROR"),
                              (5, "legacy_ok", "SUCCESS")]:
        db.execute("INSERT INTO sessions (id, slug, prompt, target, llm, status, started_at)"
                   " VALUES (?, ?, ?, 'local', 'replay', ?, ?)", (sid, slug, slug, status, now))
    db.execute("INSERT INTO prompts (session_id, kind, text, answer, sent_at) VALUES "
               "(1, 'initial', 'p', 'a', 0), (3, 'initial', 'p', NULL, 0), "
               "(4, 'initial', 'p', 'half an answer', 0), (5, 'initial', 'p', 'a', 0)")
    for sid, n, status in [(1, 1, "FAILED"), (1, 2, "VERIFIED"), (1, 3, "FAILED"),
                           (5, 1, "SUCCESS")]:
        db.execute("INSERT INTO attempts (session_id, n, version, status, started_at) "
                   "VALUES (?, ?, ?, ?, 0)", (sid, n, n, status))
    db.commit()
    db.close()
