"""The output pane: colours kept, every other escape gone, bounded, batched."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.segment import Segment
from textual.app import App

from verifybot_tui.core.loop.events import Output
from verifybot_tui.tui.ansi import sanitize_line
from verifybot_tui.tui.messages import LoopEvent
from verifybot_tui.tui.output_buffer import OutputBuffer
from verifybot_tui.tui.widgets.output import OutputPane

pytestmark = pytest.mark.usefixtures("tui_env")

HOSTILE = ("\x1b[31mred\x1b[0m \x1b[2J\x1b[H\x1b]0;pwned title\x07\x1b]52;c;ZXZpbA==\x1b\\"
           "\x1b[?1049h\x1b[?25l\x1b[6n\x1bPq#0\x1b\\\x9b2Jplain\x07\x08\x00 end")


class PaneApp(App):
    def __init__(self, max_lines: int = 5000) -> None:
        super().__init__()
        self.buffer = OutputBuffer()
        self.max_lines = max_lines

    def compose(self):
        yield OutputPane(self.buffer, max_lines=self.max_lines)


def segments(pane: OutputPane, y: int) -> list[Segment]:
    return list(pane.render_line(y))


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[1;32mok\x1b[0m", "\x1b[1;32mok\x1b[0m"),
    ("a\x1b[2Jb\x1b[10;5Hc", "abc"),
    ("\x1b]0;title\x07x", "x"),
    ("\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", "link"),
    ("\x1b]52;c;ZXZpbA==\x07y", "y"),
    ("\x1b[?1049halt", "alt"),
    ("progress 10%\rprogress 100%", "progress 100%"),
    ("bell\x07 nul\x00 del\x7f", "bell nul del"),
    ("cut at the end\x1b[3", "cut at the end"),
    ("\x9b2Jc1 csi", "c1 csi"),
    ("tab\there", "tab     here"),
])
def test_sanitize_keeps_colours_only(raw: str, shown: str) -> None:
    assert sanitize_line(raw) == shown


async def test_escapes_never_reach_the_screen_and_colours_do() -> None:
    app = PaneApp()
    async with app.run_test(size=(80, 10)) as pilot:
        pane = app.query_one(OutputPane)
        app.buffer.add("stdout", HOSTILE + "\n")
        app.buffer.add("stderr", "\x1b[33mwarn\x1b[0m oops\n")
        pane.flush()
        await pilot.pause()
        assert pane.lines == ["red plain end", "warn oops"]
        for y in range(2):
            for seg in segments(pane, y):
                assert not any(ord(c) < 32 or 0x7f <= ord(c) <= 0x9f for c in seg.text), seg
        red = next(s for s in segments(pane, 0) if s.text == "red")
        assert red.style.color.number == 1, "SGR red is rendered as red"
        error = pane.get_component_rich_style("output-pane--stderr").color
        oops = next(s for s in segments(pane, 1) if "oops" in s.text)
        assert oops.style.color == error, "stderr is styled apart"
        warn = next(s for s in segments(pane, 1) if s.text == "warn")
        assert warn.style.color.number == 3, "the program's own colour wins on stderr"


async def test_partial_lines_show_and_complete() -> None:
    app = PaneApp()
    async with app.run_test(size=(80, 10)) as pilot:
        pane = app.query_one(OutputPane)
        app.buffer.add("stdout", "Enter your name: ")
        pane.flush()
        assert pane.lines == ["Enter your name: "]
        app.buffer.add("stdout", "Ada\nnext")
        app.buffer.add("stderr", "err without newline")
        pane.flush()
        assert pane.lines == ["Enter your name: Ada", "next", "err without newline"]
        app.buffer.run_started("attempt 2")
        pane.flush()
        await pilot.pause()
        assert pane.lines == ["Enter your name: Ada", "next", "err without newline",
                              "attempt 2"]


async def test_memory_is_bounded_and_the_cut_is_said() -> None:
    app = PaneApp(max_lines=1000)
    async with app.run_test(size=(80, 10)) as pilot:
        pane = app.query_one(OutputPane)
        for chunk in range(40):
            app.buffer.add("stdout", "".join(f"line {chunk * 500 + i}\n" for i in range(500)))
            if chunk % 7 == 0:
                pane.flush()
        pane.flush()
        await pilot.pause()
        assert len(pane._lines) == 1000
        assert pane.total_lines == 20000 and pane.dropped == 19000
        assert pane.lines[-1] == "line 19999" and pane.lines[0] == "line 19000"
        pane.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        first = "".join(s.text for s in segments(pane, 0))
        assert "19,000 earlier lines not shown" in first and "outputs/" in first


async def test_a_flood_is_batched_not_one_message_per_chunk(tui, tmp_path: Path) -> None:
    ws = tui.ws
    transcript = tui.write_answers(
        ws.parent / "t.md",
        "import sys, time\nfor i in range(20000):\n    sys.stdout.write(f'row {i}\\n')\n"
        "    if i % 50 == 0:\n        sys.stdout.flush()\n        time.sleep(0.002)")
    app = tui.make_app(ws, transcript, data={"run": {"auto_accept": True}})
    messages: list[object] = []

    def hook(message: object) -> None:
        messages.append(message)

    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "flood")
        await tui.wait_idle(pilot)
        output = tui.main(app).query_one(OutputPane)
        assert "row 19999" in output.lines
        assert len(output._lines) <= output.max_lines
    # How many chunks the pipe delivers depends on the machine's load (a busy one reads
    # bigger blocks); the batching does not: no chunk is a message, and the messages
    # stay few however many chunks came.
    chunks = app.output_buffer.chunks
    loop_events = [m for m in messages if isinstance(m, LoopEvent)]
    assert chunks > 1, "the program's output came in more than one chunk"
    assert not [m for m in loop_events if isinstance(m.event, Output)], \
        "output chunks never became messages"
    assert len(loop_events) < 60, "the loop's other events stay few"
    saved = (ws / "outputs" / "flood_1.txt").read_text()
    assert "row 0\n" in saved and "row 19999\n" in saved, "outputs/ has everything"


def screen_text(pane: OutputPane) -> list[str]:
    return ["".join(s.text for s in segments(pane, y)).rstrip() for y in range(pane.size.height)]


async def test_follows_the_end_pauses_when_scrolled_up_and_end_follows_again() -> None:
    app = PaneApp(max_lines=300)
    async with app.run_test(size=(60, 12)) as pilot:
        pane = app.query_one(OutputPane)
        pane.focus()
        for i in range(50):
            app.buffer.add("stdout", f"tick {i}\n")
            pane.flush()
        await pilot.pause()
        assert pane.following and screen_text(pane)[-1] == "tick 49"
        await pilot.press("pageup")
        await pilot.pause()
        assert not pane.following, "scrolling up pauses following"
        shown = screen_text(pane)
        app.buffer.add("stdout", "".join(f"late {i}\n" for i in range(7)))
        pane.flush()
        await pilot.pause()
        now = screen_text(pane)
        assert now[:-1] == shown[:-1], "what the user reads stays put"
        assert "7 new lines - End to follow" in now[-1]
        # More than max_lines arrive while paused: the kept window slides, the count goes on.
        app.buffer.add("stdout", "".join(f"flood {i}\n" for i in range(400)))
        pane.flush()
        await pilot.pause()
        assert "407 new lines - End to follow" in screen_text(pane)[-1]
        await pilot.press("end")
        await pilot.pause()
        assert pane.following and pane.unseen == 0
        assert screen_text(pane)[-1] == "flood 399"
        app.buffer.add("stdout", "after end\n")
        pane.flush()
        await pilot.pause()
        assert screen_text(pane)[-1] == "after end", "following again"
        # Scrolling back to the bottom by hand follows too.
        await pilot.press("up")
        await pilot.pause()
        assert not pane.following
        await pilot.press("down")
        await pilot.pause()
        assert pane.following


async def test_a_flood_in_one_flush_ends_on_its_last_line_and_the_title_names_the_run() -> None:
    app = PaneApp(max_lines=5000)
    async with app.run_test(size=(60, 12)) as pilot:
        pane = app.query_one(OutputPane)
        app.buffer.run_started("attempt 2 on local")
        for start in range(0, 200_000, 25_000):
            app.buffer.add("stdout", "".join(f"line {i + 1} of 200,000\n"
                                             for i in range(start, start + 25_000)))
            pane.flush()
        app.buffer.note("exit status 0")
        pane.finish()
        await pilot.pause()
        shown = screen_text(pane)
        assert shown[-2:] == ["line 200000 of 200,000", "exit status 0"], shown
        assert pane.border_title == "Output — attempt 2 on local"
        pane.clear()
        assert pane.border_title == "Output"


async def test_w_wraps_long_lines_and_back() -> None:
    app = PaneApp()
    async with app.run_test(size=(30, 8)) as pilot:
        pane = app.query_one(OutputPane)
        pane.focus()
        app.buffer.add("stdout", "a" * 50 + "\nshort [b]not markup[/b]\n")
        pane.flush()
        await pilot.pause()
        assert screen_text(pane)[0] == "a" * pane.size.width
        await pilot.press("w")
        await pilot.pause()
        shown = screen_text(pane)
        assert "".join(shown[:2]) == "a" * 50, shown
        assert "short [b]not markup[/b]" in shown, "output is never read as markup"
        await pilot.press("w")
        await pilot.pause()
        assert "short [b]not markup[/b]" in screen_text(pane)[1]


async def test_a_long_last_line_is_not_hidden_under_the_new_horizontal_scrollbar() -> None:
    app = PaneApp()
    async with app.run_test(size=(40, 8)) as pilot:
        pane = app.query_one(OutputPane)
        app.buffer.add("stdout", "".join(f"line {i}\n" for i in range(30)))
        pane.flush()
        await pilot.pause()
        app.buffer.note("exit status 0; full output: outputs/a_long_file_name_1.txt")
        pane.finish()
        await pilot.pause()
        await pilot.pause()
        assert pane.scroll_y == pane.max_scroll_y
        shown = screen_text(pane)
        assert any(line.startswith("exit status 0") for line in shown), shown
