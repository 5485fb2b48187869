"""The suite runs green from a plain clone: checks that read ../shared wait for it.

Tests marked ``needs_shared`` read the real pages, answers and firmware that live
beside the clone (``shared_data``), never in it. CI always has them; a plain clone
may not. When ../shared/reference is missing those tests are deselected (not
failed, not skipped one by one) and the run's last lines say how many did not run
and why; when it is there they run and the summary says how many ran and how.

Under pytest-xdist the workers collect and deselect, and the controller prints
the summary: each worker hands its count back through ``workeroutput``, and the
controller counts the reports of the marked tests it receives.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import shared_data

MARK = "needs_shared"
_deselected: list[int] = []
_outcomes: Counter[str] = Counter()
_counted: set[str] = set()


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if shared_data.available():
        return
    waiting = [item for item in items if item.get_closest_marker(MARK)]
    if not waiting:
        return
    items[:] = [item for item in items if not item.get_closest_marker(MARK)]
    config.hook.pytest_deselected(items=waiting)
    _deselected.append(len(waiting))
    if _is_worker(config):
        config.workeroutput[MARK] = len(waiting)  # type: ignore[attr-defined]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """The controller's side: a worker's count of the tests it deselected."""
    count = getattr(node, "workeroutput", {}).get(MARK)
    if count:
        _deselected.append(int(count))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Count each marked test once, by its final outcome (a setup error counts as one)."""
    if MARK not in report.keywords or report.nodeid in _counted:
        return
    if report.when == "call" or report.outcome != "passed":
        _counted.add(report.nodeid)
        _outcomes["error" if report.when != "call" and report.failed else report.outcome] += 1


def summary_line(deselected: int, outcomes: Counter[str]) -> str | None:
    """The one line that says what became of the checks that read ../shared."""
    where = shared_data.REFERENCE
    if deselected:
        return (f"{_checks(deselected)} the real pages, answers and firmware did not run:"
                f" {where} is missing (../shared goes beside the clone; CI always has it)")
    ran = sum(outcomes.values())
    if not ran:
        return None
    how = ", ".join(f"{n} {what}" for what, n in sorted(outcomes.items()))
    return f"{_checks(ran)} {where} ran ({how})"


def _checks(n: int) -> str:
    return f"{n} check that reads" if n == 1 else f"{n} checks that read"


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if _is_worker(config):
        return
    line = summary_line(max(_deselected, default=0), _outcomes)
    if line:
        terminalreporter.write_sep("-", "needs_shared")
        terminalreporter.write_line(line)
