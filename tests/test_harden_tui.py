"""Text from outside in the real app (issue 11, item 1): a program's escapes and a
file name made of markup and bidi controls are shown escaped, never acted on."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.notifications import Notify
from tui_support import (
    SIZE,
    main,
    make_app,
    type_prompt,
    wait_approval,
    wait_idle,
    workspace,
)

from verifybot_tui.tui.widgets.approval import ApprovalBar
from verifybot_tui.tui.widgets.conversation import ConversationPane

pytestmark = pytest.mark.usefixtures("tui_env")

NAME = "[/b][red]ev\u202eil.py"  # markup and a bidi override: the extractor keeps it
CODE = ('import sys; sys.stderr.write("boom \\x1b]0;TITLE\\x07 \\x1b[2J\\n"); '
        'sys.exit(1)')


async def test_hostile_names_and_reasons_are_shown_escaped(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    transcript = tmp_path / "t.md"
    transcript.write_text(f"## Answer 1\n\n````markdown\n```python title=\"{NAME}\"\n"
                          f"{CODE}\n```\n````\n", encoding="utf-8")
    app = make_app(ws, transcript, data={"run": {"max_retries": 0}})
    toasts: list[str] = []

    def hook(message: object) -> None:
        if isinstance(message, Notify):
            toasts.append(message.notification.message)

    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await type_prompt(pilot, "hostile")
        await wait_approval(pilot)
        question = str(main(app).query_one(ApprovalBar).query_one(
            "#approval-question").render())
        assert "\u202e" not in question and "\x1b" not in question
        assert "[/b][red]ev\\u202eil" in question  # shown as text, not as markup
        await pilot.press("a")
        await wait_idle(pilot)
        notices = [str(w.render()) for w in
                   main(app).query_one(ConversationPane).query(".notice")]
    shown = "\n".join(notices + toasts)
    assert "Verdict for attempt 1" in shown and "\\x1b]0;TITLE\\x07" in shown
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
