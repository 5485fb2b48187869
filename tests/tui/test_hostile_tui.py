"""Escapes in the app (issue 21, point 3): an answer's markdown, the judge's notice and
the feedback prompt (it quotes the program's output) are shown escaped in every widget."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import TextArea

from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.conversation import ConversationPane

pytestmark = pytest.mark.usefixtures("tui_env")

EVIL = "\x1b]52;c;T1NDNTI=\x07\x1b]0;TITLE\x07"


def _texts(pane: ConversationPane) -> str:
    shown = []
    for widget in pane.query("*"):
        try:
            shown.append(str(widget.render()))
        except Exception:  # a container renders nothing of its own
            continue
    return "\n".join(shown)


async def test_answer_judge_notice_and_feedback_show_escapes_as_text(
        tui, tmp_path: Path) -> None:
    transcript = tmp_path / "t.md"
    code = f'import sys\nsys.stderr.write("boom {EVIL}\\n")\nsys.exit(1)'.replace(
        "\x1b", "\\x1b").replace("\x07", "\\x07")
    transcript.write_text(f"## Answer 1\n\n````markdown\nProse {EVIL} here.\n\n"
                          f"```python\n{code}\n```\n````\n", encoding="utf-8")
    app = tui.make_app(tui.ws, transcript, data={"run": {"max_retries": 1}})
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.type_prompt(pilot, "hostile")
        await tui.wait_approval(pilot)
        await pilot.press("a")
        pane = tui.main(app).query_one(ConversationPane)
        await tui.wait_for(pilot, lambda: "boom" in _texts(pane) and "Prose" in _texts(pane),
                           30, "the feedback prompt and the answer")
        for collapsible in pane.query("Collapsible"):
            collapsible.collapsed = False  # the feedback unfolded
        await pilot.pause()
        shown = _texts(pane)
    assert "\x1b" not in shown and "\x07" not in shown
    assert "\\x1b]52;c;T1NDNTI=\\x07" in shown


@pytest.mark.timeout(120)
async def test_a_huge_answer_of_brackets_is_shown_plain_and_the_app_stays_live(
        tui, tmp_path: Path) -> None:
    """4.8 MB of ``![``: parsed as markdown on the event loop it held the app for minutes."""
    transcript = tmp_path / "t.md"
    transcript.write_text("## Answer 1\n\n````markdown\n" + "![" * 2_400_000
                          + "\n\n```python\nprint(1)\n```\n````\n", encoding="utf-8")
    app = tui.make_app(tui.ws, transcript, data={"run": {"max_retries": 0}})
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.type_prompt(pilot, "huge")
        await tui.wait_approval(pilot, timeout=60)
        pane = tui.main(app).query_one(ConversationPane)
        assert "too long to show here" in _texts(pane)
        assert not pane.query("Markdown.answer")


def _code_lines(widget) -> str:
    """What a code widget draws: its strips, as they go to the terminal."""
    from textual.geometry import Region

    width, height = widget.region.size
    return "\n".join(strip.text for strip in widget.render_lines(Region(0, 0, width, height)))


async def test_code_pane_shows_escapes_as_text_in_every_view(tui) -> None:
    """An answer's code holding OSC 52, a screen clear, a title, BEL and a C1 CSI is
    shown escaped in the code, the diff and the inline editor; ordinary code (a tab,
    unicode) looks as before, and the editor left unchanged is no edit."""
    hostile = "\x1b]52;c;SGVsbG8=\x07 \x1b[2J \x1b]0;TITLE\x07 \x9b31m"
    ordinary = '\tx = "héllo 日本 ✓"'
    app = tui.app_answering("print('first')", f'print("{hostile}")\nif 1:\n{ordinary}')
    async with tui.running(app) as pilot:
        await tui.type_prompt(pilot, "hostile code")
        await tui.wait_approval(pilot)
        await pilot.press("r", *"again", "enter")
        await tui.wait_approval(pilot, attempt=2, what="the hostile version")
        code = tui.main(app).query_one(CodePane)
        views = {"code": _code_lines(code.query_one(".code-text"))}
        await pilot.press("f4")
        await tui.wait_for(pilot, lambda: code.query("#code-diff .code-text"), what="the diff")
        views["diff"] = _code_lines(code.query_one("#code-diff .code-text"))
        await pilot.press("f4", "e")
        await tui.wait_for(pilot, lambda: code.query(".code-editor"), what="the editor")
        editor = code.query_one(".code-editor", TextArea)
        views["edit"] = _code_lines(editor) + "\n" + editor.text  # the editor is narrow
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: code.mode == "code", what="the editor closed")
        assert code.edits == {}, "the editor opened and closed is no edit"
    for view, shown in views.items():
        assert not {"\x1b", "\x07", "\x9b"} & set(shown), (view, shown)
        assert "\\x1b]52;c;SGVsbG8=\\x07 \\x1b[2J \\x1b]0;TITLE\\x07 \\x9b31m" in shown, view
    assert '        x = "héllo 日本 ✓"' in views["code"]
