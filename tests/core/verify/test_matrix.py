"""The compare matrix's arithmetic (DESIGN: pass_at[k] is the share of cells verified
within k attempts; a cell never verified counts as not verified for every k) and the
failure kinds one attempt shows."""

from __future__ import annotations

import json

from verifybot_tui.core.verify.compare.matrix import Cell, Matrix, failure_kind, from_json, pass_at
from verifybot_tui.core.verify.compare.report import index_html, markdown


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
    assert x["failures"] == {"compile": 1, "fault": 0, "timeout": 0, "output": 0, "judge": 1,
                             "no_code": 0}
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


def test_cells_the_infrastructure_failed_are_left_out_and_counted_apart() -> None:
    m = Matrix(started="2026-11-29T10:00:00+00:00", recipes=["a", "b", "c"], llms=["x"],
               cells=[_cell("a", "x", 1), _cell("b", "x", None),
                      Cell(recipe="c", llm="x", run=1, status="LLM_ERROR", attempts=0,
                           max_attempts=4, failures=["infrastructure"],
                           infrastructure="HTTP 429: rate limit")])
    (x,) = m.summary()
    # two cells count: one verified at answer 1, one never; the 429 is neither
    assert x["pass_at"] == {"1": 0.5, "2": 0.5, "3": 0.5, "4": 0.5}
    assert (x["cells"], x["infrastructure_cells"]) == (2, 1)
    text = markdown(m)
    assert "## Failed for the infrastructure (left out of pass@k)" in text
    assert "c x x #1: HTTP 429: rate limit" in text


def test_the_unbiased_estimator_against_worked_examples() -> None:
    from verifybot_tui.core.verify.compare.pass_stats import estimator, pass_at_samples, wilson

    # HumanEval's estimator, by hand: n=4, c=2, k=2: 1 - C(2,2)/C(4,2) = 1 - 1/6
    assert abs(estimator(4, 2, 2) - 5 / 6) < 1e-12
    # n=8, c=4: pass@1 = 4/8; pass@2 = 1 - C(4,2)/C(8,2) = 1 - 6/28; pass@5 = 1 (n-c < k)
    assert estimator(8, 4, 1) == 0.5
    assert abs(estimator(8, 4, 2) - (1 - 6 / 28)) < 1e-12
    assert estimator(8, 4, 5) == 1.0 and estimator(8, 0, 3) == 0.0
    # Wilson's interval for 4 of 8 at 95%: centre 0.5, half-width
    # 1.96 * sqrt(0.25/8 + 1.96^2/256) / (1 + 1.96^2/8) = 0.2849
    low, high = wilson(0.5, 8)
    assert (round(low, 3), round(high, 3)) == (0.215, 0.785)
    got = pass_at_samples([(8, 4)], 2)
    assert got is not None and got["1"] == {"value": 0.5, "low": 0.2152, "high": 0.7848}
    # k=2 over 8 samples is 4 independent draws of two: a wider interval around 0.7857
    assert got["2"]["value"] == 0.7857 and got["2"]["low"] < 0.4 and got["2"]["high"] > 0.9
    # one sample per recipe says nothing of pass@k over samples
    assert pass_at_samples([(1, 1), (1, 0)], 2) is None


def test_a_coin_flip_model_repeated_8_times() -> None:
    """--repeat 8 of a model that verifies every other run, max_retries 0: pass@1 by
    rounds is 50%, and over samples pass@1 = 50% with its interval; the summary keeps
    both, named apart."""
    cells = [Cell(recipe="t", llm="coin", run=r, status="VERIFIED" if r % 2 else "FAILED",
                  attempts=1, verified_at=1 if r % 2 else None, max_attempts=1)
             for r in range(1, 9)]
    m = Matrix(started="2026-11-29T10:00:00+00:00", recipes=["t"], llms=["coin"], repeat=8,
               cells=cells)
    (row,) = m.summary()
    assert row["pass_at"] == {"1": 0.5}
    assert row["pass_at_samples"]["1"] == {"value": 0.5, "low": 0.2152, "high": 0.7848}
    assert "pass@k (samples, with --repeat n)" in markdown(m)
    assert "50% [22-78]" in markdown(m)
