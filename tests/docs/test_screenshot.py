"""The picture of the app in the README and on the guide's home is the real app's screen.

The test goes through the README's offline minute in the real app under Textual's Pilot
(the replay of examples/word_count.md, the local target): it sends the prompt, accepts
the first version, sees it fail, sends the feedback, accepts the fix and waits for the
verdict; then it saves the screen as SVG. It checks that the screen shows what the README
says it shows, and that docs/images/app.svg is that same screen: the two are compared as
text, row by row, without what changes from one run or machine to the next (times, the
workspace's path, this machine's Python in the prompt's context). With
VERIFYBOT_WRITE_SCREENSHOT=1 it writes docs/images/app.svg instead of comparing.
"""

from __future__ import annotations

import asyncio
import html
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from project import ROOT
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

pytestmark = pytest.mark.usefixtures("tui_env", "frozen_run_time")

KEPT = ROOT / "docs" / "images" / "app.svg"
SIZE = (160, 44)  # from 160 columns on, the history pane sits beside the others
PROMPT = "Print the total number of words in a short text and its 3 most common words"
WRITE = os.environ.get("VERIFYBOT_WRITE_SCREENSHOT") == "1"
# The workspace is a folder of its own in the temporary folder, not under pytest's long
# tmp_path: its path is in the picture (the first run's traceback names the program).
WORKSPACE_PREFIX = "verifybot-"


def screen_rows(svg: str) -> list[str]:
    """The screen's text, one string per row, read from a Textual SVG screenshot.

    Each row is drawn as <text> pieces clipped to that row (``...-line-N``), placed at an
    x in pixels; the pieces are put back at their columns."""
    width = 12.2  # Rich draws a cell 0.61 of its 20 px font wide
    rows: dict[int, dict[int, str]] = {}
    piece = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+" textLength="[\d.]+" '
                       r'clip-path="url\(#[\w-]+-line-(\d+)\)">(.*?)</text>')
    for x, row, text in piece.findall(svg):
        rows.setdefault(int(row), {})[round(float(x) / width)] = html.unescape(text)
    lines = []
    for row in range(max(rows, default=-1) + 1):
        line = ""
        for column, text in sorted(rows.get(row, {}).items()):
            line = line.ljust(column) + text
        lines.append(line.replace("\xa0", " ").rstrip())
    return lines


# What differs from one run, one clone or one machine to the next, each masked alike.
WORKSPACE = re.compile(r"/\S*?/" + re.escape(WORKSPACE_PREFIX) + r"\w+")
MASKS = [
    (re.compile(r"\d{4}-\d\d-\d\d"), "<date>"),
    (re.compile(r"\b\d?\d:\d\d(:\d\d)?\b"), "<time>"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), "<seconds>"),
    (re.compile(r"[~^]{3,}"), "<carets>"),  # how a traceback underlines: Python's version
    # A scrollbar's thumb is drawn with eighth blocks where it ends mid-cell: where it
    # stops depends on the last layout pass, not on what the screen shows.
    (re.compile(r"[▁▂▃▄▅▆▇█]"), " "),
]


def stable(rows: list[str]) -> list[str]:
    """The rows with the masks applied; a row naming the workspace is compared up to it
    (its length, and so what of the row still fits, depends on the temporary folder)."""
    out = []
    for row in rows:
        found = WORKSPACE.search(row)
        if found:
            row = row[:found.start()] + "<workspace>"
        for pattern, mask in MASKS:
            row = pattern.sub(mask, row)
        out.append(row.rstrip())
    return out


async def settle(pilot: Pilot) -> list[str]:
    """No cursor blink, no notices, the anchored panes at their end, and the screen's text
    the same over several looks a while apart: the screen's rows, once still."""
    app = pilot.app
    for widget in app.screen.query("Input, TextArea"):
        if isinstance(widget, Input | TextArea):
            widget.cursor_blink = False
    panes = list(app.main_screen.query("#conversation, #output"))
    looks: list[list[str]] = []

    async def still() -> bool:
        app.clear_notifications()
        for pane in panes:
            pane.scroll_end(animate=False, immediate=True)
        await asyncio.sleep(0.2)  # the app runs meanwhile (see tui_support.wait_for)
        looks.append(stable(screen_rows(app.export_screenshot())))
        return len(looks) >= 4 and all(look == looks[-1] for look in looks[-4:])

    deadline = time.monotonic() + 30
    while not await still():
        assert time.monotonic() < deadline, "the screen never kept still"
    for pane in panes:
        pane.release_anchor()
    await pilot.pause()
    return looks[-1]


@pytest.fixture
def workspace() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix=WORKSPACE_PREFIX))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_the_readme_screenshot_is_the_app_after_the_offline_minute(tui, workspace) -> None:
    app = tui.make_app(workspace, tui.EXAMPLE)
    async with app.run_test(size=SIZE) as pilot:
        await tui.type_prompt(pilot, PROMPT)
        await tui.wait_approval(pilot, attempt=1)
        await pilot.press("a")
        feedback = await tui.wait_feedback(pilot)
        assert "TypeError" in feedback.prompt, "the first version fails, as the README says"
        await pilot.press("ctrl+s")
        await tui.wait_approval(pilot, attempt=2)
        await pilot.press("a")
        await tui.wait_idle(pilot)
        still = await settle(pilot)
        svg = app.export_screenshot(title="VerifyBot TUI")

    rows = screen_rows(svg)
    assert stable(rows) == still, "the screen changed while it was saved"
    text = "\n".join(rows)
    # What the README says of the offline minute, on the screen: the four panes by their
    # titles, the failing first run, the fixed code, the second run's output, PASSED.
    for title in ("History (F2)", "Conversation", "Code", "Output — attempt 2 on local"):
        assert f"╭─ {title} ─" in text, f"no {title} pane:\n{text}"
    assert "TypeError: can only concatenate str" in text, text
    assert "from collections import Counter" in text and "Total words: 17" in text, text
    assert "│ PASSED │" in rows[0], f"no verdict in the status bar: {rows[0]}"
    assert any("Finished — PASSED" in row for row in rows), text

    if WRITE:
        KEPT.parent.mkdir(parents=True, exist_ok=True)
        KEPT.write_text(svg, encoding="utf-8")
        return
    kept = KEPT.read_text(encoding="utf-8")
    assert screen_rows(kept), "docs/images/app.svg is not a Textual screenshot"
    mine, theirs = stable(rows), stable(screen_rows(kept))
    changed = [f"row {i}:\n  kept: {a!r}\n  now:  {b!r}"
               for i, (a, b) in enumerate(zip(theirs, mine, strict=False)) if a != b]
    assert len(mine) == len(theirs) and not changed, (
        "docs/images/app.svg is not the app's screen any more; renew it with "
        "VERIFYBOT_WRITE_SCREENSHOT=1 (docs/testing.md):\n" + "\n".join(changed[:20]))
