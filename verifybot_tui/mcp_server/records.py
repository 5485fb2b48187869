"""What history holds, for a client: past sessions, one run in detail, its files.

A run's id is its history session id, the number `verifybot history` and the app
show. Its output, transcript and files are read from the workspace VerifyBot wrote;
a file path must stay inside the run's folder (no ``..``, no link out).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.store.history import status_text
from verifybot_tui.mcp_server.state import ServerState

MAX_READ = 16 * 1024 * 1024  # bytes of one resource: more is a file to open by hand


def sessions(state: ServerState, query: str | None, limit: int) -> list[dict[str, Any]]:
    """The latest sessions, newest first; ``query`` keeps those whose prompt, target, LLM
    or status holds it (any case)."""
    if not 1 <= limit <= 1000:
        raise ConfigError("limit must be from 1 to 1000")
    rows = state.history.sessions(limit=limit if not query else 5000)
    out = []
    for r in rows:
        row = {"run_id": str(r["id"]), "prompt": r["prompt"], "target": r["target"],
               "llm": r["llm"], "status": status_text(r), "attempts": r.get("attempts", 0),
               "started": r["started_at"], "finished": r["finished_at"]}
        hay = " ".join(str(v) for v in row.values()).lower()
        if query and query.lower() not in hay:
            continue
        row["from_mcp"] = from_mcp(r)  # read from the transcript: only for rows kept
        out.append(row)
        if len(out) >= limit:
            break
    return out


def from_mcp(row: dict[str, Any]) -> bool:
    """Whether an MCP client started the session: its transcript's header says so."""
    try:
        with open(row.get("transcript") or "", "rb") as f:
            head = f.read(2048)
    except OSError:
        return False
    return b"\n- via: mcp\n" in head


def _session(state: ServerState, run_id: str) -> dict[str, Any]:
    try:
        sid = int(run_id)
    except ValueError:
        raise ConfigError(f"run id {run_id!r} is not a number (history lists them)") from None
    row = state.history.session(sid)
    if row is None:
        raise ConfigError(f"there is no run {run_id} in {state.history.path} (history lists "
                          "them)")
    return row


def run_detail(state: ServerState, run_id: str) -> dict[str, Any]:
    row = _session(state, run_id)
    attempts = []
    for a in state.history.attempts(row["id"]):
        attempts.append({k: a.get(k) for k in ("n", "version", "files", "entry", "target",
                                               "decision", "status", "verdict", "reason",
                                               "exit_code", "output_file")})
    return {"run_id": str(row["id"]), "prompt": row["prompt"], "target": row["target"],
            "llm": row["llm"], "from_mcp": from_mcp(row), "status": status_text(row),
            "started": row["started_at"],
            "finished": row["finished_at"], "transcript": row["transcript"],
            "conversation_url": row["conversation_url"], "attempts": attempts,
            "resources": {"output": f"verifybot://runs/{row['id']}/output",
                          "transcript": f"verifybot://runs/{row['id']}/transcript",
                          "files": f"verifybot://runs/{row['id']}/files/{{path}}"}}


def _read(path: Path, what: str) -> str:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_READ + 1)
    except OSError as e:
        raise ConfigError(f"{what}: cannot read {path}: {e.strerror or e}") from None
    text = data[:MAX_READ].decode("utf-8", errors="replace")
    if len(data) > MAX_READ:
        text += f"\n[cut at {MAX_READ} bytes: the whole file is {path}]\n"
    return text


def output(state: ServerState, run_id: str) -> str:
    row = _session(state, run_id)
    ran = [a for a in state.history.attempts(row["id"]) if a.get("output_file")]
    if not ran:
        raise ConfigError(f"run {run_id} has no output: nothing ran")
    return _read(state.workspace / ran[-1]["output_file"], f"run {run_id}'s output")


def transcript(state: ServerState, run_id: str) -> str:
    row = _session(state, run_id)
    if not row.get("transcript"):
        raise ConfigError(f"run {run_id} has no transcript")
    return _read(Path(row["transcript"]), f"run {run_id}'s transcript")


def run_file(state: ServerState, run_id: str, path: str) -> str:
    """A file of the run's folder as it was left (the program's files, what it wrote)."""
    row = _session(state, run_id)
    ran = [a for a in state.history.attempts(row["id"]) if a.get("version")]
    if not ran:
        raise ConfigError(f"run {run_id} has no files")
    folder = (state.workspace / "runs" / f"{row['slug']}_{ran[-1]['version']}").resolve()
    wanted = (folder / path).resolve()
    if ".." in Path(path).parts or Path(path).is_absolute() or \
            not wanted.is_relative_to(folder):
        raise ConfigError(f"file path {path!r} refused: it leaves the run's folder")
    if not wanted.is_file():
        have = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()) \
            if folder.is_dir() else []
        raise ConfigError(f"run {run_id} has no file {path!r}; it has: "
                          f"{', '.join(have[:50]) or 'none'}")
    return _read(wanted, f"run {run_id}'s {path}")
