"""The whole loop in the real app: replay LLM, local target, real programs, history.db.

The user's path through the app: type a prompt, watch the answer stream in,
see the code, edit it inline, accept, watch it fail, review the feedback and
send it, accept the fix, see it succeed and find it in the history pane.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Markdown, TabbedContent, TextArea

from verifybot_tui.core.loop.events import AnswerText, Finished
from verifybot_tui.core.store.history import History
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.conversation import ConversationPane
from verifybot_tui.tui.widgets.history import HistoryPane
from verifybot_tui.tui.widgets.output import OutputPane
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = pytest.mark.usefixtures("tui_env")


async def test_whole_loop_with_edit_failure_feedback_and_success(tui, tmp_path: Path,
                                                                 app_messages) -> None:
    ws = tui.ws
    app = tui.make_app(ws, tui.EXAMPLE, review_feedback=True)
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "count the words", key_by_key=True)
        screen = tui.main(app)
        approval = await tui.wait_approval(pilot)
        assert approval.attempt == 1

        # The answer streamed in pieces into one Markdown widget, and it is all there.
        streamed = [e for e in seen if isinstance(e, AnswerText)]
        assert len(streamed) > 3
        conversation = screen.query_one(ConversationPane)
        answers = conversation.query(".answer")
        assert len(answers) == 1
        assert "collections.Counter" in answers.first(Markdown).source
        assert "count the words" in " ".join(str(w.render()) for w in
                                             conversation.query(".prompt-body"))

        # The code pane shows the extracted file.
        code = screen.query_one(CodePane)
        assert [f.saved_name for f in code.files] == ["count_the_words_1.py"]
        assert 'print("Total words: " + len(words))' in code.files[0].content

        # Edit inline: a comment on top, kept with ctrl+s, then accepted.
        await pilot.press("e")
        area = await tui.wait_for(pilot, lambda: screen.query(TextArea).first()
                                  if code.mode == "edit" and code.query(TextArea) else None,
                                  what="the inline editor")
        assert area.has_focus
        await pilot.press(*"# edited by hand", "enter")
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: code.mode == "code" and code.edits, what="edits kept")
        assert code.edits["count_the_words.py"].startswith("# edited by hand\n")
        await pilot.press("a")

        # It fails for real; the feedback prompt is shown for review, then sent.
        feedback = await tui.wait_feedback(pilot, what="feedback")
        assert "TypeError" in feedback.prompt
        output = screen.query_one(OutputPane)
        output.flush()
        assert any("TypeError: can only concatenate str" in line for line in output.lines)
        area = screen.query_one("#feedback-text", TextArea)
        assert "TypeError" in area.text
        area.insert("\nPlease keep the fix small.", area.document.end)
        await pilot.press("ctrl+s")

        approval = await tui.wait_approval(pilot, attempt=2, what="approval 2")
        assert code.files[0].saved_name == "count_the_words_3.py", "the edit was version 2"
        await pilot.press("a")
        await tui.wait_idle(pilot)

        finished = [e for e in seen if isinstance(e, Finished)]
        assert [f.status for f in finished] == ["PASSED"]
        assert "Total words: 17" in output.lines
        assert any("exit status 1" in line for line in output.lines)

        # The history pane lists the session with its mark and both attempts.
        history = screen.query_one(HistoryPane)
        labels = [str(n.label) for n in history.root.children]
        assert labels and labels[0].startswith("✔ #1 count_the_words")
        attempts = [str(n.label) for n in history.root.children[0].children]
        assert attempts[0].startswith("✘ attempt 1: failed exit 1 (your edit)")
        assert attempts[1].startswith("✔ attempt 2: passed exit 0")

    h = History(ws)
    tried = h.attempts(1)
    assert [a["decision"] for a in tried] == ["edit", "accept"]
    assert (ws / tried[0]["files"][0]).read_text().startswith("# edited by hand")
    sent = [p["text"] for p in h.prompts(1)]
    assert sent[1].rstrip().endswith("Please keep the fix small.")
    record = json.loads((ws / "raw_md").glob("*.md").__next__().read_text()
                        .rsplit("```json", 1)[1].split("```")[0])
    assert record["status"] == "PASSED"
    h.close()


async def test_code_tabs_and_diff_against_previous(tui, tmp_path: Path) -> None:
    ws = tui.ws
    transcript = ws.parent / "two.md"
    transcript.write_text(
        "## Answer 1\n\n````markdown\n```python\n# file: main.py\nimport helper\n"
        "print(helper.VALUE + 1)\n```\n\n```python\n# file: helper.py\nVALUE = 'x'\n```\n"
        "````\n\n## Answer 2\n\n````markdown\n```python\n# file: main.py\nimport helper\n"
        "print(helper.VALUE + 1)\n```\n\n```python\n# file: helper.py\nVALUE = 41\n```\n````\n",
        encoding="utf-8")
    app = tui.make_app(ws, transcript, review_feedback=False)  # feedback goes without a stop
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.type_prompt(pilot, "two files")
        screen = tui.main(app)
        await tui.wait_approval(pilot)
        code = screen.query_one(CodePane)
        tabs = code.query_one(TabbedContent)
        assert tabs.tab_count == 2
        assert [f.name for f in code.files] == ["main.py", "helper.py"]
        await pilot.press("f4")
        await tui.wait_for(pilot, lambda: code.mode == "diff")
        assert "no previous version" in str(code.query_one("#code-empty").render())
        await pilot.press("a")
        await tui.wait_approval(pilot, attempt=2, what="second version")
        assert code.mode == "code"
        await pilot.press("f4")
        await tui.wait_for(pilot, lambda: code.mode == "diff")
        diff = str(code.query_one("#code-diff .code-text").render())
        assert "-VALUE = 'x'" in diff and "+VALUE = 41" in diff
        assert "main_" not in diff, "an unchanged file adds no hunk"
        await pilot.press("f4")
        await pilot.press("a")
        await tui.wait_idle(pilot)
        assert "42" in screen.query_one(OutputPane).lines


async def test_the_status_bar_follows_a_backend_state_change_it_is_told_of(
        tui, tmp_path: Path) -> None:
    app = tui.make_app(tui.ws)
    async with app.run_test(size=tui.SIZE) as pilot:
        status = tui.main(app).query_one(StatusBar)
        await tui.wait_for(pilot, lambda: status.llm_state == "idle", what="the replay LLM ready")
        app.session.llm.state = "error"  # as a crash deep inside a backend would set it
        await tui.wait_for(pilot, lambda: status.llm_state == "error", what="the bar to follow")
