"""Widgets on their own: the history pane's rows and filter, brackets shown literally; the
conversation pane through an answer the site re-renders."""

from __future__ import annotations

import pytest
from textual.app import App

from verifybot_tui.core.settings.ui_state import load_ui_state
from verifybot_tui.tui.widgets.history import HistoryPane

pytestmark = pytest.mark.usefixtures("tui_env")

SESSIONS = [
    {"id": 3, "slug": "read_[bme280]", "prompt": "read the [bold]BME280[/bold]", "target": "pi",
     "llm": "chatgpt", "status": "STOPPED", "attempts": 1, "llm_reached": True},
    {"id": 2, "slug": "word_count", "prompt": "count words", "target": "local",
     "llm": "chatgpt", "status": "FAILED", "attempts": 3, "llm_reached": True,
     "success_status": "PASSED", "success_attempt": 2},
    {"id": 1, "slug": "blink", "prompt": "blink an LED", "target": "pi", "llm": "claude",
     "status": "FAILED", "attempts": 1, "llm_reached": True},
    {"id": 0, "slug": "pi_down", "prompt": "read the pi", "target": "pi", "llm": "claude",
     "status": "TARGET_ERROR", "attempts": 0, "llm_reached": False},
]
ATTEMPTS = {
    3: [{"id": 30, "n": 1, "prompt_id": 300, "status": "STOPPED", "decision": "stop",
         "exit_code": None}],
    2: [{"id": 20, "n": 1, "prompt_id": 200, "status": "REJECTED", "decision": "reject",
         "note": "use [argparse] please", "exit_code": None},
        {"id": 21, "n": 2, "prompt_id": 201, "status": "PASSED", "decision": "accept",
         "exit_code": 0},
        {"id": 22, "n": 3, "prompt_id": 202, "status": "FAILED", "decision": "accept",
         "exit_code": 1}],
}
PROMPTS = {
    2: [{"id": 200, "kind": "initial", "text": "count words"},
        {"id": 201, "kind": "reject", "text": "..."},
        {"id": 202, "kind": "free", "text": "now also count lines\nand bytes"}],
}


class HistoryApp(App):
    def compose(self):
        yield HistoryPane(id="history")


def labels(pane: HistoryPane) -> list[str]:
    out: list[str] = []

    def visit(node) -> None:
        for child in node.children:
            out.append(str(child.label))
            visit(child)

    visit(pane.root)
    return out


async def test_history_rows_show_follow_ups_reject_notes_and_stopped_by_you() -> None:
    app = HistoryApp()
    async with app.run_test(size=(80, 20)) as pilot:
        pane = app.query_one(HistoryPane)
        pane.show_sessions(SESSIONS, ATTEMPTS, PROMPTS)
        for node in pane.root.children:
            node.expand()
        await pilot.pause()
        shown = labels(pane)
        assert shown[0].startswith("■ #3 read_[bme280] (pi, 1 try) stopped by you")
        assert "■ attempt 1: stopped by you" in shown
        assert "↺ attempt 1: rejected, note: use [argparse] please" in shown
        i_follow = shown.index("» follow-up: now also count lines")
        assert shown[i_follow + 1].startswith("✘ attempt 3: failed exit 1"), \
            "a follow-up comes before the attempt it led to"
        assert shown[i_follow - 1].startswith("✔ attempt 2: passed exit 0")
        # Session 2 ended FAILED after a follow-up, but attempt 2 had passed: both show.
        session_2 = next(line for line in shown if line.startswith("✔ #2") or "#2 " in line)
        assert "✔ passed (attempt 2), then follow-up failed" in session_2, session_2
        assert "⚠ #0 pi_down (pi, 0 tries) not sent: target down" in shown
        # The brackets reach the screen as they are.
        screen = "\n".join(pane.render_line(y).text for y in range(pane.size.height))
        assert "read_[bme280]" in screen and "[argparse]" in screen


async def test_slash_filters_by_text_status_and_target() -> None:
    app = HistoryApp()
    async with app.run_test(size=(80, 20)) as pilot:
        pane = app.query_one(HistoryPane)
        pane.show_sessions(SESSIONS, ATTEMPTS, PROMPTS)
        pane.focus()

        def sessions() -> list[int]:
            return [n.data.session["id"] for n in pane.root.children if n.data is not None]

        await pilot.press("slash", *"pi")
        assert sessions() == [3, 1, 0], "target"
        assert "/pi▏ 3 of 4" in str(pane.border_subtitle)
        await pilot.press("backspace", "backspace", *"failed")
        assert sessions() == [2, 1], "status, of a session or of an attempt"
        await pilot.press(*" lines")
        assert sessions() == [2], "a follow-up's text"
        await pilot.press("enter")
        assert not pane.filtering and sessions() == [2], "Enter keeps the filter"
        await pilot.press("r")  # a tree key again, not filter text
        assert pane.filter_text == "failed lines"
        await pilot.press("escape")
        assert sessions() == [3, 2, 1, 0] and pane.filter_text == ""
        await pilot.press("slash", *"stopped by you", "enter")
        assert sessions() == [3]
        await pilot.press("slash", *"argparse")
        assert sessions() == [2], "a reject note"
        await pilot.press(*"zzz")
        assert labels(pane) == ["No session matches 'argparsezzz' (Esc clears)"]


async def test_notifications_show_brackets_literally(tui, tmp_path) -> None:
    app = tui.make_app(tui.ws)
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        app.notify("add [targets.NAME] tables; accept [a] runs; [b]not bold[/b]")
        tui.main(app).notify("[ui] theme from a screen")
        line = tui.main(app).notice_line
        await tui.wait_for(pilot, lambda: len(line.notices) == 2, what="two notices")
        await pilot.pause()
        shown = str(line.render())  # as drawn: the brackets are text, not markup
        assert "add [targets.NAME] tables; accept [a] runs; [b]not bold[/b]" in shown, shown
        assert "[ui] theme from a screen" in shown, shown
        assert not app.screen.query("Toast"), "notices are in the line, not in toasts"


async def test_w_wraps_code_and_y_copies_the_file_shown(tui, tmp_path) -> None:
    from verifybot_tui.tui.widgets.code import CodePane

    ws = tui.ws
    long_line = "print('" + "wide " * 40 + "')"
    transcript = tui.write_answers(ws.parent / "t.md", f"# a long line\n{long_line}")
    app = tui.make_app(ws, transcript)
    async with app.run_test(size=(120, 40)) as pilot:
        await tui.type_prompt(pilot, "print a wide line")
        await tui.wait_approval(pilot)
        code = tui.main(app).query_one(CodePane)
        text = await tui.wait_for(pilot, lambda: code.query(".code-text")
                                  and code.query_one(".code-text").size.height
                                  and code.query_one(".code-text"), what="the code shown")
        assert text.size.height == 2, "unwrapped by default: one row per line"
        code.query_one("VerticalScroll").focus()
        await pilot.press("w")
        await pilot.pause()
        assert code.wrap and text.size.height > 2, "w wraps the code"
        assert load_ui_state()["wrap_code"] is True, "the choice is remembered"
        await pilot.press("w")
        await pilot.pause()
        assert text.size.height == 2
        assert load_ui_state()["wrap_code"] is False
        await pilot.press("y")
        assert app.clipboard.rstrip("\n") == f"# a long line\n{long_line}"
        tui.main(app).query_one("#approval").focus()
        app.copy_to_clipboard("")
        await pilot.press("y")
        assert long_line in app.clipboard, "y from the approval bar copies the shown file"
        await pilot.press("a")


async def test_an_answer_rewritten_just_before_it_ends_is_shown_and_the_pane_lives_on() -> None:
    """The site re-renders the answer (its text no longer extends what was shown) and
    the answer ends at once: the rewrite's fresh stream is stopped before its task
    ever ran. That once raised CancelledError into the screen's handler, which ended
    the main screen's message loop silently (found under load in the thinking test)."""
    from textual.widgets import Markdown

    from verifybot_tui.tui.widgets.conversation import ConversationPane

    class ConversationApp(App):
        def compose(self):
            yield ConversationPane(id="conversation")

    app = ConversationApp()
    async with app.run_test(size=(80, 20)) as pilot:
        pane = app.query_one(ConversationPane)
        await pane.add_prompt("write it")
        await pane.show_answer("Here is `a.py`:")
        await pane.show_answer("Here is `b.py`, rewritten:")  # not an extension: a re-render
        await pane.finish_answer("Here is `b.py`, rewritten:")
        await pane.add_notice("next event")  # the pane still takes events
        await pilot.pause()
        answers = list(pane.query(Markdown))
        assert len(answers) == 1 and answers[0].source == "Here is `b.py`, rewritten:"
        assert not pane.waiting and pane.query(".notice")


async def test_the_waiting_spinner_turns_only_while_an_answer_is_awaited() -> None:
    """Hidden, the spinner stopped ticking too: its 16-a-second refresh had kept an idle
    app at about 1.6% of a core for as long as it was open."""
    from textual.widgets import LoadingIndicator

    from verifybot_tui.tui.widgets.conversation import ConversationPane

    class ConversationApp(App):
        def compose(self):
            yield ConversationPane(id="conversation")

    def ticking() -> list[str]:
        return [type(w).__name__ for w in app.screen.walk_children() if w.auto_refresh]

    app = ConversationApp()
    async with app.run_test(size=(80, 20)) as pilot:
        pane = app.query_one(ConversationPane)
        spinner = pane.query_one("#answer-wait", LoadingIndicator)
        await pilot.pause()
        assert not spinner.display and ticking() == []
        await pane.add_prompt("write it")
        await pilot.pause()
        assert spinner.display and ticking() == ["LoadingIndicator"]
        await pane.finish_answer("Here is `a.py`.")
        await pilot.pause()
        assert not spinner.display and ticking() == []


async def test_a_long_conversation_keeps_the_last_turns_as_widgets_and_shows_older_on_demand(
) -> None:
    """Issue 22: attempt 40 costs what attempt 1 does; older turns stay as text until asked."""
    from textual.widgets import Markdown, Static

    from verifybot_tui.tui.widgets.conversation import KEPT_TURNS, ConversationPane

    class ConversationApp(App):
        def compose(self):
            yield ConversationPane(id="conversation")

    turns = KEPT_TURNS + 4
    app = ConversationApp()
    async with app.run_test(size=(80, 20)) as pilot:
        pane = app.query_one(ConversationPane)
        for n in range(1, turns + 1):
            await pane.add_prompt(f"try {n}", kind="feedback" if n > 1 else "initial", attempt=n)
            await pane.show_thinking(f"thinking about {n}")
            await pane.finish_answer(f"Answer **{n}**")
            await pane.add_notice(f"run {n} failed", "warning")
        await pilot.pause()
        shown = [str(w.render()) for w in pane.query(".prompt-title").results(Static)]
        assert len(shown) == KEPT_TURNS and "attempt 5)" in shown[0]
        assert len(pane.query(Markdown)) == KEPT_TURNS
        older = pane.query_one("#older", Static)
        assert older.has_class("-some") and "4 earlier turns" in str(older.render())
        pane.scroll_home(animate=False)  # the user scrolls up to it
        await pilot.pause()
        await pilot.click("#older")
        await pilot.pause()
        sources = [m.source for m in pane.query(Markdown).results(Markdown)]
        assert sources == [f"Answer **{n}**" for n in range(1, turns + 1)]
        notices = [str(w.render()) for w in pane.query(".notice").results(Static)]
        assert notices == [f"run {n} failed" for n in range(1, turns + 1)]
        assert len(pane.query(".thinking")) == turns and not older.has_class("-some")
        await pane.add_prompt("one more", kind="feedback", attempt=turns + 1)
        await pilot.pause()
        assert len(pane.query(".prompt-title")) == KEPT_TURNS  # bounded again
