"""History keeps each comparison: a compare id over its cells' sessions, in tables of
their own that an older history.db gains when it is opened (its rows untouched)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from old_history import old_db

from verifybot_tui.core.store.history import History


def _report(cells: list[dict]) -> dict:
    return {"started": "2026-11-26T20:00:00+00:00", "recipes": ["a", "b"], "llms": ["x", "y"],
            "repeat": 1, "interrupted": False, "cells": cells}


def test_an_old_history_gains_the_compare_tables_and_keeps_its_sessions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    old_db(ws)
    h = History(ws)
    try:
        assert len(h.sessions()) == 5
        cells = [{"recipe": "a", "llm": "x", "run": 1, "status": "VERIFIED", "verified_at": 2,
                  "session": 1, "workspace": "cells/a/x-1"},
                 {"recipe": "b", "llm": "y", "run": 1, "status": "FAILED", "verified_at": None,
                  "session": 1, "workspace": "cells/b/y-1"}]
        first = h.add_comparison(_report(cells), "/tmp/out1")
        second = h.add_comparison({**_report(cells[:1]), "interrupted": True}, "/tmp/out2")
        assert (first, second) == (1, 2)
        newest, oldest = h.comparisons()
        assert newest["id"] == 2 and newest["interrupted"] == 1 and newest["cells"] == 1
        assert oldest["recipes"] == ["a", "b"] and oldest["llms"] == ["x", "y"]
        assert (oldest["cells"], oldest["verified"]) == (2, 1)
        assert [(c["recipe"], c["status"], c["session"], c["workspace"])
                for c in oldest["cell_rows"]] == [("a", "VERIFIED", 1, "cells/a/x-1"),
                                                 ("b", "FAILED", 1, "cells/b/y-1")]
        assert len(h.sessions()) == 5
    finally:
        h.close()
    con = sqlite3.connect(ws / "history.db")
    try:
        assert con.execute("SELECT COUNT(*) FROM compare_cells").fetchone() == (3,)
    finally:
        con.close()
