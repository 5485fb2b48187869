"""Sanity checks: each fires on a run that exited 0, none on a healthy run or a failed one."""

from __future__ import annotations

from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.core.verify import sanity


def run(stdout: str, stderr: str = "", exit_code: int | None = 0) -> RunResult:
    return RunResult(exit_code=exit_code, stdout=stdout, stderr=stderr, duration=0.1)


def names(result: RunResult) -> list[str]:
    return [h.name for h in sanity.check(result)]


def test_healthy_output_passes():
    assert names(run("Apogee: 1234.5 m\nversion utf8 x2\n")) == []


def test_empty_output():
    assert names(run("  \n")) == ["empty-output"]


def test_every_number_zero():
    hits = sanity.check(run("Apogee: 0.0 m\nSpeed: 0 m/s\nStage 0e0\n"))
    assert [h.name for h in hits] == ["all-zero"]
    assert hits[0].reason == ('every number printed is zero (3 numbers), '
                              'e.g. line 1: "Apogee: 0.0 m"')
    assert names(run("Apogee: 0.0 m\nSpeed: 3 m/s\n")) == []


def test_nan_or_inf():
    hits = sanity.check(run("Apogee: 12 m\nSpeed: nan m/s\n"))
    assert [h.name for h in hits] == ["nan-inf"]
    assert 'line 2: "Speed: nan m/s"' in hits[0].reason
    assert names(run("ratio -inf\n")) == ["nan-inf"]
    assert names(run("Infinity and beyond: 3\n")) == ["nan-inf"]
    assert names(run("information: 3 financial 4\n")) == []


def test_traceback_with_exit_zero():
    err = 'Traceback (most recent call last):\n  File "m.py", line 1\nValueError: bad\n'
    hits = sanity.check(run("done 3\n", err))
    assert [h.name for h in hits] == ["traceback"]
    assert 'its last line: "ValueError: bad"' in hits[0].reason


def test_failed_runs_are_not_sanity_checked():
    assert sanity.check(run("", "Traceback (most recent call last):\n", exit_code=1)) == []
