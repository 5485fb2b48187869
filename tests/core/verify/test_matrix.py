"""The compare matrix's arithmetic (DESIGN: pass_at[k] is the share of cells verified
within k attempts; a cell never verified counts as not verified for every k) and the
failure kinds one attempt shows."""

from __future__ import annotations

import json

from verifybot_tui.core.verify.compare_report import index_html, markdown
from verifybot_tui.core.verify.matrix import Cell, Matrix, failure_kind, from_json, pass_at


def _cell(recipe: str, llm: str, at: int | None, run: int = 1, **kw) -> Cell:
    return Cell(recipe=recipe, llm=llm, run=run, status="VERIFIED" if at else "FAILED",
                attempts=at or 4, verified_at=at, max_attempts=4, **kw)


def test_pass_at_counts_a_never_verified_cell_as_not_verified_for_every_k() -> None:
    cells = [_cell("a", "x", 1), _cell("b", "x", 2), _cell("c", "x", 4), _cell("d", "x", None)]
    assert pass_at(cells, 4) == {"1": 0.25, "2": 0.5, "3": 0.5, "4": 0.75}
    assert pass_at([], 4) == {}


def test_summary_per_llm_and_per_recipe_with_repeats() -> None:
    m = Matrix(started="2026-11-26T20:00:00+00:00", recipes=["a", "b"], llms=["x", "y"],
               repeat=2, cells=[
                   _cell("a", "x", 1, seconds=10.0, first_answer_seconds=2.0),
                   _cell("a", "x", 3, run=2, seconds=30.0, first_answer_seconds=4.0),
                   _cell("b", "x", None, seconds=50.0, failures=["compile", "judge"]),
                   _cell("a", "y", 2, seconds=5.0, model="gpt-x"),
               ])
    x, y = m.summary()
    assert x["pass_at"] == {"1": 0.3333, "2": 0.3333, "3": 0.6667, "4": 0.6667}
    assert x["median_seconds"] == 30.0 and x["median_first_answer_seconds"] == 3.0
    assert x["failures"] == {"compile": 1, "fault": 0, "timeout": 0, "output": 0, "judge": 1}
    assert x["mean_attempts_to_verified"] == 2.0
    assert y["pass_at"]["1"] == 0.0 and y["pass_at"]["2"] == 1.0 and y["models"] == ["gpt-x"]
    rows = {(r["recipe"], r["llm"]): r for r in m.by_recipe()}
    assert rows[("a", "x")]["pass_at"] == {"1": 0.5, "2": 0.5, "3": 1.0, "4": 1.0}
    assert rows[("b", "y")]["cells"] == 0 and rows[("b", "y")]["pass_at"] == {}
    again = from_json(json.loads(m.json_text()))
    assert again.to_json() == m.to_json()
    assert markdown(again) == markdown(m) and index_html(again) == index_html(m)


def test_failure_kinds_of_one_attempt() -> None:
    def kind(status: str, **kw) -> str | None:
        args = {"exit_code": 1, "timed_out": False, "compile_failed": False, "diagnosis": "",
                "stderr": ""}
        return failure_kind(status, **{**args, **kw})

    assert kind("success", exit_code=0) is None
    assert kind("cancelled", exit_code=None) is None
    assert kind("compile_error") == "compile"
    assert kind("timeout_silent", exit_code=None, timed_out=True) == "timeout"
    assert kind("criteria_unmet", exit_code=0) == "output"
    assert kind("failure", exit_code=-11) == "fault"
    assert kind("failure", stderr="Traceback (most recent call last):\n") == "fault"
    assert kind("failure", exit_code=0, diagnosis="HardFault in main.c:12") == "fault"
    assert kind("failure", exit_code=0) == "output"  # a FAILED line on the UART


def test_the_html_escapes_foreign_names_and_loads_nothing() -> None:
    m = Matrix(started="now", recipes=["<script>alert(1)</script>"], llms=["a\"b"],
               cells=[_cell("<script>alert(1)</script>", "a\"b", 1, model="<img src=x>")])
    page = index_html(m)
    assert "<script>" not in page and "<img" not in page
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert page.count("<svg") == 3
