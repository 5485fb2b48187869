"""Escapes in the app (issue 21, point 3): an answer's markdown, the judge's notice and
the feedback prompt (it quotes the program's output) are shown escaped in every widget."""

from __future__ import annotations

from pathlib import Path

import pytest

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
