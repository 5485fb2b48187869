"""Keys that always work, the multi-line prompt box, 80x24, and the small things (Pilot)."""

from __future__ import annotations

from pathlib import Path

import pytest
from project import ROOT
from textual import events
from tui_support import AppMessages

from verifybot_tui.core.loop.events import Finished, PromptSent, RunStarted
from verifybot_tui.core.store.history import History
from verifybot_tui.tui.keys import check_keymap
from verifybot_tui.tui.screens.dialogs import ConfirmScreen
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.output import OutputPane

pytestmark = pytest.mark.usefixtures("tui_env")


def recorder():
    """(events, message_hook): the loop events the app handled, each once."""
    messages = AppMessages()
    return messages.events, messages.hook
WIDE = (140, 44)
TWO_TARGETS = {"targets": {"other": {"kind": "local"}}}


def of(seen, kind):
    return [e for e in seen if isinstance(e, kind)]


def footer_keys(app) -> dict[str, str]:
    """What the footer offers now: action -> key, for the shown bindings that apply."""
    applies = getattr(app.screen, "applies", lambda action: True)
    return {b.binding.action: key for key, b in app.screen.active_bindings.items()
            if b.binding.show and b.enabled and applies(b.binding.action)}


# -- item 2: keys that always work ---------------------------------------------------------


async def test_approval_keys_work_after_clicking_another_pane_but_not_while_typing(
        tui, tmp_path: Path) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('one')", "print('two')")
    app = tui.make_app(ws, transcript)
    seen, hook = recorder()
    async with app.run_test(size=WIDE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "print one")
        await tui.wait_approval(pilot)
        screen = tui.main(app)
        assert footer_keys(app).get("approve('accept')") == "a", "Accept is in the footer"
        # Typing in the prompt box: letters are text, nothing is decided.
        screen.prompt_box.focus()
        await pilot.press("a", "r", "s")
        assert screen.prompt_box.value == "ars" and screen.pending_approval is not None
        assert "approve('accept')" not in footer_keys(app), "not offered while typing"
        screen.prompt_box.value = ""
        # Esc from the prompt box goes back to the approval bar.
        await pilot.press("escape")
        assert app.focused is screen.approval_bar
        # The history pane has its own r (resume): with a version waiting, r rejects.
        screen.history_pane.focus()
        await pilot.press("r")
        await tui.wait_for(pilot, lambda: screen.approval_bar.has_class("-noting"), what="note")
        await pilot.press("escape")
        await pilot.pause()
        # Click the conversation (the "You asked" header), then a: it runs.
        await pilot.click("#conversation", offset=(3, 1))
        await pilot.pause()
        assert app.focused is not screen.approval_bar
        await pilot.press("a")
        await tui.wait_idle(pilot)
    assert len(of(seen, RunStarted)) == 1
    assert [f.status for f in of(seen, Finished)] == ["PASSED"]


async def test_footer_shows_only_what_applies_and_quit_asks_during_a_run(tui, tmp_path: Path):
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('x')")
    app = tui.make_app(ws, transcript)
    async with app.run_test(size=WIDE) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        idle = footer_keys(app)
        assert idle.get("app.quit") == "ctrl+q", "quit is in the footer"
        assert "stop" not in idle and "retry" not in idle and "approve('accept')" not in idle
        assert "switch_target" in idle, "one target: the key says how to add one"
        await tui.type_prompt(pilot, "print x")
        await tui.wait_approval(pilot)
        busy = footer_keys(app)
        assert "stop" in busy and "approve('accept')" in busy
        await pilot.press("ctrl+q")
        await tui.wait_screen(pilot, ConfirmScreen, what="asked")
        assert "run is going on" in app.screen.question
        await pilot.press("n")
        await tui.wait_for(pilot, lambda: app.screen is tui.main(app), what="back")
        assert app.is_running and tui.main(app).pending_approval is not None
        await pilot.press("s")
        await tui.wait_idle(pilot)
        await pilot.press("ctrl+q")  # idle: quits at once
        await tui.wait_for(pilot, lambda: not app.is_running, what="the app to exit")


def test_remaps_onto_text_editing_keys_are_refused_and_the_guide_example_is_not() -> None:
    good, problems = check_keymap({"switch_target": "ctrl+w", "new_chat": "ctrl+a",
                                   "toggle_diff": "x", "retry": "enter",
                                   "approval.accept": "ctrl+k", "toggle_history": "f10"})
    assert good == {"toggle_history": "f10"}
    text = "\n".join(problems)
    assert "switch_target = 'ctrl+w' not used: ctrl+w edits text in the prompt box" in text
    assert "new_chat = 'ctrl+a'" in text and "retry = 'enter'" in text
    assert "toggle_diff = 'x' not used: x would be typed into the prompt box" in text
    assert "approval.accept = 'ctrl+k'" in text
    guide = (ROOT / "docs" / "app.md").read_text()  # the guide's page on the app's keys
    assert 'e.g. `switch_target = "ctrl+f"`' in guide
    assert check_keymap({"switch_target": "ctrl+f"}) == ({"switch_target": "ctrl+f"}, [])


async def test_the_guide_remap_works_and_shows_in_the_footer(tui, tmp_path: Path) -> None:
    app = tui.make_app(tui.ws, data={**TWO_TARGETS,
                                              "ui": {"keys": {"switch_target": "ctrl+f",
                                                              "approval.accept": "g"}}})
    async with app.run_test(size=WIDE) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        assert footer_keys(app).get("switch_target") == "ctrl+f"
        tui.main(app).prompt_box.focus()
        await pilot.press("ctrl+f")  # from the prompt box, too
        await tui.wait_for(pilot, lambda: app.session.target_name == "other", what="switched")
        assert tui.main(app).prompt_box.value == ""
        assert "g accept" in str(tui.main(app).query_one("#approval-keys").render())


# -- item 3: the prompt box ----------------------------------------------------------------


async def test_prompt_box_keeps_pasted_lines_newline_keys_and_enter_sends(tui, tmp_path: Path):
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('ok')")
    app = tui.make_app(ws, transcript)
    seen, hook = recorder()
    async with app.run_test(size=WIDE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        box = tui.main(app).prompt_box
        box.focus()
        assert box.size.height == 1, "one line of text to start with"
        app.post_message(events.Paste("Count the words\nof [this] text:\n  the fox"))
        await pilot.pause()
        await pilot.press("ctrl+j", *"and", "shift+enter", *"more")
        await pilot.pause()
        assert box.value == "Count the words\nof [this] text:\n  the fox\nand\nmore"
        assert box.size.height == 5, "the box grew with its lines"
        await pilot.press("enter")
        await tui.wait_approval(pilot)
        await pilot.press("s")
        await tui.wait_idle(pilot)
    sent = of(seen, PromptSent)[0].text
    assert "Count the words\nof [this] text:\n  the fox\nand\nmore" in sent
    h = History(ws)
    assert "of [this] text:\n  the fox\nand\nmore" in h.sessions()[0]["prompt"]
    h.close()


# -- item 5: coherent state ----------------------------------------------------------------


async def test_auto_accept_turned_on_runs_the_waiting_version_and_ctrl_n_clears(tui, tmp_path):
    ws = tui.ws
    app = tui.make_app(ws, tui.EXAMPLE)
    seen, hook = recorder()
    async with app.run_test(size=WIDE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "count words")
        await tui.wait_approval(pilot)
        await pilot.press("ctrl+o")  # the version already waiting runs too
        await tui.wait_idle(pilot, timeout=60)
        screen = tui.main(app)
        assert [f.status for f in of(seen, Finished)] == ["PASSED"]
        runs = of(seen, RunStarted)
        assert [r.attempt for r in runs] == [1, 2]
        status = screen.status_bar
        assert status.attempt == 2
        assert screen.output_pane.border_title == "Output — attempt 2 on local"
        assert [p.attempt for p in of(seen, PromptSent)] == [1, 2]
        await pilot.press("ctrl+n")
        await tui.wait_for(pilot, lambda: not screen.code_pane.files, what="panes cleared")
        assert screen.output_pane.lines == [] and status.attempt == 0
        assert screen.output_pane.border_title == "Output"
        assert not screen.conversation.query(".prompt-title, .prompt, .answer")


# -- item 6: 80x24 -------------------------------------------------------------------------


async def test_at_80x24_history_is_an_overlay_and_code_and_conversation_share(tui, tmp_path):
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('small')")
    app = tui.make_app(ws, transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        await pilot.pause()
        screen = tui.main(app)
        assert screen.has_class("-narrow")
        assert not screen.history_pane.display or screen.history_pane.region.width == 0
        await pilot.press("f2")
        await pilot.pause()
        assert screen.history_pane.region.width > 0 and app.focused is screen.history_pane
        await pilot.press("escape")
        await pilot.pause()
        assert screen.history_pane.region.width == 0
        await tui.type_prompt(pilot, "print small")
        await tui.wait_approval(pilot)
        await pilot.pause()
        code, conversation = screen.code_pane, screen.conversation
        assert code.region.width == 80 and conversation.region.width == 0, "code has the top"
        assert code.region.height >= 8
        await pilot.press("f5")
        await pilot.pause()
        assert conversation.region.width == 80 and code.region.width == 0
        await pilot.press("a")
        await tui.wait_idle(pilot)


async def test_resizing_across_80_columns_shows_both_panes_then_the_chosen_one(tui, tmp_path):
    """Which of code and conversation has a narrow screen's top is remembered while the
    screen is wide, where both show."""
    transcript = tui.write_answers(tui.ws.parent / "t.md", "print('small')")
    app = tui.make_app(tui.ws, transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        await tui.type_prompt(pilot, "print small")
        await tui.wait_approval(pilot)
        screen = tui.main(app)
        code, conversation = screen.code_pane, screen.conversation
        await pilot.resize_terminal(140, 44)
        await tui.wait_for(pilot, lambda: not screen.narrow, what="a wide layout")
        await pilot.pause()
        assert code.region.width > 20 and conversation.region.width > 20, "both show"
        await pilot.resize_terminal(80, 24)
        await tui.wait_for(pilot, lambda: screen.narrow, what="a narrow layout")
        await pilot.pause()
        assert code.region.width == 80 and conversation.region.width == 0, "code kept the top"
        await pilot.press("f5")
        await pilot.resize_terminal(140, 44)
        await tui.wait_for(pilot, lambda: not screen.narrow, what="a wide layout")
        await pilot.pause()
        assert code.region.width > 20 and conversation.region.width > 20
        await pilot.resize_terminal(80, 24)
        await tui.wait_for(pilot, lambda: screen.narrow, what="a narrow layout")
        await pilot.pause()
        assert conversation.region.width == 80 and code.region.width == 0
        await pilot.press("a")
        await tui.wait_idle(pilot)


async def test_feedback_review_at_80x24_leaves_the_output_8_rows(tui, tmp_path: Path) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "raise SystemExit('bad')", "print('ok')")
    app = tui.make_app(ws, transcript, review_feedback=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await tui.type_prompt(pilot, "fail once")
        await tui.wait_approval(pilot)
        await pilot.press("a")
        await tui.wait_feedback(pilot, what="feedback review")
        await pilot.pause()
        output = tui.main(app).query_one(OutputPane)
        assert output.content_region.height >= 8, output.content_region
        assert tui.main(app).feedback_bar.region.height >= 6
        await pilot.press("ctrl+g")
        await tui.wait_idle(pilot)


# -- item 7: small things ------------------------------------------------------------------


async def test_f8_cycles_the_llms_without_starting_one(tui, tmp_path: Path) -> None:
    app = tui.make_app(tui.ws)
    async with app.run_test(size=WIDE) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        names = app.session.llm_names
        assert names[0].startswith("replay:") and {"chatgpt", "claude"} <= set(names)
        await pilot.press("f8")
        await tui.wait_for(pilot, lambda: app.session.llm_spec == names[1], what="switched")
        assert tui.main(app).status_bar.llm == names[1]
        assert app.session.llm is None, "the browser starts with the next prompt, not now"
        for i in range(2, len(names) + 1):  # each switch lands before the next key
            await pilot.press("f8")
            await tui.wait_for(pilot, lambda i=i: app.session.llm_spec == names[i % len(names)],
                               what=f"switched to {names[i % len(names)]}")
        assert app.session.llm_spec == names[0], "round"
        await tui.type_prompt(pilot, "count words")
        await tui.wait_approval(pilot)
        assert "f8" not in [k for k, b in app.screen.active_bindings.items() if b.enabled
                            and b.binding.action == "switch_llm"], "not during a run"
        await pilot.press("s")
        await tui.wait_idle(pilot)


async def test_history_pane_lists_the_session_with_follow_ups_and_stopped_by_you(tui, tmp_path):
    app = tui.app_answering("print('a')", "print('b')")
    async with tui.running(app, size=WIDE) as pilot:
        await tui.type_prompt(pilot, "print a")
        await tui.wait_approval(pilot)
        await pilot.press("a")
        await tui.wait_idle(pilot)
        await tui.type_prompt(pilot, "now print b instead")
        await tui.wait_approval(pilot)
        await pilot.press("s")
        await tui.wait_idle(pilot)
        pane = tui.main(app).history_pane
        pane.root.children[0].expand()
        await pilot.pause()
        labels = [str(n.label) for n in pane.root.children[0].children]
        assert any(label.startswith("» follow-up: now print b instead") for label in labels)
        assert any("stopped by you" in label for label in labels), labels


async def test_f4_diffs_against_the_rejected_version_too(tui, tmp_path: Path) -> None:
    app = tui.app_answering("print('first try')", "print('second try')")
    async with tui.running(app, size=WIDE) as pilot:
        await tui.type_prompt(pilot, "print a try")
        await tui.wait_approval(pilot)
        await pilot.press("r")
        await pilot.press(*"not that", "enter")
        await tui.wait_approval(pilot, attempt=2, what="second version")
        code = tui.main(app).query_one(CodePane)
        await pilot.press("f4")
        await pilot.pause()
        assert code.mode == "diff"
        shown = str(code.query_one("#code-diff").query_one(".code-text").render())
        assert "-print('first try')" in shown and "+print('second try')" in shown
        await pilot.press("s")
        await tui.wait_idle(pilot)


async def test_resuming_a_session_shows_that_session(tui, tmp_path: Path) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('from session one')")
    app = tui.make_app(ws, transcript)
    async with app.run_test(size=WIDE) as pilot:
        await tui.type_prompt(pilot, "print from session one")
        await tui.wait_approval(pilot)
        await pilot.press("a")
        await tui.wait_idle(pilot)
        screen = tui.main(app)
        await pilot.press("ctrl+n")
        await tui.wait_for(pilot, lambda: not screen.code_pane.files, what="cleared")
        history = screen.history_pane
        history.focus()
        history.move_cursor(history.root.children[0])
        await pilot.press("r")
        await tui.wait_for(pilot, lambda: screen.code_pane.files, what="the session's code")
        assert "from session one" in screen.code_pane.files[0].content
        await tui.wait_for(pilot, lambda: "from session one" in screen.output_pane.lines,
                           what="its output")
        assert screen.resume_id == 1 and screen.status_bar.attempt == 1
        texts = [str(w.render()) for w in screen.conversation.query(".prompt-body")]
        assert any("print from session one" in t for t in texts), texts
        assert screen.conversation.query(".answer")
