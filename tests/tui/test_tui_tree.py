"""The app shows a conversation's project tree (issue 37): the code pane's tabs hold
every file the attempt runs with, the ones carried unchanged from the last run marked,
and F4 shows what the follow-up changed, naming what it left alone."""

from __future__ import annotations

import pytest
from cli_runs import answers
from textual.widgets import Tab, TextArea

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(120)]

UTIL = "def double(x):\n    return x * 3\n"
MAIN = ("from util import double\n\nr = double(21)\nassert r == 42, r\n"
        "print('double(21) =', r)\n")


def _app(tui, first: tuple[str, str]):
    """An app whose replay answers with two files (in this order), then only util.py."""
    named = {"main.py": MAIN, "util.py": UTIL}
    transcript = tui.ws.parent / "tree.md"
    transcript.write_text(answers(
        "\n\n".join(f"**{n}**\n\n```python\n{named[n]}```" for n in first),
        "Only util.py changes:\n\n**util.py**\n\n```python\n"
        + UTIL.replace("x * 3", "x * 2") + "```"))
    return tui.make_app(tui.ws, transcript, data={"run": {"max_retries": 1}},
                        review_feedback=False)


async def test_a_follow_up_that_sends_one_file_shows_the_whole_tree(tui, app_messages
                                                                   ) -> None:
    app = _app(tui, ("util.py", "main.py"))
    async with tui.running(app, app_messages, size=(160, 48)) as pilot:
        await tui.prompt_and_accept(pilot, "double a number")
        await tui.wait_approval(pilot, attempt=2)
        code = tui.main(app).code_pane
        titles = [str(t.label) for t in code.query(Tab)]
        assert titles == ["util_2.py", "▶ main_2.py (unchanged)"], titles
        await pilot.press("f4")
        await tui.wait_for(pilot, lambda: code.mode == "diff" and code.query("#code-diff"))
        shown = "\n".join(str(w.render()) for w in code.query("#code-diff Static"))
        assert "Unchanged, carried from the last run: main.py" in shown
        assert "-    return x * 3" in shown and "+    return x * 2" in shown
        assert "main_2.py" not in shown  # no diff for a file that did not change
        await pilot.press("f4", "a")
        await tui.wait_idle(pilot)
    run = sorted((tui.ws / "runs").glob("double_a_number_*"))[-1]
    assert (run / "main.py").read_text() == MAIN


async def test_the_next_attempt_starts_from_the_users_hand_edit(tui, app_messages) -> None:
    """The tree is the files as they ran: main.py edited by hand at attempt 1 is the
    main.py attempt 2 runs with, when the follow-up sends only util.py."""
    app = _app(tui, ("main.py", "util.py"))
    async with tui.running(app, app_messages, size=(160, 48)) as pilot:
        await tui.type_prompt(pilot, "double a number")
        await tui.wait_approval(pilot)
        code = tui.main(app).code_pane
        await pilot.press("e")
        await tui.wait_for(pilot, lambda: code.mode == "edit" and code.query(TextArea))
        await pilot.press("ctrl+end")
        await pilot.press("enter", *"print('edited by hand')")
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: code.mode == "code" and code.edits)
        await pilot.press("a")
        await tui.wait_approval(pilot, attempt=2)
        await pilot.press("a")
        await tui.wait_idle(pilot)
    first, second = sorted((tui.ws / "runs").glob("double_a_number_*"),
                           key=lambda p: int(p.name.rsplit("_", 1)[1]))
    ran = (first / "main.py").read_text()
    assert ran.startswith(MAIN) and ran.rstrip().endswith("print('edited by hand')")
    assert (second / "main.py").read_text() == (first / "main.py").read_text()
    assert (second / "util.py").read_text() == UTIL.replace("x * 3", "x * 2")
