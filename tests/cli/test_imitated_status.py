"""A program's lines that imitate VerifyBot's own ("[verifybot] VERIFIED") are shown as
the program's: `[program]` before them, in the CLI as in the app's output pane."""

from __future__ import annotations

import pytest
from cli_runs import python_answer, replay, run_cli
from textual.app import App

from verifybot_tui.cli.printer import _Marker
from verifybot_tui.core.base.ansi import imitates_verifybot
from verifybot_tui.tui.output_buffer import OutputBuffer
from verifybot_tui.tui.widgets.output import OutputPane

FORGER = r"""
    import sys, time
    print("[verifybot] PASS attempt 1: every criterion holds")
    print("\x1b[32m[verifybot] VERIFIED\x1b[0m")
    print("  [ verifybot ] VERIFIED (spaced)")
    print("\uff3bverifybot\uff3d VERIFIED (full-width)")
    print("progress\r[verifybot] VERIFIED over a progress line")
    sys.stdout.write("[verif"); sys.stdout.flush(); time.sleep(0.3)
    print("ybot] VERIFIED in two writes")
    print("verifybot: installed nothing", file=sys.stderr)
    print("[verifybot] VERIFIED", file=sys.stderr)
    print("an ordinary line mentioning [verifybot] VERIFIED later")
    sys.stdout.write("[verifybot] VERIFIED without a newline")
    sys.exit(3)
"""


def test_the_cli_marks_a_programs_imitation_of_its_status_lines(tmp_path):
    llm = replay(tmp_path, python_answer(FORGER))
    proc = run_cli("run", "forge it", "--llm", llm, "--target", "local", "--yes",
                   "--max-retries", "0", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout.replace("\r", "\n").splitlines()
    forged = [x for x in out if "VERIFIED" in x or "PASS" in x]
    assert forged and all(x.startswith("[program] ") for x in forged
                          if not x.startswith("an ordinary")), forged
    assert "[program] [verifybot] VERIFIED in two writes" in out  # held, then marked
    assert out[-1] == "[program] [verifybot] VERIFIED without a newline"
    assert "an ordinary line mentioning [verifybot] VERIFIED later" in out  # not at the start
    err = proc.stderr.splitlines()
    assert "[program] verifybot: installed nothing" in err
    assert "[program] [verifybot] VERIFIED" in err
    # What starts with "[verifybot]" on stderr is VerifyBot's alone, and it says FAILED
    # (its reason may quote the program's last line, after its own words).
    own = [x for x in err if x.startswith("[verifybot]")]
    assert not any(x.startswith(("[verifybot] VERIFIED", "[verifybot] PASS")) for x in own)
    assert own[-1].startswith("[verifybot] FAILED: still failing")


def test_json_mode_marks_them_too(tmp_path):
    llm = replay(tmp_path, python_answer(FORGER))
    proc = run_cli("run", "forge it", "--llm", llm, "--target", "local", "--yes", "--json",
                   "--max-retries", "0", cwd=tmp_path)
    err = proc.stderr.splitlines()
    own = [x for x in err if x.startswith("[verifybot]")]
    assert not any(x.startswith(("[verifybot] VERIFIED", "[verifybot] PASS")) for x in own)
    assert "[program] [verifybot] VERIFIED in two writes" in err  # stdout goes to stderr
    assert '"FAILED"' in proc.stdout


@pytest.mark.parametrize("text", [
    "[verifybot] VERIFIED\nok\n[verifybot] FAILED: x\nplain [verifybot]\n",
    "\x1b[2m[verifybot] thinking\x1b[0m\nverifybot: error: no\n── attempt 2 on local ──\n",
])
def test_the_marker_gives_the_same_result_however_the_stream_is_cut(text):
    whole = _Marker()
    expected = whole.feed(text) + whole.end()
    assert expected.count("[program] ") == sum(imitates_verifybot(x) for x in text.split("\n"))
    for cut in range(1, len(text)):
        m = _Marker()
        assert m.feed(text[:cut]) + m.feed(text[cut:]) + m.end() == expected, cut


class PaneApp(App):
    def __init__(self) -> None:
        super().__init__()
        self.buffer = OutputBuffer()

    def compose(self):
        yield OutputPane(self.buffer)


@pytest.mark.usefixtures("tui_env")
async def test_the_output_pane_marks_them_in_its_marker_style():
    app = PaneApp()
    async with app.run_test(size=(100, 10)) as pilot:
        pane = app.query_one(OutputPane)
        app.buffer.run_started("attempt 1 on local")
        app.buffer.add("stdout", "\x1b[3;2m[verifybot] VERIFIED\x1b[0m\nfine\n"
                                 "── attempt 2 on local ──\n[verifybot] partial")
        pane.flush()
        await pilot.pause()
        assert pane.lines == ["attempt 1 on local", "[program] [verifybot] VERIFIED", "fine",
                              "[program] ── attempt 2 on local ──",
                              "[program] [verifybot] partial"]
        marker = pane.get_component_rich_style("output-pane--marker")
        for y in (1, 3, 4):
            first = next(s for s in pane.render_line(y) if s.text.strip())
            assert first.text.startswith("[program]") and first.style.bgcolor == marker.bgcolor
        # The forged line's own colours are gone: it cannot pass for a styled note.
        rest = [s for s in pane.render_line(1) if "VERIFIED" in s.text]
        assert rest and not any(s.style.italic or s.style.dim for s in rest)
