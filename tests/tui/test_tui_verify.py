"""Verification in the app: judgements shown and overruled, an unparsable one decided by the
user, the criteria editor (criteria beside the code), and a recipe opened from the palette.

The real app under Pilot, a replayed coder and a replayed judge, real local runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from project import ROOT
from textual.widgets import Input, Static, TextArea

from verifybot_tui.core.loop.events import (
    ApprovalNeeded,
    Finished,
    Judged,
    JudgementNeeded,
    VerdictReached,
)
from verifybot_tui.tui.commands import VerifyBotCommands, edit_criteria, open_recipe
from verifybot_tui.tui.screens.criteria import CriteriaScreen
from verifybot_tui.tui.screens.judgement import JudgementScreen
from verifybot_tui.tui.widgets.code import CodePane

pytestmark = pytest.mark.usefixtures("tui_env")
EXAMPLES = ROOT / "examples"


def of(seen: list[object], kind: type) -> list:
    return [e for e in seen if isinstance(e, kind)]


def judge_file(path: Path, *answers: str) -> Path:
    path.write_text("\n".join(f"## Answer {i}\n\n````markdown\n{a}\n````\n"
                              for i, a in enumerate(answers, 1)), encoding="utf-8")
    return path


async def wait_judgement(tui, pilot) -> JudgementScreen:
    return await tui.wait_screen(pilot, JudgementScreen, what="the judgement dialog")


async def test_the_user_overrules_a_fail_judgement(
    tui, tmp_path: Path, app_messages
) -> None:
    ws = tui.ws
    coder = tui.write_answers(tmp_path / "c.md", 'print("Sum of squares: 55")')
    judge = judge_file(tmp_path / "j.md", "FAIL: 55 is not the sum of the squares")
    app = tui.make_app(ws, coder, data={"run": {"judge": f"replay:{judge}"}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "Print the sum of the squares of 1 to 10")
        await tui.wait_approval(pilot)
        await pilot.press("a")
        screen = await wait_judgement(tui, pilot)
        assert "The judge says FAIL: 55 is not the sum of the squares" in str(
            screen.query_one("#dialog-question").render())
        await pilot.press("v")
        await tui.wait_idle(pilot)
    (j,) = of(seen, Judged)
    assert j.judgement.line == "FAIL: 55 is not the sum of the squares"
    (fin,) = of(seen, Finished)
    assert (fin.status, fin.message) == ("VERIFIED", "the user accepted it over the judge's FAIL")
    assert fin.record["attempts"][0]["judge_decision"] == "accept"


async def test_an_unparsable_judgement_asks_the_user_even_with_auto_accept(
    tui, tmp_path, app_messages
) -> None:
    ws = tui.ws
    coder = tui.write_answers(tmp_path / "c.md", 'print("Sum of squares: 285")',
                              'print("Sum of squares: 385")')
    judge = judge_file(tmp_path / "j.md", "It looks fine to me.", "PASS")
    app = tui.make_app(ws, coder, data={"run": {"judge": f"replay:{judge}"}})
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        await pilot.press("ctrl+o")  # auto-accept: only what nobody else can decide is asked
        await tui.type_prompt(pilot, "Print the sum of the squares of 1 to 10")
        screen = await wait_judgement(tui, pilot)
        shown = str(screen.query_one("#judge-answer Static", Static).render())
        assert "It looks fine to me." in shown
        note = screen.query_one("#judge-note", Input)
        note.focus()
        note.value = "285 misses 10 squared"
        await pilot.press("enter")  # a note sends it back as a failure
        await tui.wait_idle(pilot)
    needed = of(seen, JudgementNeeded)
    assert len(needed) == 1 and needed[0].judgement.verdict == "UNPARSABLE"
    assert [j.judgement.verdict for j in of(seen, Judged)] == ["UNPARSABLE", "PASS"]
    (fin,) = of(seen, Finished)
    assert fin.status == "VERIFIED"
    assert "285 misses 10 squared" in (ws / fin.record["transcript"]).read_text()


async def test_the_criteria_editor_checks_lines_and_the_criteria_fail_a_run(
    tui, tmp_path, app_messages
) -> None:
    ws = tui.ws
    app = tui.make_app(ws, EXAMPLES / "rocket.md")
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.wait_for(pilot, lambda: tui.main(app).is_mounted)
        app.call_later(edit_criteria, tui.main(app))  # as the palette does, in the app
        editor = await tui.wait_screen(pilot, CriteriaScreen, what="the criteria editor")
        area = editor.query_one("#criteria-text", TextArea)
        area.text = "contains:Apogee\nrange:Apogee (\\d+)"
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: "line 2: bad criterion" in str(
            editor.query_one("#dialog-error", Static).render()), what="the error")
        assert isinstance(app.screen, CriteriaScreen)  # not saved
        area.text = "contains:Apogee\nrange:Apogee: ([0-9.]+) m:100..5000\n"
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: not isinstance(app.screen, CriteriaScreen))
        assert tui.main(app).query_one(CodePane).border_subtitle == (
            "criteria: contains:Apogee; range:Apogee: ([0-9.]+) m:100..5000")
        await pilot.press("ctrl+o")
        await tui.type_prompt(pilot, "Simulate a rocket and print its apogee")
        await tui.wait_idle(pilot)
    assert [v.verdict.status for v in of(seen, VerdictReached)] == ["criteria_unmet", "success"]
    (fin,) = of(seen, Finished)
    assert (fin.status, fin.message) == ("VERIFIED", "all 2 success criteria met")


def rocket_recipe(tmp_path: Path, auto_accept: bool | None = None) -> Path:
    """A recipe for examples/rocket.md's answers; auto_accept None: no such key."""
    recipe = tmp_path / "r.toml"
    accept = "" if auto_accept is None else f"auto_accept = {str(auto_accept).lower()}\n"
    recipe.write_text(f'name = "rocket"\nprompt = "Simulate a rocket"\n{accept}'
                      'criteria = ["range:Apogee: ([0-9.]+) m:100..5000"]\n')
    return recipe


async def open_recipe_file(tui, pilot, path: Path) -> None:
    """Open the recipe at ``path`` as the palette's "Open recipe…" does."""
    app = pilot.app
    app.call_later(open_recipe, tui.main(app))  # what the palette's "Open recipe…" calls
    box = await tui.wait_for(pilot, lambda: app.screen.query("#recipe-path")
                             and app.screen.query_one("#recipe-path", Input))
    box.value = str(path)
    await pilot.press("enter")


@pytest.fixture
def rocket_app(tui):
    """The app on the rocket example's replay: attempt 1 prints "Apogee: 0.0 m" (exit 0),
    attempt 2 a real apogee."""
    return tui.make_app(tui.ws, EXAMPLES / "rocket.md")


async def test_a_recipe_opened_from_the_palette_runs_with_its_criteria(
    tui, tmp_path, app_messages, rocket_app
) -> None:
    recipe = rocket_recipe(tmp_path)
    app = rocket_app
    async with tui.running(app, app_messages) as pilot:
        await pilot.press("ctrl+o")
        titles = [t for t, _h, _c in VerifyBotCommands(app.screen)._commands()]
        assert "Success criteria…" in titles and "Open recipe…" in titles
        await open_recipe_file(tui, pilot, recipe)
        await tui.wait_idle(pilot)
    (fin,) = app_messages.of(Finished)
    assert fin.status == "VERIFIED"
    assert fin.record["prompt"] == "Simulate a rocket"
    assert fin.record["criteria"] == ["range:Apogee: ([0-9.]+) m:100..5000"]


async def test_a_recipe_with_auto_accept_runs_each_version_without_asking(
    tui, tmp_path, app_messages, rocket_app
) -> None:
    app = rocket_app
    async with tui.running(app, app_messages) as pilot:
        assert tui.main(app).auto_accept is False  # the app asks by default
        await open_recipe_file(tui, pilot, rocket_recipe(tmp_path, auto_accept=True))
        await tui.wait_idle(pilot)
        assert tui.main(app).auto_accept is True and app.session.auto_accept is True
        shown = str(app.screen.query_one("StatusBar").render())  # full or short labels
        assert "auto-accept [b]on[/]" in shown or "auto [b]on[/]" in shown, shown
    assert app_messages.of(ApprovalNeeded) == []  # both versions ran without a question
    (fin,) = app_messages.of(Finished)
    assert fin.status == "VERIFIED" and len(fin.record["attempts"]) == 2


async def test_a_recipe_with_auto_accept_false_asks_even_if_the_app_accepted(
    tui, tmp_path, app_messages, rocket_app
) -> None:
    app = rocket_app
    async with tui.running(app, app_messages) as pilot:
        await pilot.press("ctrl+o")
        assert tui.main(app).auto_accept is True
        await open_recipe_file(tui, pilot, rocket_recipe(tmp_path, auto_accept=False))
        await tui.wait_approval(pilot)  # the usual approval: the user accepts each version
        assert tui.main(app).auto_accept is False
        await pilot.press("a")
        await tui.wait_feedback(pilot, what="feedback for review")
        await pilot.press("ctrl+s")  # the feedback is reviewed too: auto-accept is off
        await tui.wait_approval(pilot, attempt=2, what="approval 2")
        await pilot.press("a")
        await tui.wait_idle(pilot)
    assert len(app_messages.of(ApprovalNeeded)) == 2
    (fin,) = app_messages.of(Finished)
    assert fin.status == "VERIFIED"


async def test_a_recipes_compiler_and_flags_build_the_code_in_the_app(
    tui, tmp_path, app_messages
) -> None:
    from cli_runs import C_ANSWER, CLEAN, UNUSED, answers

    ws = tui.ws
    seen = app_messages.events
    coder = tmp_path / "c.md"
    coder.write_text(answers(C_ANSWER.format(UNUSED), C_ANSWER.format(CLEAN)))
    recipe = tmp_path / "r.toml"
    recipe.write_text('name = "hi"\nprompt = "Print hi in C"\nauto_accept = true\n'
                      'compiler = "gcc"\nflags = ["-Wall", "-Werror"]\n')
    app = tui.make_app(ws, coder)
    async with tui.running(app, app_messages) as pilot:
        await open_recipe_file(tui, pilot, recipe)
        await tui.wait_idle(pilot)
    assert [v.verdict.status for v in of(seen, VerdictReached)] == ["compile_error", "success"]
    (fin,) = of(seen, Finished)
    assert (fin.status, fin.message) == ("VERIFIED", "all 1 success criteria met")
    assert fin.record["criteria"] == ["compiles-clean"]
    text = (ws / fin.record["transcript"]).read_text()
    assert "- command: gcc -Wall -Werror -o prog " in text


async def test_criteria_edited_during_a_session_judge_its_next_run(
    tui, tmp_path, app_messages
) -> None:
    """The editor is reachable while a session waits at the approval bar; the criteria
    saved there judge the run that follows: 'Apogee: 0.0 m' now fails, the fix passes."""
    ws = tui.ws
    app = tui.make_app(ws, EXAMPLES / "rocket.md")
    seen, hook = app_messages.events, app_messages.hook
    async with app.run_test(size=tui.SIZE, message_hook=hook) as pilot:
        await tui.type_prompt(pilot, "Simulate a rocket and print its apogee")
        await tui.wait_approval(pilot)  # the session is on: attempt 1 waits for approval
        assert app.session.loop is not None and app.session.loop.running
        app.call_later(edit_criteria, tui.main(app))
        editor = await tui.wait_screen(pilot, CriteriaScreen, what="the criteria editor")
        editor.query_one("#criteria-text", TextArea).text = "range:Apogee: ([0-9.]+) m:100..5000"
        await pilot.press("ctrl+s")
        await tui.wait_for(pilot, lambda: not isinstance(app.screen, CriteriaScreen))
        assert tui.main(app).query_one(CodePane).border_subtitle == (
            "criteria: range:Apogee: ([0-9.]+) m:100..5000")
        await tui.wait_approval(pilot)
        await pilot.press("ctrl+o")  # auto-accept from now on: the feedback and attempt 2
        await pilot.press("a")
        await tui.wait_idle(pilot)
    assert [v.verdict.status for v in of(seen, VerdictReached)] == ["criteria_unmet", "success"]
    (fin,) = of(seen, Finished)
    assert (fin.status, fin.message) == ("VERIFIED", "all 1 success criteria met")
