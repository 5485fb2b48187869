"""An API model's thinking is shown apart from its answer (issue 13 items 2 and 4).

In the app: a folded, dimmed block titled "thinking" above the answer, never in
the answer. Headless: dimmed on stderr with ``--show-thinking`` only, never on
stdout. Either way through the ANSI sanitiser: the loopback test server's
thinking carries an escape sequence and a bidi override on purpose.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from api_fixtures import KEY, KEY_ENV, PROMPT, llm_table, run_cli, write_config
from apiserver import ApiServer
from project import EXAMPLES
from textual.widgets import Collapsible, Markdown, Static

from verifybot_tui.llm.replay import parse_answers

THINKING = ("Let me count the words \x1b[31mfirst\x1b[0m.\n"
            "Then the three most common \u202eones\u202c, with a Counter.")
SHOWN = ("Let me count the words first.\n"
         "Then the three most common \\u202eones\\u202c, with a Counter.")


@pytest.fixture
def thinker() -> Iterator[ApiServer]:
    answers = parse_answers((EXAMPLES / "word_count.md").read_text(encoding="utf-8"))
    server = ApiServer(key=KEY, answers=answers, thinking=THINKING).start()
    try:
        yield server
    finally:
        server.stop()


def config(tmp_path: Path, server: ApiServer) -> Path:
    return write_config(tmp_path, llm_table("claude_api", "anthropic", server.anthropic_url,
                                            "thinker", thinking_budget=2048, max_tokens=8000))


@pytest.mark.parametrize("flag", [True, False])
def test_run_prints_thinking_dimmed_on_stderr_only_when_asked(
        flag: bool, thinker: ApiServer, tmp_path: Path) -> None:
    cfg = config(tmp_path, thinker)
    args = ["run", PROMPT, "--llm", "claude_api", "--target", "local", "--yes",
            "--config", str(cfg), "--workspace", str(tmp_path / "ws")]
    proc = run_cli(*args, *(["--show-thinking"] if flag else []), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Total words: 17" in proc.stdout
    assert "Let me count" not in proc.stdout, "thinking never goes to stdout"
    assert "\x1b" not in proc.stderr and "\u202e" not in proc.stderr
    if flag:
        # Once per answer (two answers: the bug, then its fix), marked as thinking.
        assert proc.stderr.count("thinking (not part of the answer):\n" + SHOWN + "\n") == 2
    else:
        assert "Let me count" not in proc.stderr and "thinking (not" not in proc.stderr


def test_run_help_names_show_thinking_with_its_default(tmp_path: Path) -> None:
    proc = run_cli("run", "--help", cwd=tmp_path)
    assert "--show-thinking" in proc.stdout and "(default: off" in proc.stdout


@pytest.mark.usefixtures("tui_env")
async def test_app_shows_thinking_folded_and_dimmed_apart_from_the_answer(tui,
        thinker: ApiServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    data = {"run": {"auto_accept": True},
            "llm": {"claude_api": {"kind": "anthropic", "base_url": thinker.anthropic_url,
                                   "model": "thinker", "api_key_env": KEY_ENV,
                                   "thinking_budget": 2048, "max_tokens": 8000}}}
    app = tui.make_app(tui.ws, data=data, llm="claude_api", review_feedback=False)
    async with app.run_test(size=tui.SIZE) as pilot:
        await tui.type_prompt(pilot, PROMPT)
        await tui.wait_idle(pilot, 60)
        pane = tui.main(app).conversation
        blocks = list(pane.query(".thinking").results(Collapsible))
        assert len(blocks) == 2, "one thinking block per answer"
        answers = list(pane.query(".answer").results(Markdown))
        assert len(answers) == 2
        for block in blocks:
            assert block.collapsed, "folded by default"
            assert str(block.title).startswith(f"thinking ({len(SHOWN.split())} words): ")
            assert "with a Counter." in str(block.title), "the latest line as a preview"
            body = block.query_one(".thinking-text", Static)
            assert str(body.render()) == SHOWN
            assert "dim" in str(body.styles.text_style)
        # each above its own answer
        order = list(pane.children)
        assert order.index(blocks[0]) < order.index(answers[0]) < order.index(blocks[1]) \
            < order.index(answers[1])
        for answer in answers:
            assert "Let me count" not in answer.source and "Counter." not in answer.source
        # Collapsible: Enter on its title unfolds it.
        blocks[1].query_one("CollapsibleTitle").focus()
        await pilot.press("enter")
        await tui.wait_for(pilot, lambda: not blocks[1].collapsed, what="unfolded")
        assert blocks[1].query_one(".thinking-text").region.height >= 2
