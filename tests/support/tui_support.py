"""Helpers for the TUI tests: a real app on a tmp workspace, and waiting on its state.

The TUI test modules reach these through the ``tui`` fixture (conftest.py),
a TuiDriver, not by importing them; the other fixtures (tui_env,
app_messages, notices) are in conftest.py too. The app is the real one (replay
LLM, local target, history.db on disk); waiting is by polling the app's own
state under Pilot, never by sleeping a fixed time.
"""

from __future__ import annotations

import asyncio
import contextlib
import textwrap
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

from project import EXAMPLES, ROOT
from textual.pilot import Pilot
from textual.screen import Screen

from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.tui.app import VerifyBotApp

EXAMPLE = EXAMPLES / "word_count.md"
T = TypeVar("T")
SIZE = (140, 44)
S = TypeVar("S", bound=Screen)


def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return ws


def make_app(ws: Path, transcript: Path = EXAMPLE, *, data: dict[str, Any] | None = None,
             config_path: Path | None = None, llm: str | None = None,
             **kw: Any) -> VerifyBotApp:
    data = dict(data or {})
    data.setdefault("run", {})
    data["run"] = {"workspace": str(ws), "timeout": 20.0, **data["run"]}
    cfg = parse_config(data, config_path or "<test>")
    cfg.path = config_path
    return VerifyBotApp(config=cfg, llm=llm or f"replay:{transcript}",
                        target=kw.pop("target", "local"), **kw)


def write_answers(path: Path, *codes: str, lang: str = "python") -> Path:
    """A replay transcript: one answer per code, each a short sentence and a fence."""
    parts = []
    for i, code in enumerate(codes, 1):
        parts.append(f"## Answer {i}\n\n````markdown\nVersion {i} of the program:\n\n"
                     f"```{lang}\n{textwrap.dedent(code).strip()}\n```\n````\n")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


async def wait_for(pilot: Pilot, check: Callable[[], Any], timeout: float = 20.0,
                   what: str = "") -> Any:
    """Let the app run until ``check()`` is truthy; fail with ``what`` after ``timeout``.

    Between looks the app simply runs (a plain sleep), not ``pilot.pause()``: that
    also waits, up to 30 s, for every widget on the screen to empty its queue, and
    with the answer streaming in (blocks mounted and replaced) on a busy machine it
    raised WaitForScreenTimeout inside a wait that had its own, longer timeout.
    What a test waits for is the condition, under that one timeout.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)


async def wait_screen(pilot: Pilot, kind: type[S], timeout: float = 20.0, what: str = "") -> S:
    """The active screen once it is a ``kind``, mounted, and its focus has settled.

    A key pressed before that can land nowhere (the dialog's input not yet focused),
    which only shows on a busy machine.
    """
    def ready() -> S | None:
        screen = pilot.app.screen
        if not isinstance(screen, kind) or not screen.is_mounted:
            return None
        return screen if screen.focused is not None or not screen.focus_chain else None

    return await wait_for(pilot, ready, timeout, what or kind.__name__)


def main(app: VerifyBotApp):
    assert app.main_screen is not None
    return app.main_screen


async def type_prompt(pilot: Pilot, text: str, *, key_by_key: bool = False) -> None:
    """Enter a prompt; key by key is slower (a render per key), so only where it matters."""
    app = pilot.app
    await wait_for(pilot, lambda: main(app).is_mounted, what="main screen")
    box = main(app).query_one("#prompt")
    box.focus()
    if key_by_key:
        await pilot.press(*text)
    else:
        box.value = text
    await pilot.press("enter")


async def prompt_and_accept(pilot: Pilot, prompt: str) -> None:
    """Send a prompt, wait for its first version, accept it."""
    await type_prompt(pilot, prompt)
    await wait_approval(pilot)
    await pilot.press("a")


async def wait_approval(pilot: Pilot, timeout: float = 20.0, attempt: int | None = None,
                        what: str = "approval"):
    """The version waiting for approval (of ``attempt``, if given), once the bar has the
    focus: its keys are refused while a text box has it, and the focus moves a moment
    after the bar shows."""
    screen = main(pilot.app)

    def waiting():
        pending = screen.pending_approval
        if pending is None or (attempt is not None and pending.attempt != attempt):
            return None
        return pending if screen.approval_bar.has_focus_within else None

    try:
        return await wait_for(pilot, waiting, timeout, what)
    except AssertionError as e:
        raise AssertionError(f"{e}; pending: {screen.pending_approval}, focus: "
                             f"{pilot.app.focused!r}") from None


async def wait_feedback(pilot: Pilot, timeout: float = 20.0, what: str = "feedback"):
    """The feedback up for review, once its text has the focus (ctrl+s sends from there)."""
    screen = main(pilot.app)
    return await wait_for(pilot, lambda: screen.feedback_bar.text_area.has_focus
                          and screen.pending_feedback, timeout, what)


async def wait_idle(pilot: Pilot, timeout: float = 30.0) -> None:
    """The loop finished and every worker's message has been handled."""
    app = pilot.app
    loop_done = lambda: (app.session.loop is not None and not app.session.loop.running  # noqa: E731
                         and not [w for w in app.workers if w.group == "loop" and w.is_running])
    await wait_for(pilot, loop_done, timeout, "the loop to finish")
    # LoopEnded comes after every event the worker posted: once handled, all were.
    await wait_for(pilot, lambda: not main(app).running, timeout, "the screen to catch up")
    main(app).query_one("#output").flush()
    await pilot.pause()


class TuiDriver:
    """The helpers a TUI test drives the app with; the ``tui`` fixture hands one to each test.

    ``ws`` is the test's workspace (under its tmp_path); the rest are the
    functions above, so a test module needs no import of its own to use them.
    """

    ROOT = ROOT
    EXAMPLE = EXAMPLE
    SIZE = SIZE
    make_app = staticmethod(make_app)
    write_answers = staticmethod(write_answers)
    wait_for = staticmethod(wait_for)
    wait_screen = staticmethod(wait_screen)
    main = staticmethod(main)
    type_prompt = staticmethod(type_prompt)
    prompt_and_accept = staticmethod(prompt_and_accept)
    wait_approval = staticmethod(wait_approval)
    wait_feedback = staticmethod(wait_feedback)
    wait_idle = staticmethod(wait_idle)

    def __init__(self, tmp_path: Path) -> None:
        self.ws = workspace(tmp_path)

    def app_answering(self, *codes: str, **kw: Any) -> VerifyBotApp:
        """An app on ``ws`` whose replay LLM answers with ``codes``, one a prompt."""
        return make_app(self.ws, write_answers(self.ws.parent / "t.md", *codes), **kw)

    @contextlib.asynccontextmanager
    async def running(self, app: VerifyBotApp, messages: Any = None,
                      size: tuple[int, int] = SIZE) -> AsyncIterator[Pilot]:
        """``app.run_test`` at ``size`` (hooked to an ``app_messages``), once the main
        screen is up."""
        hook = messages.hook if messages is not None else None
        async with app.run_test(size=size, message_hook=hook) as pilot:
            await wait_for(pilot, lambda: main(app).is_mounted, what="main screen")
            yield pilot


class AppMessages:
    """What the app said while a test ran, read from its public messages.

    Pass ``hook`` as ``run_test(message_hook=...)``. ``events`` are the loop
    events the screen handled (each once: a message is seen at each pump it
    passes); ``notices`` are the notifications, from Textual's Notify message.
    """

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.notices: list[Any] = []  # textual.notifications.Notification
        self.desktop: list[Any] = []  # DesktopNotified: what went to the terminal

    def hook(self, message: object) -> None:
        from textual.notifications import Notify

        from verifybot_tui.tui.messages import DesktopNotified, LoopEvent

        if isinstance(message, DesktopNotified):
            if not any(m is message for m in self.desktop):
                self.desktop.append(message)
        elif isinstance(message, LoopEvent):
            if not any(e is message.event for e in self.events):
                self.events.append(message.event)
        elif isinstance(message, Notify):
            if not any(n is message.notification for n in self.notices):
                self.notices.append(message.notification)

    def of(self, kind: type[T]) -> list[T]:
        return [e for e in self.events if isinstance(e, kind)]
