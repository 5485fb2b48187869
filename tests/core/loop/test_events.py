"""One event protocol: every event has one handler method, found through one table,
and a front end that misses one is a type error."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from project import ROOT

from verifybot_tui.core.loop import events
from verifybot_tui.core.loop.events import HANDLERS, Event, EventHandler, dispatch

EVENT_TYPES = sorted(Event.__subclasses__(), key=lambda t: t.__name__)


def _method(event_type: type[Event]) -> str:
    return "on_" + re.sub(r"(?<!^)(?=[A-Z])", "_", event_type.__name__).lower()


def test_every_event_has_a_row_and_a_protocol_method() -> None:
    assert len(EVENT_TYPES) == 17  # ThinkingText (issue 13) is one of them
    assert set(HANDLERS) == set(EVENT_TYPES)
    for t in EVENT_TYPES:
        assert hasattr(EventHandler, _method(t)), t


@pytest.mark.parametrize("event_type", EVENT_TYPES, ids=lambda t: t.__name__)
async def test_dispatch_calls_the_method_for_the_events_type(event_type: type[Event]) -> None:
    calls: list[tuple[str, object]] = []

    class Recording:
        def __getattr__(self, name: str):
            async def record(ev: object) -> None:
                calls.append((name, ev))
            return record

    ev = event_type.__new__(event_type)  # the fields do not matter to dispatch
    await dispatch(Recording(), ev)  # type: ignore[arg-type]
    assert calls == [(_method(event_type), ev)]


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    module = tmp_path / "front_end.py"
    module.write_text(textwrap.dedent(source))
    # One cache for the test's two checks (of its own, under tmp_path): the second
    # reads the loop's modules back rather than checking them again.
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir",
                           str(tmp_path / "mypy-cache"), "--follow-imports=silent", str(module)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_a_front_end_missing_a_handler_is_a_type_error(tmp_path: Path) -> None:
    names = [_method(t) for t in EVENT_TYPES]
    body = "\n".join(f"    async def {n}(self, ev: events.{t.__name__}) -> None: ..."
                     for n, t in zip(names, EVENT_TYPES, strict=True) if n != "on_finished")
    source = ("from collections.abc import AsyncIterator\n\n"
              "from verifybot_tui.core.loop import events\n"
              "from verifybot_tui.core.loop.verify_loop import drain\n\n\n"
              f"class FrontEnd:\n{body}\n\n\n"
              "async def main(loop_events: AsyncIterator[events.Event]) -> None:\n"
              "    await drain(loop_events, FrontEnd())\n")
    missing = _mypy(tmp_path, source)
    assert missing.returncode == 1, missing.stdout
    assert 'has incompatible type "FrontEnd"; expected "EventHandler"' in missing.stdout
    assert re.search(r"note:\s+on_finished$", missing.stdout, re.M), missing.stdout
    whole = _mypy(tmp_path, source.replace(
        "\n\n\nasync def main",
        "\n    async def on_finished(self, ev: events.Finished) -> None: ...\n\n\nasync def main"))
    assert whole.returncode == 0, whole.stdout


def test_the_printer_of_the_cli_is_an_event_handler() -> None:
    from verifybot_tui.cli.printer import Printer

    for t in EVENT_TYPES:
        assert callable(getattr(Printer, _method(t)))
    assert events.dispatch is dispatch
