"""Issue 23 in the app: what a newcomer tripped over in an afternoon, each under Pilot.

Stopping a run ends the output pane with a "stopped" line; the quit hint is plain
text; a blank prompt is answered; the status bar tells the truth about auto-accept
and an answer not yet begun; a recipe brings its LLM and target; key remaps are
checked against every binding.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project import ROOT
from textual.widgets import Input

from verifybot_tui.core.loop.events import Finished
from verifybot_tui.tui.commands import open_recipe
from verifybot_tui.tui.keys import check_keymap, help_rows, spare_keys, text_editing_keys

pytestmark = pytest.mark.usefixtures("tui_env")
EXAMPLES = ROOT / "examples"

SLOW = """
import time
print("started", flush=True)
time.sleep(300)
"""


def texts(notices) -> str:
    return "\n".join(f"{n.title}: {n.message}" for n in notices)


async def test_ctrl_g_during_a_run_ends_the_output_pane_with_a_stopped_line(
        tui, app_messages) -> None:
    app = tui.app_answering(SLOW, data={"run": {"max_retries": 0, "timeout": 300.0}})
    async with tui.running(app, app_messages) as pilot:
        await tui.prompt_and_accept(pilot, "sleep a while")
        pane = tui.main(app).output_pane
        await tui.wait_for(pilot, lambda: pane.flush() or "started" in pane.lines, 30,
                           "the program's first line")
        assert pane.border_subtitle == "running…"
        await pilot.press("ctrl+g")
        await tui.wait_idle(pilot)
        assert pane.border_subtitle == "stopped"
        assert not pane.running
        assert any("stopped by you" in line for line in pane.lines), pane.lines
    (fin,) = app_messages.of(Finished)
    assert fin.status == "STOPPED"


async def test_ctrl_c_says_how_to_quit_in_plain_words(tui, app_messages, notices) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages) as pilot:
        tui.main(app).history_pane.focus()  # outside a text box ctrl+c is not copy
        await pilot.press("ctrl+c")
        await tui.wait_for(pilot, lambda: "quit" in texts(notices), what="the quit hint")
    text = texts(notices)
    assert "Press ctrl+q to quit the app." in text
    assert "[b]" not in text


async def test_the_quit_hint_names_a_remapped_quit_key(tui, app_messages, notices) -> None:
    app = tui.make_app(tui.ws, data={"ui": {"keys": {"quit": "f10"}}})
    async with tui.running(app, app_messages) as pilot:
        tui.main(app).history_pane.focus()
        await pilot.press("ctrl+c")
        await tui.wait_for(pilot, lambda: "quit" in texts(notices), what="the quit hint")
    assert "Press f10 to quit the app." in texts(notices)


async def test_a_blank_prompt_is_answered_not_sent(tui, app_messages, notices) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages) as pilot:
        await tui.type_prompt(pilot, "   ")
        await tui.wait_for(pilot, lambda: "prompt is empty" in texts(notices),
                           what="the empty-prompt notice")
        assert not tui.main(app).running and app.session.loop is None
        assert app.session.history.sessions() == []


async def test_the_status_bar_says_feedback_goes_unreviewed_under_auto_accept(
        tui, app_messages, notices) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages) as pilot:
        bar = tui.main(app).status_bar
        assert "review feedback" in str(bar.render())
        await pilot.press("ctrl+o")
        await tui.wait_for(pilot, lambda: "unreviewed" in str(bar.render()))
        assert "review feedback" not in str(bar.render())
        await pilot.press("f3", "f3")  # off and on again: the notice says what holds
        await tui.wait_for(pilot, lambda: "sent unreviewed until auto-accept is off"
                           in texts(notices), what="the F3 notice")


def test_an_api_request_not_yet_answered_is_not_called_streaming() -> None:
    from verifybot_tui.tui.widgets.status import LLM_LABELS

    assert LLM_LABELS["sent"] == "sent, waiting for the answer…"


async def test_a_recipe_brings_its_llm_and_target(tui, tmp_path: Path, app_messages) -> None:
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "rocket.md").write_bytes((EXAMPLES / "rocket.md").read_bytes())
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "rocket"\nprompt = "Simulate a rocket"\n'
                      'llm = "replay:answers/rocket.md"\ntarget = "second"\n'
                      'auto_accept = true\n'
                      'criteria = ["range:Apogee: ([0-9.]+) m:100..5000"]\n', encoding="utf-8")
    app = tui.make_app(tui.ws, tui.write_answers(tmp_path / "wrong.md", "print('wrong llm')"),
                       data={"targets": {"second": {"kind": "local"}}})
    async with tui.running(app, app_messages) as pilot:
        app.call_later(open_recipe, tui.main(app))
        box = await tui.wait_for(pilot, lambda: app.screen.query("#recipe-path")
                                 and app.screen.query_one("#recipe-path", Input))
        box.value = str(recipe)
        await pilot.press("enter")
        await tui.wait_for(pilot, lambda: app_messages.of(Finished), 60, "the recipe's run")
        await tui.wait_idle(pilot)
        assert app.session.llm_spec == f"replay:{tmp_path / 'answers' / 'rocket.md'}"
        assert app.session.target_name == "second"
        assert tui.main(app).status_bar.target == "second"
        assert "rocket.md" in tui.main(app).status_bar.llm
    (fin,) = app_messages.of(Finished)
    assert fin.status == "VERIFIED", fin.message
    assert fin.record["target"] == "second"


async def test_a_recipe_naming_an_unknown_target_is_refused_with_a_message(
        tui, tmp_path: Path, app_messages, notices) -> None:
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "x"\nprompt = "p"\ntarget = "nowhere"\n', encoding="utf-8")
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages) as pilot:
        app.call_later(open_recipe, tui.main(app))
        box = await tui.wait_for(pilot, lambda: app.screen.query("#recipe-path")
                                 and app.screen.query_one("#recipe-path", Input))
        box.value = str(recipe)
        await pilot.press("enter")
        await tui.wait_for(pilot, lambda: "Recipe not opened" in texts(notices))
        assert not tui.main(app).running
    assert "no [targets.nowhere]" in texts(notices)


# -- key remaps: every remap against every binding ------------------------------------------


def test_a_remap_onto_a_key_another_binding_uses_is_refused() -> None:
    good, problems = check_keymap({"switch_target": "ctrl+o"})
    assert good == {}
    assert "ctrl+o is toggle_auto_accept" in problems[0]


def test_two_bindings_may_swap_keys() -> None:
    keymap = {"switch_target": "ctrl+o", "toggle_auto_accept": "ctrl+t"}
    assert check_keymap(keymap) == (keymap, [])


def test_pane_keys_may_repeat_in_other_panes_but_not_clash_with_global_ones() -> None:
    assert check_keymap({"history.resume": "w"}) == ({"history.resume": "w"}, [])
    good, problems = check_keymap({"code.wrap": "f2"})
    assert good == {} and "f2 is toggle_history" in problems[0]
    good, problems = check_keymap({"output.wrap": "y"})
    assert good == {} and "y is output.copy" in problems[0]
    good, problems = check_keymap({"new_chat": "ctrl+p"})
    assert good == {} and "ctrl+p is the command palette" in problems[0]


def test_the_keys_a_refusal_calls_free_are_free() -> None:
    from verifybot_tui.tui.keys import ALL_BINDINGS

    _good, problems = check_keymap({"switch_target": "ctrl+w"})
    named = problems[0].split("free now: ")[1].split(")")[0].split(", ")
    assert named and "ctrl+t" not in named and "ctrl+o" not in named
    used = {k for group in ALL_BINDINGS.values() for b in group for k in b.key.split(",")}
    assert not set(named) & (used | text_editing_keys()), named
    assert spare_keys({"switch_target": named[0]})[0] != named[0]


async def test_a_refused_remap_leaves_both_keys_working_and_help_lists_each_once(
        tui, app_messages, notices) -> None:
    from verifybot_tui.tui.screens.help import HelpScreen

    app = tui.make_app(tui.ws, data={"ui": {"keys": {"switch_target": "ctrl+o"}},
                                     "targets": {"second": {"kind": "local"}}})
    async with tui.running(app, app_messages) as pilot:
        await tui.wait_for(pilot, lambda: "ctrl+o is toggle_auto_accept" in texts(notices))
        await pilot.press("ctrl+o")
        await tui.wait_for(pilot, lambda: tui.main(app).auto_accept, what="auto-accept on")
        await pilot.press("ctrl+t")
        await tui.wait_for(pilot, lambda: tui.main(app).target == "second")
        await pilot.press("f1")
        help_screen = await tui.wait_screen(pilot, HelpScreen)
        rows = [r for r in help_rows(help_screen.keymap) if r[1] == "ctrl+o"]
        assert [r[3] for r in rows] == ["toggle_auto_accept"]


# -- the history pane -------------------------------------------------------------------------

WIDE = (200, 50)


async def test_the_history_pane_widens_by_key_and_keeps_its_width(tui, app_messages) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=WIDE) as pilot:
        pane = tui.main(app).history_pane
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 56, what="28% of 200")
        pane.focus()
        await pilot.press("plus", "plus")
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 64, what="two steps wider")
        await pilot.press("minus")
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 60, what="one step back")
    again = tui.make_app(tui.ws)
    async with tui.running(again, size=WIDE) as pilot:
        pane = tui.main(again).history_pane
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 60, what="the kept width")


async def test_the_history_pane_widens_by_a_drag_of_its_edge(tui, app_messages) -> None:
    from textual import events

    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=WIDE) as pilot:
        pane = tui.main(app).history_pane
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 56)
        edge = (pane.region.right - 1, pane.region.y + 5)
        await pilot.mouse_down(offset=edge)
        # A move with the button held, as a terminal reports a drag (Pilot's hover
        # holds none, which ends a drag: see the test below).
        to = edge[0] + 30
        pane.post_message(events.MouseMove(pane, to - pane.region.x, 5, 30, 0, 1, False,
                                           False, False, screen_x=to, screen_y=edge[1]))
        await pilot.pause()
        await pilot.mouse_up(offset=(to, edge[1]))
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 86,
                           what=f"dragged to 86 (now {pane.outer_size.width})")
    from verifybot_tui.core.settings.ui_state import load_ui_state

    assert load_ui_state()["history_width"] == 86


async def test_a_drag_released_before_the_screen_caught_up_keeps_where_it_was_let_go(
        tui, app_messages) -> None:
    """A busy app (or a slow link) gets the last move and the release together: the width
    kept is where the edge was let go, not the pane's size a move behind (seen in tmux)."""
    from textual import events

    from verifybot_tui.core.settings.ui_state import load_ui_state

    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=WIDE) as pilot:
        pane = tui.main(app).history_pane
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 56)
        x, y = pane.region.right - 1, pane.region.y + 5
        await pilot.mouse_down(offset=(x, y))
        for to in (x + 6, x + 12):  # two moves and the release, queued at once
            pane.post_message(events.MouseMove(pane, to - pane.region.x, 5, 6, 0, 1, False,
                                               False, False, screen_x=to, screen_y=y))
        pane.post_message(events.MouseUp(pane, x + 12 - pane.region.x, 5, 0, 0, 1, False,
                                         False, False, screen_x=x + 12, screen_y=y))
        await tui.wait_for(pilot, lambda: "history_width" in load_ui_state(),
                           what="the width kept")
        assert load_ui_state()["history_width"] == 68
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 68,
                           what=f"shown at 68 (now {pane.outer_size.width})")


async def test_a_drag_whose_release_went_elsewhere_ends_at_the_next_hover(
        tui, app_messages) -> None:
    """A whole drag read at once reaches the pane after its release was routed elsewhere:
    the next move without a button ends the drag, and hovering does not resize it."""
    from textual import events

    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages, size=WIDE) as pilot:
        pane = tui.main(app).history_pane
        await tui.wait_for(pilot, lambda: pane.outer_size.width == 56)
        x, y = pane.region.right - 1, pane.region.y + 5
        await pilot.mouse_down(offset=(x, y))  # the press; its release never comes here
        for to in (x + 10, x + 20):  # hovering, no button held
            pane.post_message(events.MouseMove(pane, to - pane.region.x, 5, 10, 0, 0, False,
                                               False, False, screen_x=to, screen_y=y))
        await pilot.pause()
        await pilot.pause()
        assert app.mouse_captured is not pane
        assert pane.outer_size.width == 56


async def test_a_rejected_attempt_shows_its_note_in_the_pane_and_the_detail(
        tui, tmp_path: Path, app_messages) -> None:
    from verifybot_tui.tui.screens.attempt import AttemptScreen

    app = tui.app_answering("print('one')", "print('two')")
    async with tui.running(app, app_messages, size=WIDE) as pilot:
        await tui.type_prompt(pilot, "print something")
        await tui.wait_approval(pilot)
        await pilot.press("r")
        note = tui.main(app).query_one("#reject-note", Input)
        note.value = "use a function please"
        await pilot.press("enter")
        await tui.wait_approval(pilot, attempt=2, what="second version")
        await pilot.press("a")
        await tui.wait_idle(pilot)
        pane = tui.main(app).history_pane
        pane.root.children[0].expand()
        await pilot.pause()
        rejected = pane.root.children[0].children[0]
        assert str(rejected.label) == "↺ attempt 1: rejected, note: use a function please"
        assert pane.outer_size.width > len(str(rejected.label)) + 4, "shown whole at 200 columns"
        pane.focus()
        pane.move_cursor(rejected)
        await pilot.press("enter")
        screen = await tui.wait_screen(pilot, AttemptScreen)
        summary = str(screen.query_one("#attempt-verdict").render())
        assert "Rejected by you. Note for the LLM: use a function please" in summary
        assert "None" not in summary and "—" not in summary
        assert "Run: not run" in summary


async def test_the_diff_tab_compares_the_llms_original_with_the_users_edit(
        tui, app_messages) -> None:
    from textual.widgets import Select, TextArea

    from verifybot_tui.tui.screens.attempt import AttemptScreen

    app = tui.app_answering("print('from the llm')", data={"run": {"max_retries": 0}})
    async with tui.running(app, app_messages, size=WIDE) as pilot:
        await tui.type_prompt(pilot, "print something")
        await tui.wait_approval(pilot)
        code = tui.main(app).code_pane
        await pilot.press("e")
        await tui.wait_for(pilot, lambda: code.mode == "edit" and code.query(TextArea))
        await pilot.press("ctrl+end")  # the inline editor's end of file
        await pilot.press("enter", *"print('mine')")
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: code.mode == "code" and code.edits)
        assert code.edits["print_something.py"].endswith("print('mine')")
        await pilot.press("a")
        await tui.wait_idle(pilot)
        pane = tui.main(app).history_pane
        pane.root.children[0].expand()
        await pilot.pause()
        pane.focus()
        pane.move_cursor(pane.root.children[0].children[0])
        await pilot.press("enter")
        screen = await tui.wait_screen(pilot, AttemptScreen)
        await pilot.press("d")
        options = [str(label) for label, _v in screen._diff_choices()[0]]
        assert any("the LLM's original" in o for o in options), options
        assert any("your edit" in o for o in options), options
        start = screen.query_one("#diff-from", Select).value
        end = screen.query_one("#diff-to", Select).value
        assert start != end
        await tui.wait_for(pilot, lambda: "+print('mine')" in screen.diff_text)
        assert "from the llm" in screen.diff_text


async def test_ctrl_home_goes_to_the_top_of_the_inline_editor(tui, app_messages) -> None:
    from textual.widgets import TextArea

    app = tui.app_answering("a = 1\nb = 2\nprint(a + b)")
    async with tui.running(app, app_messages) as pilot:
        await tui.type_prompt(pilot, "add")
        await tui.wait_approval(pilot)
        code = tui.main(app).code_pane
        await pilot.press("e")
        area = await tui.wait_for(pilot, lambda: code.mode == "edit" and code.query(TextArea)
                                  and code.query(TextArea).first())
        await pilot.press("ctrl+end")
        assert area.cursor_location == area.document.end
        await pilot.press("ctrl+home")
        assert area.cursor_location == (0, 0)
        await pilot.press("ctrl+shift+end")
        assert area.selected_text == area.text
        await pilot.press("escape")
        await pilot.press("s")
        await tui.wait_idle(pilot)


async def test_r_in_the_history_with_no_session_selected_says_so(
        tui, app_messages, notices) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages) as pilot:
        tui.main(app).history_pane.focus()
        await pilot.press("r")
        await tui.wait_for(pilot, lambda: "No session to resume yet" in texts(notices))


async def test_the_conversation_shows_prompts_in_full_as_sent_when_asked(
        tui, app_messages) -> None:
    from textual.widgets import Collapsible, Static

    from verifybot_tui.tui.commands import VerifyBotCommands

    app = tui.app_answering("print('hi')")
    async with tui.running(app, app_messages) as pilot:
        pane = tui.main(app).conversation
        await tui.type_prompt(pilot, "greet")
        await tui.wait_approval(pilot)
        (fold,) = pane.query(".prompt").results(Collapsible)
        assert fold.collapsed, "a long prompt folds by default"
        commands = {t: c for t, _h, c in VerifyBotCommands(app.screen)._commands()}
        commands["Prompts as sent: show in full / fold"]()
        await tui.wait_for(pilot, lambda: not fold.collapsed, what="the prompt unfolded")
        body = str(fold.query_one(".prompt-body", Static).render())
        assert body.startswith("greet") and "Rules for your answer:" in body
        await pilot.press("s")
        await tui.wait_idle(pilot)
    from verifybot_tui.core.settings.ui_state import load_ui_state

    assert load_ui_state()["verbose_prompts"] is True
    again = tui.app_answering("print('hi')")
    async with tui.running(again) as pilot:
        await tui.type_prompt(pilot, "greet")
        await tui.wait_approval(pilot)
        (fold,) = tui.main(again).conversation.query(".prompt").results(Collapsible)
        assert not fold.collapsed, "the choice is kept for the next start"
        await pilot.press("s")
        await tui.wait_idle(pilot)


# -- a desktop notification when a run ends in the background --------------------------------


def notified(app_messages) -> list:
    return list(app_messages.desktop)


async def test_a_run_that_ends_in_the_background_notifies_the_desktop(
        tui, app_messages, monkeypatch) -> None:
    from textual import events

    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")
    monkeypatch.delenv("TMUX", raising=False)
    app = tui.app_answering("print('done')", data={"ui": {"notify_after": 0}})
    async with tui.running(app, app_messages) as pilot:
        await tui.type_prompt(pilot, "print done")
        await tui.wait_approval(pilot)
        app.post_message(events.AppBlur())  # the user went to another window
        await tui.wait_for(pilot, lambda: app.background_since is not None)
        await pilot.press("a")
        await tui.wait_idle(pilot)
        (note,) = await tui.wait_for(pilot, lambda: notified(app_messages))
    assert note.kind == "osc9"
    assert note.sequence.startswith("\x1b]9;VerifyBot: the run finished: PASSED")
    assert note.sequence.endswith("\x07")


async def test_no_notification_while_the_user_looks_or_before_notify_after(
        tui, app_messages) -> None:
    from textual import events

    app = tui.app_answering("print('a')", "print('b')", data={"ui": {"notify_after": 3600}})
    async with tui.running(app, app_messages) as pilot:
        await tui.prompt_and_accept(pilot, "print a")  # in the foreground
        await tui.wait_idle(pilot)
        app.post_message(events.AppBlur())
        await tui.wait_for(pilot, lambda: app.background_since is not None)
        await tui.prompt_and_accept(pilot, "print b")  # background, but not for an hour
        await tui.wait_idle(pilot)
        await pilot.pause()
    assert notified(app_messages) == []


def test_the_notification_kind_follows_the_terminal_and_is_inert() -> None:
    from verifybot_tui.tui.desktop_notify import pick_kind, sequence

    assert pick_kind("auto", {"TERM_PROGRAM": "iTerm.app"}) == "osc9"
    assert pick_kind("auto", {"TERM": "foot"}) == "osc777"
    assert pick_kind("auto", {"TERM": "xterm-256color"}) == "bell"
    assert pick_kind("auto", {"TMUX": "/tmp/tmux-0/default,1,0", "TERM_PROGRAM": "tmux"}) \
        == "bell"
    assert sequence("bell", "t", "b", {}) == "\x07"
    assert sequence("off", "t", "b", {}) == ""
    seq = sequence("osc777", "VerifyBot", "done; \x1b]0;pwned\x07", {})
    assert seq == "\x1b]777;notify;VerifyBot;done   ]0 pwned \x07"
    wrapped = sequence("osc9", "VerifyBot", "done", {"TMUX": "x"})
    assert wrapped == "\x1bPtmux;\x1b\x1b]9;VerifyBot: done\x07\x1b\\"


def test_a_bad_notify_setting_is_refused_with_the_key() -> None:
    from verifybot_tui.core.base.errors import ConfigError
    from verifybot_tui.core.settings.config import parse_config

    with pytest.raises(ConfigError, match="'ui.notify' must be one of auto, osc9"):
        parse_config({"ui": {"notify": "loud"}})
    with pytest.raises(ConfigError, match="ui.notify_after"):
        parse_config({"ui": {"notify_after": -1}})


async def test_a_click_on_the_accept_button_or_the_compact_keys_accepts(
        tui, app_messages) -> None:
    """Button.Pressed ran the bar's action without awaiting it: a click did nothing."""
    from verifybot_tui.core.loop.events import RunStarted

    app = tui.app_answering("print('clicked')", "print('clicked')")
    async with tui.running(app, app_messages) as pilot:
        await tui.type_prompt(pilot, "click it")
        await tui.wait_approval(pilot)
        await pilot.click("#approval-accept")
        await tui.wait_for(pilot, lambda: app_messages.of(RunStarted), what="a run")
        await tui.wait_idle(pilot)
    small = tui.app_answering("print('clicked')")
    async with tui.running(small, app_messages, size=(80, 24)) as pilot:
        await tui.type_prompt(pilot, "click it")
        await tui.wait_approval(pilot)
        keys = tui.main(small).query_one("#approval-keys")
        # The bar turns compact on the screen's size: click once the keys are laid out
        # (before, the click lands where the wide bar's buttons were).
        await tui.wait_for(pilot, lambda: keys.display and keys.region.width > 0,
                           what="the compact bar's keys laid out")
        await pilot.pause()
        await pilot.click(keys, offset=(2, 0))  # "a accept", the first of the keys
        await tui.wait_for(pilot, lambda: len(app_messages.of(RunStarted)) == 2,
                           what="the compact bar's click to run it")
        await tui.wait_idle(pilot)


async def test_the_one_target_notice_names_real_tables_not_a_placeholder(
        tui, app_messages, notices) -> None:
    app = tui.make_app(tui.ws)
    async with tui.running(app, app_messages) as pilot:
        tui.main(app).action_switch_target()  # what the palette's "Switch to the next target" runs
        await tui.wait_for(pilot, lambda: "Only one target" in texts(notices))
    text = texts(notices)
    assert "NAME" not in text
    assert "Only one target is configured (local)" in text and "[targets.pi]" in text
