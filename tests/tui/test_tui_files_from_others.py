"""In the app, a board file that sets commands is asked about in a dialog before
anything of it runs: "Don't run" starts nothing and approves nothing, "Run it"
approves this content (by its hash, in the state folder) and the run goes on, the
same content is not asked again at the next start, a changed one is.

A real board file (the built-in netduinoplus2 with a ``qemu`` line that adds an
option, so it is a command of others), a real mcu target (the firmware is built
and runs in QEMU), the real app under Pilot. ``trust._SESSION`` (the yes kept in
this process) is emptied between starts, so "not asked again" shows the yes
kept on disk, as a second start of the app would find it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mcu_fixtures import SUM, qemu_pids
from project import need

from verifybot_tui.core.loop.events import RunStarted, SessionStarted
from verifybot_tui.core.settings import trust
from verifybot_tui.tui.screens.files_from_others import FilesFromOthersScreen
from verifybot_tui.tui.widgets.output import OutputPane

pytestmark = [pytest.mark.usefixtures("tui_env"), pytest.mark.timeout(240)]

QEMU = '["qemu-system-arm", "-M", "netduinoplus2", "-no-reboot"]'


@pytest.fixture(autouse=True)
def _toolchain(monkeypatch: pytest.MonkeyPatch) -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm")
    monkeypatch.setattr(trust, "_SESSION", set())


def store() -> Path:
    return Path(os.environ["XDG_STATE_HOME"]) / "verifybot" / "trusted-files"


def stored() -> str:
    return store().read_text() if store().exists() else ""


def board_file(tmp_path: Path, qemu: str = QEMU) -> Path:
    board = tmp_path / "boards" / "mine.toml"
    board.parent.mkdir(exist_ok=True)
    board.write_text(f'extends = "netduinoplus2"\nqemu = {qemu}\n', encoding="utf-8")
    return board


def with_board(board: Path) -> dict[str, Any]:
    return {"targets": {"local": {"kind": "local"},
                        "board": {"kind": "mcu", "board": str(board)}},
            "run": {"timeout": 5.0, "max_retries": 0}}


def counting(app: Any) -> list[int]:
    """Each question the app's dialog seam is asked (the dialog itself still answers)."""
    asked: list[int] = []
    ask = app.session.ask_trust

    async def counted(files: list[trust.FileToTrust]) -> bool:
        asked.append(len(files))
        return await ask(files)

    app.session.ask_trust = counted
    return asked


async def the_question(tui, pilot) -> FilesFromOthersScreen:  # noqa: ANN001
    return await tui.wait_screen(pilot, FilesFromOthersScreen, timeout=30,
                                 what="the question about the board file")


def shown(screen: FilesFromOthersScreen) -> str:
    return "\n".join(str(w.render()) for w in screen.query(".trust-path, .trust-findings"))


async def test_dont_run_runs_nothing_and_approves_nothing(tui, tmp_path: Path,
                                                          app_messages) -> None:
    board = board_file(tmp_path)
    answers = tui.write_answers(tmp_path / "fw.md", SUM, lang="c")
    data = with_board(board)
    data["run"]["auto_accept"] = True  # as --yes: it answers no question about commands
    app = tui.make_app(tui.ws, answers, data=data)
    asked = counting(app)
    async with tui.running(app, app_messages) as pilot:
        await tui.wait_for(pilot, lambda: "local" in app.session.targets, timeout=60,
                           what="local connected")
        # A prompt about a microcontroller picks the board: the connect and the run wait
        # on one question (asked once), before the target is built from the file.
        await tui.type_prompt(pilot, "sum 1 to 10 on the STM32 microcontroller")
        screen = await the_question(tui, pilot)
        text = shown(screen)
        assert str(board) in text
        assert "qemu = qemu-system-arm -M netduinoplus2 -no-reboot" in text
        assert "runs this command as the emulator" in text
        assert screen.focused is not None and screen.focused.id == "no"
        await pilot.press("escape")
        await tui.wait_for(pilot, lambda: not tui.main(app).running, what="the run refused")
        await tui.wait_for(pilot, lambda: any(n.title == "Not run" for n in app_messages.notices),
                           what="the notice")
        notice = next(n for n in app_messages.notices if n.title == "Not run")
        assert str(board) in notice.message and "qemu" in notice.message
        assert "--trust" in notice.message
        assert "board" not in app.session.targets
        # Ctrl+T back to local, then to the board again: asked again; Enter on the
        # focused "Don't run" says no.
        await pilot.press("ctrl+t")
        await tui.wait_for(pilot, lambda: app.session.target_name == "local",
                           what="back on local")
        await pilot.press("ctrl+t")
        await the_question(tui, pilot)
        await pilot.press("enter")
        await tui.wait_for(pilot, lambda: len([n for n in app_messages.notices
                                               if n.title == "Not run"]) == 2,
                           what="the second notice")
        assert "board" not in app.session.targets
        assert app.session.history.sessions() == []
    assert asked == [1, 1]
    assert app_messages.of(SessionStarted) == [] and app_messages.of(RunStarted) == []
    assert stored() == "" and not trust.is_approved(trust.digest(board.read_bytes()))
    assert qemu_pids(tui.ws) == []
    errors = [n.message for n in app_messages.notices if n.severity == "error"]
    assert errors == []  # told once, as "Not run", not again as a failure


async def test_run_it_approves_the_content_once_and_a_change_is_asked_again(
        tui, tmp_path: Path, app_messages, monkeypatch: pytest.MonkeyPatch) -> None:
    board = board_file(tmp_path)
    answers = tui.write_answers(tmp_path / "fw.md", SUM, lang="c")
    app = tui.make_app(tui.ws, answers, data=with_board(board), target="board")
    asked = counting(app)
    async with tui.running(app, app_messages) as pilot:
        await the_question(tui, pilot)  # the first start connects the board target
        await pilot.press("y")
        await tui.wait_for(pilot, lambda: trust.digest(board.read_bytes()) in stored(),
                           what="the yes kept")
        await tui.type_prompt(pilot, "sum 1 to 10")
        await tui.wait_approval(pilot, timeout=60)
        await pilot.press("a")
        await tui.wait_idle(pilot, timeout=120)
        lines = tui.main(app).query_one(OutputPane).lines
        assert "sum=55" in lines and "PASSED" in lines
    assert asked == [1]
    assert [s.target for s in app_messages.of(RunStarted)] == ["board"]

    # A second start with the same content: not asked (the yes is read from the store).
    monkeypatch.setattr(trust, "_SESSION", set())
    again = tui.make_app(tui.ws, answers, data=with_board(board), target="board")
    asked = counting(again)
    async with tui.running(again) as pilot:
        await tui.wait_for(pilot, lambda: "board" in again.session.targets
                           and again.session.targets["board"].state == "connected",
                           timeout=60, what="the board target connected")
        assert not isinstance(again.screen, FilesFromOthersScreen)
    assert asked == []

    # A changed file is another content: asked again.
    monkeypatch.setattr(trust, "_SESSION", set())
    board_file(tmp_path, QEMU.replace('"-no-reboot"', '"-no-reboot", "-no-shutdown"'))
    changed = tui.make_app(tui.ws, answers, data=with_board(board), target="board")
    asked = counting(changed)
    async with tui.running(changed) as pilot:
        screen = await the_question(tui, pilot)
        assert "-no-shutdown" in shown(screen)
        await pilot.press("n")
        await tui.wait_for(pilot, lambda: asked == [1], what="the answer")
    assert trust.digest(board.read_bytes()) not in stored()


async def test_trust_at_the_start_approves_without_asking(tui, tmp_path: Path,
                                                          app_messages) -> None:
    board = board_file(tmp_path)
    app = tui.make_app(tui.ws, data=with_board(board), target="board", trust=True)
    async with tui.running(app, app_messages) as pilot:
        await tui.wait_for(pilot, lambda: "board" in app.session.targets
                           and app.session.targets["board"].state == "connected",
                           timeout=60, what="the board target connected")
        assert not isinstance(app.screen, FilesFromOthersScreen)
    assert trust.digest(board.read_bytes()) in stored()
    said = [n.message for n in app_messages.notices if n.title == "--trust"]
    assert said and f"{board}: qemu = qemu-system-arm" in said[0]


async def test_the_question_fits_80x24_with_many_findings(tui, tmp_path: Path) -> None:
    board = tmp_path / "many.toml"
    board.write_text(
        'extends = "netduinoplus2"\ncompiler = "/opt/elsewhere/bin/cc"\n'
        f'qemu = ["qemu-system-arm", "-M", "netduinoplus2", "-D", "{tmp_path}/{"x" * 90}.log"]\n'
        'cpu_flags = ["-mthumb", "-wrapper", "/bin/sh,-c,true", "-fplugin=/tmp/p.so", '
        '"-B/tmp/b", "@/tmp/args", "--specs=/tmp/s.specs"]\n', encoding="utf-8")
    app = tui.make_app(tui.ws, data=with_board(board), target="board")
    async with tui.running(app, size=(80, 24)) as pilot:
        screen = await the_question(tui, pilot)
        assert len(screen.files[0].findings) == 7
        box = screen.query_one("#dialog").region
        assert box.y >= 0 and box.bottom <= 24 and box.right <= 80
        for button in ("#yes", "#no"):  # both answers on screen, inside the dialog
            region = screen.query_one(button).region
            assert box.contains_region(region) and region.bottom <= 24
        findings = screen.query_one("#trust-files")
        assert findings.max_scroll_y > 0  # the rest scrolls
        # the long value wraps inside the dialog: no line wider than the dialog
        assert all(w.region.right <= box.right for w in screen.query(".trust-findings"))
        await pilot.press("n")
