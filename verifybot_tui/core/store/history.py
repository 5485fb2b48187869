"""history.db: the SQLite index of sessions, prompts and attempts.

WAL mode and one short transaction per write mean a crash or kill at any
moment leaves everything already written readable, and the history pane can
read while a run writes. A session still marked running whose process is gone
is marked interrupted at the next start, with a note in its transcript.

A session's ``status`` is how it ended last. Two more facts are stored beside
it, because the status alone misleads: ``success_status``/``success_attempt``
keep the last success (VERIFIED or PASSED) the session reached, so a follow-up
that failed later does not erase that the program once worked; ``llm_reached``
is 1 once the LLM answered anything in the session, so a session whose prompt
got nothing from it (the target was down before sending, or the LLM gave no
answer at all) is not shown as a failed session. Older files gain these
columns on open (``_migrate``), filled in from the rows they already hold.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import time
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.liveness import pid_alive
from verifybot_tui.core.base.outcome import Status
from verifybot_tui.core.store.workspace import made_by_others

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL,
    prompt TEXT NOT NULL,
    target TEXT NOT NULL,
    llm TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'RUNNING',
    started_at REAL NOT NULL,
    finished_at REAL,
    conversation_url TEXT,
    transcript TEXT,
    pid INTEGER,
    host TEXT,
    success_status TEXT,
    success_attempt INTEGER,
    llm_reached INTEGER NOT NULL DEFAULT 0,
    model TEXT
);
CREATE TABLE IF NOT EXISTS prompts (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    kind TEXT NOT NULL,
    text TEXT NOT NULL,
    answer TEXT,
    sent_at REAL NOT NULL,
    answered_at REAL,
    model TEXT,
    pending INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id),
    n INTEGER NOT NULL,
    version INTEGER NOT NULL,
    prompt_id INTEGER REFERENCES prompts(id),
    files TEXT NOT NULL DEFAULT '[]',
    entry TEXT,
    target TEXT,
    decision TEXT,
    note TEXT,
    status TEXT NOT NULL DEFAULT 'PENDING',
    verdict TEXT,
    reason TEXT,
    exit_code INTEGER,
    output_file TEXT,
    original TEXT,
    started_at REAL NOT NULL,
    finished_at REAL
);
CREATE INDEX IF NOT EXISTS attempts_session ON attempts(session_id);
CREATE INDEX IF NOT EXISTS prompts_session ON prompts(session_id);
"""

# Comparisons (``verifybot compare``): one row per compare, one per cell. A cell runs
# in its own workspace folder under the compare's folder, so ``session`` is the id in
# that folder's history.db. New tables only (CREATE IF NOT EXISTS): an older file
# gains them on open, and no session column changes.
COMPARE_SCHEMA = """
CREATE TABLE IF NOT EXISTS comparisons (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    out_dir TEXT NOT NULL,
    recipes TEXT NOT NULL DEFAULT '[]',
    llms TEXT NOT NULL DEFAULT '[]',
    repeat INTEGER NOT NULL DEFAULT 1,
    cells INTEGER NOT NULL DEFAULT 0,
    verified INTEGER NOT NULL DEFAULT 0,
    interrupted INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS compare_cells (
    id INTEGER PRIMARY KEY,
    compare_id INTEGER NOT NULL REFERENCES comparisons(id),
    recipe TEXT NOT NULL,
    llm TEXT NOT NULL,
    run INTEGER NOT NULL,
    status TEXT NOT NULL,
    verified_at INTEGER,
    session INTEGER,
    workspace TEXT
);
CREATE INDEX IF NOT EXISTS compare_cells_compare ON compare_cells(compare_id);
"""

_LIVE = ("RUNNING", "PENDING")
# PRAGMA user_version: 0 = before success_status and llm_reached; 1 = before
# attempts.original (the LLM's version an attempt's hand edit replaced, as JSON
# {"version": n, "files": [...]}, so it can be compared with the edit); 2 = before
# the model columns (sessions.model, prompts.model) and prompts.pending
SCHEMA_VERSION = 3
_OK = ("VERIFIED", "PASSED", "SUCCESS")
# A session that ended on these with no word from the LLM is not a failed session:
# the target was down before the prompt went out, or the LLM gave no answer at all
# (not reachable, key refused, not logged in, limit reached).
_UNANSWERED = {"TARGET_ERROR": "not sent: target down", "LLM_ERROR": "no answer: LLM error"}

# Version 0 -> 1. Old rows: the last attempt that succeeded is the kept success
# (legacy SUCCESS reads as PASSED); the LLM was reached unless the session ended
# on a target or LLM error with no answer and no attempt (what a down target or
# LLM left behind before this column existed).
_MIGRATE_1 = """
ALTER TABLE sessions ADD COLUMN success_status TEXT;
ALTER TABLE sessions ADD COLUMN success_attempt INTEGER;
ALTER TABLE sessions ADD COLUMN llm_reached INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET
    success_attempt = (SELECT MAX(a.n) FROM attempts a WHERE a.session_id = sessions.id
                       AND a.status IN ('VERIFIED', 'PASSED', 'SUCCESS')),
    llm_reached = CASE WHEN status NOT IN ('TARGET_ERROR', 'LLM_ERROR')
        OR EXISTS (SELECT 1 FROM prompts p WHERE p.session_id = sessions.id
                   AND p.answer IS NOT NULL)
        OR EXISTS (SELECT 1 FROM attempts a WHERE a.session_id = sessions.id)
        THEN 1 ELSE 0 END;
UPDATE sessions SET success_status = (
    SELECT CASE a.status WHEN 'SUCCESS' THEN 'PASSED' ELSE a.status END FROM attempts a
    WHERE a.session_id = sessions.id AND a.n = sessions.success_attempt)
    WHERE success_attempt IS NOT NULL;
"""


def kept_success(session: dict[str, Any]) -> str:
    """"VERIFIED (attempt 2)" when the session once succeeded but ended otherwise since."""
    status = (session.get("status") or "").upper()
    kept = session.get("success_status")
    if not kept or status in _OK or status in _LIVE:
        return ""
    return f"{kept} (attempt {session.get('success_attempt')})"


def unanswered(session: dict[str, Any]) -> str:
    """"not sent: target down" / "no answer: LLM error" for a session whose prompt got
    nothing from the LLM, or "" when it answered (or the session still runs)."""
    if session.get("llm_reached"):
        return ""
    return _UNANSWERED.get((session.get("status") or "").upper(), "")


def status_text(session: dict[str, Any]) -> str:
    """A session's status as the listings print it: the last success kept, a prompt
    that never reached the LLM told apart from a failure."""
    status = session.get("status") or ""
    if kept := kept_success(session):
        return f"{kept}, then follow-up {status}"
    if why := unanswered(session):
        what, reason = why.split(": ", 1)
        return f"{what.upper()} ({reason})"
    return status


def _row(row: sqlite3.Row) -> dict[str, Any]:
    """A row as a dict, its status under today's name (legacy SUCCESS reads as PASSED)."""
    d = dict(row)
    if d.get("status"):
        d["status"] = str(Status.parse(d["status"]))
    if "llm_reached" in d:
        d["llm_reached"] = bool(d["llm_reached"])
    return d


def _wal(db: sqlite3.Connection, patience: float = 10.0) -> None:
    """Put the file in WAL mode. SQLite answers "database is locked" to this pragma at
    once, without its busy timeout, while another process opening a new history.db
    does the same (four `verifybot run` started together): try again for a while."""
    deadline = time.monotonic() + patience
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


class History:
    def __init__(self, workspace: Path) -> None:
        self.path = workspace / "history.db"
        # A workspace another user made is browsed as it is: nothing written, nothing
        # swept (its paths and pids are not this user's to act on).
        self.read_only = made_by_others(workspace)
        if self.read_only:
            self._open_read_only(workspace)
            return
        try:
            workspace.mkdir(parents=True, exist_ok=True, mode=0o700)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
            self.db = sqlite3.connect(self.path, timeout=10, isolation_level=None,
                                      check_same_thread=False)
            _wal(self.db)
        except (OSError, sqlite3.Error) as e:
            raise ConfigError(f"workspace {workspace}: cannot open {self.path.name}: "
                              f"{getattr(e, 'strerror', None) or e}. Give a folder you can "
                              "write to with --workspace DIR or [run] workspace") from None
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA synchronous=NORMAL")
        self._migrate()
        self.db.executescript(SCHEMA)
        self.db.executescript(COMPARE_SCHEMA)

    def _open_read_only(self, workspace: Path) -> None:
        """Read-only (``mode=ro``: the write-ahead log read too where SQLite may map it),
        else as a fixed file (``immutable=1``: what was checkpointed)."""
        uri = self.path.absolute().as_uri()
        for how in ("mode=ro", "immutable=1"):
            try:
                self.db = sqlite3.connect(f"{uri}?{how}", uri=True, isolation_level=None,
                                          check_same_thread=False)
                self.db.execute("SELECT count(*) FROM sessions").fetchone()
                break
            except sqlite3.Error as e:
                error = e
        else:
            raise ConfigError(f"workspace {workspace} (another user's): cannot read "
                              f"{self.path.name}: {error}") from None
        self.db.row_factory = sqlite3.Row

    def _migrate(self) -> None:
        """Bring an older history.db up to SCHEMA_VERSION, keeping every row it holds.

        The check runs inside the write lock, so two processes opening an old file
        at once migrate it once.
        """
        if self.db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
            columns = {r[1] for r in self.db.execute("PRAGMA table_info(sessions)")}
            if columns and "llm_reached" not in columns:  # no columns: a new file
                for statement in _MIGRATE_1.split(";"):
                    if statement.strip():
                        self.db.execute(statement)
            attempt_columns = {r[1] for r in self.db.execute("PRAGMA table_info(attempts)")}
            if attempt_columns and "original" not in attempt_columns:
                self.db.execute("ALTER TABLE attempts ADD COLUMN original TEXT")
            # 2 -> 3: the model that answered (as the page or the API named it), per
            # answer and the session's last; an answer still being written when the
            # wait ended (its conversation kept, to be waited for again on resume).
            if columns and "model" not in columns:
                self.db.execute("ALTER TABLE sessions ADD COLUMN model TEXT")
            prompt_columns = {r[1] for r in self.db.execute("PRAGMA table_info(prompts)")}
            if prompt_columns and "model" not in prompt_columns:
                self.db.execute("ALTER TABLE prompts ADD COLUMN model TEXT")
            if prompt_columns and "pending" not in prompt_columns:
                self.db.execute("ALTER TABLE prompts ADD COLUMN pending INTEGER NOT NULL "
                                "DEFAULT 0")
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            self.db.execute("COMMIT")
        except sqlite3.Error as e:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            raise ConfigError(f"cannot update {self.path} to this version's layout: {e}. "
                              "It is unchanged; move it aside to start a new history") from None

    # -- writing ------------------------------------------------------------

    def _exec(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        cur = self.db.execute(sql, args)
        return cur.lastrowid or 0

    def mark_interrupted(self) -> list[dict[str, Any]]:
        """Sessions left running by a process that is gone: mark them interrupted."""
        here = socket.gethostname()
        rows = self.db.execute(
            "SELECT * FROM sessions WHERE status = 'RUNNING'").fetchall()
        # Another host's session (a shared folder) is only judged gone after a day.
        gone = [dict(r) for r in rows
                if (r["host"] == here and not pid_alive(r["pid"]))
                or (r["host"] != here and time.time() - r["started_at"] > 24 * 3600)]
        for s in gone:
            self._exec("UPDATE sessions SET status='INTERRUPTED', finished_at=? WHERE id=?",
                       (time.time(), s["id"]))
            self._exec("UPDATE attempts SET status='INTERRUPTED', finished_at=? "
                       "WHERE session_id=? AND status IN ('PENDING', 'RUNNING')",
                       (time.time(), s["id"]))
        return gone

    def start_session(self, *, slug: str, prompt: str, target: str, llm: str,
                      transcript: str) -> int:
        return self._exec(
            "INSERT INTO sessions (slug, prompt, target, llm, started_at, transcript, pid, host)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (slug, prompt, target, llm, time.time(), transcript, os.getpid(),
             socket.gethostname()))

    def reopen_session(self, session_id: int) -> None:
        self._exec("UPDATE sessions SET status='RUNNING', finished_at=NULL, pid=?, host=? "
                   "WHERE id=?", (os.getpid(), socket.gethostname(), session_id))

    def set_conversation(self, session_id: int, url: str | None) -> None:
        if url:
            self._exec("UPDATE sessions SET conversation_url=? WHERE id=?", (url, session_id))

    def close_open_attempts(self, session_id: int, status: str) -> None:
        """Attempts still PENDING or RUNNING when their session ended take its status
        (ERROR for an internal error, INTERRUPTED, ...)."""
        final = status if status not in ("PASSED", "VERIFIED", "FAILED") else "ERROR"
        self._exec("UPDATE attempts SET status=?, finished_at=? WHERE session_id=? AND "
                   "status IN ('PENDING', 'RUNNING')", (final, time.time(), session_id))

    def finish_session(self, session_id: int, status: str) -> None:
        """The session's last status; a success is also kept apart, with its attempt, so a
        later follow-up that fails does not erase it."""
        if Status.parse(status) in _OK:
            self._exec(
                "UPDATE sessions SET status=?, finished_at=?, success_status=?, success_attempt="
                "(SELECT MAX(n) FROM attempts WHERE session_id=?) WHERE id=?",
                (status, time.time(), str(Status.parse(status)), session_id, session_id))
        else:
            self._exec("UPDATE sessions SET status=?, finished_at=? WHERE id=?",
                       (status, time.time(), session_id))

    def llm_reached(self, session_id: int) -> None:
        """The LLM answered something in this session: its prompt was not lost on the way."""
        self._exec("UPDATE sessions SET llm_reached=1 WHERE id=?", (session_id,))

    def add_prompt(self, session_id: int, kind: str, text: str) -> int:
        return self._exec("INSERT INTO prompts (session_id, kind, text, sent_at) VALUES (?,?,?,?)",
                          (session_id, kind, text, time.time()))

    def set_answer(self, prompt_id: int, answer: str, model: str = "") -> None:
        """The answer to a prompt (and the model that wrote it, when known: the session's
        last model too); an answer waited for on resume is no longer pending."""
        self._exec("UPDATE prompts SET answer=?, answered_at=?, model=?, pending=0 WHERE id=?",
                   (answer, time.time(), model or None, prompt_id))
        if model:
            self._exec("UPDATE sessions SET model=? WHERE id=(SELECT session_id FROM prompts "
                       "WHERE id=?)", (model, prompt_id))

    def set_pending(self, prompt_id: int) -> None:
        """The answer was still being written when the wait ended; its conversation is
        kept, and resuming the session waits for this same answer instead of asking."""
        self._exec("UPDATE prompts SET pending=1 WHERE id=?", (prompt_id,))

    def pending_prompt(self, session_id: int) -> dict[str, Any] | None:
        """The session's last prompt, when its answer is pending (else None)."""
        row = self.db.execute("SELECT * FROM prompts WHERE session_id=? ORDER BY id DESC "
                              "LIMIT 1", (session_id,)).fetchone()
        return dict(row) if row and row["pending"] and row["answer"] is None else None

    def add_attempt(self, session_id: int, *, n: int, version: int, prompt_id: int | None,
                    files: list[str], entry: str, target: str) -> int:
        return self._exec(
            "INSERT INTO attempts (session_id, n, version, prompt_id, files, entry, target,"
            " started_at) VALUES (?,?,?,?,?,?,?,?)",
            (session_id, n, version, prompt_id, json.dumps(files), entry, target, time.time()))

    def update_attempt(self, attempt_id: int, **fields: Any) -> None:
        for key in ("files", "original"):
            if key in fields:
                fields[key] = json.dumps(fields[key])
        cols = ", ".join(f"{k}=?" for k in fields)
        self._exec(f"UPDATE attempts SET {cols} WHERE id=?", (*fields.values(), attempt_id))

    # -- reading ------------------------------------------------------------

    def sessions(self, limit: int = 200) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT s.*, (SELECT COUNT(*) FROM attempts a WHERE a.session_id = s.id) AS attempts"
            " FROM sessions s ORDER BY s.id DESC LIMIT ?", (limit,)).fetchall()
        return [_row(r) for r in rows]

    def session(self, session_id: int) -> dict[str, Any] | None:
        row = self.db.execute("SELECT * FROM sessions WHERE id=?", (session_id,)).fetchone()
        return _row(row) if row else None

    def attempts(self, session_id: int) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT a.*, p.text AS prompt FROM attempts a LEFT JOIN prompts p"
            " ON p.id = a.prompt_id WHERE a.session_id=? ORDER BY a.n", (session_id,)).fetchall()
        out = []
        for r in rows:
            d = _row(r)
            d["files"] = json.loads(d["files"] or "[]")
            d["original"] = json.loads(d["original"]) if d.get("original") else None
            out.append(d)
        return out

    def prompts(self, session_id: int) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT * FROM prompts WHERE session_id=? ORDER BY id",
                               (session_id,)).fetchall()
        return [dict(r) for r in rows]

    # -- comparisons ----------------------------------------------------------

    def add_comparison(self, report: dict[str, Any], out_dir: str) -> int:
        """A finished (or interrupted) compare and its cells, from its compare.json."""
        cells = report.get("cells", [])
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cur = self.db.execute(
                "INSERT INTO comparisons (started, recorded_at, out_dir, recipes, llms, repeat,"
                " cells, verified, interrupted) VALUES (?,?,?,?,?,?,?,?,?)",
                (report.get("started", ""), time.time(), out_dir,
                 json.dumps(report.get("recipes", [])), json.dumps(report.get("llms", [])),
                 int(report.get("repeat", 1)), len(cells),
                 sum(1 for c in cells if c.get("verified_at")),
                 int(bool(report.get("interrupted")))))
            cid = int(cur.lastrowid or 0)
            self.db.executemany(
                "INSERT INTO compare_cells (compare_id, recipe, llm, run, status, verified_at,"
                " session, workspace) VALUES (?,?,?,?,?,?,?,?)",
                [(cid, c["recipe"], c["llm"], c["run"], c["status"], c.get("verified_at"),
                  c.get("session"), c.get("workspace", "")) for c in cells])
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return cid

    def comparisons(self, limit: int = 200) -> list[dict[str, Any]]:
        rows = self.db.execute("SELECT * FROM comparisons ORDER BY id DESC LIMIT ?",
                               (limit,)).fetchall()
        out = []
        for r in rows:
            d = dict(r)
            d["recipes"], d["llms"] = json.loads(d["recipes"]), json.loads(d["llms"])
            d["cell_rows"] = [dict(c) for c in self.db.execute(
                "SELECT recipe, llm, run, status, verified_at, session, workspace"
                " FROM compare_cells WHERE compare_id=? ORDER BY id", (d["id"],))]
            out.append(d)
        return out

    def close(self) -> None:
        self.db.close()
