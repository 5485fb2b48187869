"""Every decision the app offers, each against the real loop and real programs.

Reject with a note, stop, $EDITOR, an outside save picked up by watchfiles,
auto-accept, the install question, a stopped run, follow-ups and resuming a
past session from the history pane.
"""

from __future__ import annotations

import stat
import sys
from pathlib import Path

import pytest
from proc_helpers import alive
from textual.widgets import Input

from verifybot_tui.core.loop.events import Finished, PromptSent, RunStarted, SessionStarted
from verifybot_tui.core.store.history import History
from verifybot_tui.tui.screens.dialogs import ConfirmScreen
from verifybot_tui.tui.widgets.code import CodePane
from verifybot_tui.tui.widgets.history import HistoryPane
from verifybot_tui.tui.widgets.output import OutputPane
from verifybot_tui.tui.widgets.status import StatusBar

pytestmark = pytest.mark.usefixtures("tui_env")



def of(seen: list[object], kind: type) -> list:
    return [e for e in seen if isinstance(e, kind)]


async def test_reject_with_note_then_stop(tui, tmp_path: Path, app_messages) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('one')", "print('two')")
    app = tui.make_app(ws, transcript)
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "print something")
        await tui.wait_approval(pilot)
        await pilot.press("r")
        note = tui.main(app).query_one("#reject-note", Input)
        assert note.has_focus
        note.value = "use a function"
        await pilot.press("enter")
        await tui.wait_approval(pilot, attempt=2, what="second version")
        await pilot.press("s")
        await tui.wait_idle(pilot)
    prompts = of(seen, PromptSent)
    assert [p.kind for p in prompts] == ["initial", "reject"]
    assert "use a function" in prompts[1].text
    assert [f.status for f in of(seen, Finished)] == ["STOPPED"]
    assert not of(seen, RunStarted), "nothing ran"
    h = History(ws)
    assert [a["status"] for a in h.attempts(1)] == ["REJECTED", "STOPPED"]
    h.close()


async def test_external_editor_and_missing_editor(tui, tmp_path: Path, monkeypatch, app_messages,
                                                  notices) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('as written')")
    editor = ws.parent / "fake-editor"
    editor.write_text(f"#!{sys.executable}\nimport sys\n"
                      "open(sys.argv[-1], 'w').write(\"print('from the editor')\\n\")\n")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    app = tui.make_app(ws, transcript)
    async with app.run_test(size=tui.SIZE, message_hook=app_messages.hook) as pilot:
        await tui.type_prompt(pilot, "print something")
        await tui.wait_approval(pilot)
        await pilot.press("o")
        await tui.wait_for(pilot, lambda: [n.message for n in notices
                                           if "No editor set" in n.message] or None,
                       what="a no-editor notice")
        monkeypatch.setenv("EDITOR", f"{editor} --wait")
        await pilot.press("o")
        code = tui.main(app).query_one(CodePane)
        await tui.wait_for(pilot, lambda: code.edits, what="the editor's text")
        assert "from the editor" in code.edits["print_something.py"]
        await pilot.press("a")
        await tui.wait_idle(pilot)
        assert "from the editor" in tui.main(app).query_one(OutputPane).lines


async def test_outside_save_of_the_program_file_is_picked_up(tui, tmp_path: Path) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('as written')")
    app = tui.make_app(ws, transcript)
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.type_prompt(pilot, "print something")
        await tui.wait_approval(pilot)
        screen = tui.main(app)
        saved = screen.saved_paths["print_something.py"]
        assert saved == ws / "programs" / "print_something_1.py"
        code = screen.query_one(CodePane)
        # The watcher starts in the background: save again until it has seen a save.
        def seen_or_saved_again() -> bool:
            if code.edits:
                return True
            saved.write_text("print('saved outside')\n")
            return False

        await tui.wait_for(pilot, seen_or_saved_again, timeout=10, what="the outside save")
        await pilot.press("a")
        await tui.wait_idle(pilot)
        assert "saved outside" in screen.query_one(OutputPane).lines
    assert not any(w.group == "watch" and w.is_running for w in app.workers)


async def test_auto_accept_runs_without_asking(tui, tmp_path: Path, app_messages) -> None:
    ws = tui.ws
    app = tui.make_app(ws, tui.EXAMPLE)
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        await pilot.press("ctrl+o")
        assert tui.main(app).query_one(StatusBar).auto_accept
        await tui.type_prompt(pilot, "count words")
        await tui.wait_idle(pilot)
        assert tui.main(app).pending_approval is None
    assert [f.status for f in of(seen, Finished)] == ["PASSED"]
    assert len(of(seen, RunStarted)) == 2


async def test_install_question_is_a_modal_and_no_means_no(tui, tmp_path: Path,
                                                           app_messages) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md",
                                   "import vb_no_such_pkg_zz\nprint(vb_no_such_pkg_zz)")
    app = tui.make_app(ws, transcript, data={"run": {"max_retries": 0}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.prompt_and_accept(pilot, "use a package")
        asked = await tui.wait_screen(pilot, ConfirmScreen, what="the question")
        assert "vb-no-such-pkg-zz" in asked.question or "vb_no_such_pkg_zz" in asked.question
        await pilot.press("n")
        await tui.wait_idle(pilot)
        output = tui.main(app).query_one(OutputPane)
        assert any("ModuleNotFoundError" in line for line in output.lines)
    assert [f.status for f in of(seen, Finished)] == ["FAILED"]


async def test_stop_a_running_program(tui, tmp_path: Path, app_messages,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFYBOT_NO_SANDBOX", "1")  # its pid is looked up in /proc
    ws = tui.ws
    marker = ws.parent / "pid"
    transcript = tui.write_answers(
        ws.parent / "t.md",
        f"import os, time\nopen({str(marker)!r}, 'w').write(str(os.getpid()))\n"
        "print('tick', flush=True)\ntime.sleep(60)")
    app = tui.make_app(ws, transcript, data={"run": {"timeout": 120.0}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.prompt_and_accept(pilot, "sleep")
        output = tui.main(app).query_one(OutputPane)
        await tui.wait_for(pilot, lambda: output.flush() or "tick" in output.lines, what="tick")
        await pilot.press("ctrl+g")
        await tui.wait_idle(pilot, timeout=15)
    assert [f.status for f in of(seen, Finished)] == ["STOPPED"]
    assert not alive(int(marker.read_text())), "the program was killed"


async def test_follow_up_new_chat_and_resume_from_history(tui, tmp_path: Path,
                                                          app_messages) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('first')", "print('second')",
                                   "print('third')")
    app = tui.make_app(ws, transcript, data={"run": {"auto_accept": True}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        screen = tui.main(app)
        await tui.type_prompt(pilot, "say first")
        await tui.wait_idle(pilot)
        # A follow-up stays in the conversation: the next answer, no new probe.
        await tui.type_prompt(pilot, "now say second")
        await tui.wait_idle(pilot)
        assert screen.query_one(OutputPane).lines[-2] == "second"
        # ctrl+n: a new chat starts over (the replay restarts at answer 1).
        await pilot.press("ctrl+n")
        await tui.type_prompt(pilot, "again")
        await tui.wait_idle(pilot)
        assert "first" in screen.query_one(OutputPane).lines
        # Resume session 1 from the history pane: the follow-up goes to its conversation.
        history = screen.query_one(HistoryPane)
        history.focus()
        node = next(n for n in history.root.children if n.data.session["id"] == 1)
        history.move_cursor(node)
        await pilot.press("r")
        assert screen.resume_id == 1
        await tui.type_prompt(pilot, "and the third")
        await tui.wait_idle(pilot)
        assert "third" in screen.query_one(OutputPane).lines
    sessions = [e.session_id for e in of(seen, SessionStarted)]
    assert sessions == [1, 1, 2, 1], "a follow-up stays in its session; ctrl+n starts one"
    kinds = [p.kind for p in of(seen, PromptSent)]
    assert kinds == ["initial", "free", "initial", "free"]


async def test_llm_error_is_shown_and_the_app_stays_usable(tui, tmp_path: Path, app_messages,
                                                           notices) -> None:
    app = tui.app_answering("raise SystemExit(3)", data={"run": {"auto_accept": True}})
    seen = app_messages.events
    async with tui.running(app, app_messages) as pilot:
        await tui.type_prompt(pilot, "fail")
        await tui.wait_idle(pilot)
        assert [f.status for f in of(seen, Finished)] == ["LLM_ERROR"]
        assert any("has no answer 2" in n.message for n in notices)
        await pilot.press("ctrl+n")
        await tui.type_prompt(pilot, "fail again")
        await tui.wait_idle(pilot)
        assert [f.status for f in of(seen, Finished)] == ["LLM_ERROR", "LLM_ERROR"]
        assert app.is_running


async def test_retry_sends_the_last_prompt_in_a_new_chat(tui, tmp_path: Path, app_messages) -> None:
    app = tui.app_answering("print('once')", data={"run": {"auto_accept": True}})
    seen = app_messages.events
    async with tui.running(app, app_messages) as pilot:
        await tui.type_prompt(pilot, "say once")
        await tui.wait_idle(pilot)
        await pilot.press("ctrl+r")
        await tui.wait_for(pilot, lambda: len(of(seen, Finished)) == 2, what="the retry")
        await tui.wait_idle(pilot)
    assert [e.session_id for e in of(seen, SessionStarted)] == [1, 2]
    prompts = of(seen, PromptSent)
    assert [p.kind for p in prompts] == ["initial", "initial"]
    assert all(p.text.startswith("say once") for p in prompts)


async def test_a_second_prompt_waits_for_the_running_one(tui, tmp_path: Path, app_messages,
                                                         notices) -> None:
    ws = tui.ws
    transcript = tui.write_answers(ws.parent / "t.md", "print('only one')")
    app = tui.make_app(ws, transcript)
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "first")
        await tui.type_prompt(pilot, "second, too soon")
        assert any("A run is going on" in n.message for n in notices)
        assert tui.main(app).prompt_box.value == "second, too soon", "kept"
        await tui.wait_approval(pilot)
        await pilot.press("a")
        await tui.wait_idle(pilot)
    assert [e.session_id for e in of(seen, SessionStarted)] == [1]
    assert [f.status for f in of(seen, Finished)] == ["PASSED"]
