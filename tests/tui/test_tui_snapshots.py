"""Snapshots of the main screen's states at a fixed size, in the dark and the light theme.

Each state is reached the way a user reaches it (the real loop, replay LLM,
local target). What would differ between runs is kept out of the picture:
fresh workspaces (same session numbers), programs with fixed output, no
toasts, no cursor blink. Update after a deliberate change with
``pytest tests/tui/test_tui_snapshots.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import pytest_textual_snapshot
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from verifybot_tui.tui.widgets.notices import NoticeLine

pytestmark = pytest.mark.usefixtures("tui_env", "frozen_run_time")
SIZE = (120, 36)
THEMES = ["verifybot-dark", "verifybot-light"]
# One stream: stdout and stderr arrive through two pipes in no fixed order, and a
# snapshot must not depend on which came first.
# Long enough that the conversation overflows its pane at every size: where its content
# exactly fits, Textual's anchored pane lands at a negative, unclamped offset and the
# scrollbar thumb is drawn wherever the last layout pass left it.
PROGRAM = ("print('\\x1b[32mgreen\\x1b[0m and plain')\nprint('a line')\nprint('another line')\n"
           "print('and one more')\nprint('done')")


class SnapshotsHere(pytest_textual_snapshot.SVGImageExtension):
    """Snapshots live in tests/tui/snapshots/<test file>/, not syrupy's __snapshots__."""

    @classmethod
    def dirname(cls, *, test_location) -> str:
        return str(Path(test_location.filepath).parent / "snapshots" / test_location.basename)


@pytest.fixture(autouse=True)
def _snapshot_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pytest_textual_snapshot, "SVGImageExtension", SnapshotsHere)


def app_for(tui, tmp_path: Path, theme: str):
    ws = tui.ws
    # One fixed path: the wide screens show the whole prompt, which names the replay file.
    fixed = Path(tempfile.gettempdir()) / "verifybot-snapshots"
    fixed.mkdir(exist_ok=True)
    transcript = tui.write_answers(fixed / "t.md", PROGRAM)
    return tui.make_app(ws, transcript, data={"ui": {"theme": theme}})


async def settle(tui, pilot: Pilot) -> None:
    """No blink, no toasts, the anchored panes at their end, and nothing moving."""
    app = pilot.app
    for widget in app.screen.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False
    app.clear_notifications()
    panes = list(app.main_screen.query("#conversation, #output")) if app.main_screen else []
    last: list[tuple[float, float]] = []
    looks = [0]  # how many looks in a row saw the same thing

    def still() -> bool:
        """Scrolled to the end (the anchored panes end where their content ends), and
        nothing moved over several looks (a pane's content may still grow once after
        one quiet look: the waiting row leaving, a block re-laid out)."""
        for pane in panes:
            pane.scroll_end(animate=False, immediate=True)
        now: list[object] = [(pane.scroll_y, pane.max_scroll_y) for pane in panes]
        # Every widget's place on the main screen and on a modal over it: a modal shows
        # the main screen behind it as last laid out, and that may still change.
        for screen in {app.screen, app.main_screen} - {None}:
            now += [(id(w), w.region) for w in screen.query("*") if w.display]
        looks[0] = looks[0] + 1 if now == last else 0
        last[:] = now
        # A notice posted after the clearing above (the run's verdict comes as one) is
        # cleared too, on the main screen as well: a modal shows it behind itself.
        if any(line.notices for screen in {app.screen, app.main_screen} - {None}
               for line in screen.query(NoticeLine)):
            app.clear_notifications()
            looks[0] = 0
        return looks[0] >= 8

    await pilot.pause()
    await tui.wait_for(pilot, still, what="a still screen")
    # Textual's compositor scrolls an anchored pane to (content bottom - height) without
    # clamping: a conversation shorter than its pane is left at a negative offset, and
    # which of its two layout passes ran last decides where the scrollbar's thumb is
    # drawn. Released, the pane keeps a clamped offset, so the picture is the same
    # every time.
    for pane in panes:
        pane.release_anchor()
    # Where the conversation's thumb ends up still depends on the machine's load (its
    # last scroll lands before or after the final layout pass); the thumb is not what
    # these pictures check, so the conversation is shot without its scrollbar.
    for pane in app.main_screen.query("#conversation") if app.main_screen else []:
        pane.styles.scrollbar_size_vertical = 0
        pane.scroll_to(y=pane.max_scroll_y, animate=False, immediate=True)
    await pilot.pause()


async def ready(tui, pilot: Pilot) -> None:
    app = pilot.app
    await tui.wait_for(pilot, lambda: tui.main(app).is_mounted
                       and app.session.target is not None
                       and app.session.target.state == "connected"
                       and app.session.llm is not None
                       and app.session.llm.state == "idle", what="ready")


async def approval(tui, pilot: Pilot) -> None:
    await tui.type_prompt(pilot, "print some colours")
    await tui.wait_approval(pilot)


async def output(tui, pilot: Pilot) -> None:
    await approval(tui, pilot)
    await pilot.press("a")
    await tui.wait_idle(pilot)


async def history_attempt(tui, pilot: Pilot) -> None:
    app = pilot.app
    await output(tui, pilot)
    history = tui.main(app).query_one("#history")
    history.focus()
    history.move_cursor(history.root.children[0])
    await pilot.press("space")  # expand the session
    await pilot.press("down", "enter")  # its first attempt
    await tui.wait_for(pilot, lambda: app.screen is not tui.main(app),
                       what="the attempt screen")


def shoot(tui, snap_compare, tmp_path: Path, theme: str, reach, size=SIZE) -> bool:
    """The app in ``theme`` at ``size``, brought to a state by ``reach``, against its SVG."""
    async def run_before(pilot: Pilot) -> None:
        await reach(tui, pilot)
        await settle(tui, pilot)

    return snap_compare(app_for(tui, tmp_path, theme), terminal_size=size, run_before=run_before)


# The states by name: the names (and the themes and sizes) name the snapshot files.
STATES = {"empty": ready, "approval_pending": approval, "output_after_run": output,
          "history_attempt": history_attempt}
SIZES = [(80, 24), (160, 48)]


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("state", list(STATES))
def test_state(tui, snap_compare, tmp_path: Path, theme: str, state: str) -> None:
    assert shoot(tui, snap_compare, tmp_path, theme, STATES[state])


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("state", ["approval_pending", "output_after_run"])
def test_state_at(tui, snap_compare, tmp_path: Path, theme: str, size, state: str) -> None:
    """80x24: the history hides, the code has the top, the approval bar is one line."""
    assert shoot(tui, snap_compare, tmp_path, theme, STATES[state], size)
