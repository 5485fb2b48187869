"""Core pieces of issue 11 on real parts: history that never lies, real cut counts,
replay that streams big answers in bounded steps, the sanitiser for names."""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest
from loop_runs import make_loop, write_answers
from project import ROOT

from verifybot_tui.core.base.ansi import one_line, visible
from verifybot_tui.core.base.chat_text import head_tail
from verifybot_tui.core.loop.events import Finished
from verifybot_tui.core.settings.secrets import Redactor, program_env
from verifybot_tui.llm.replay import ReplayLLM, parse_answers
from verifybot_tui.targets.capture import OutputCapture
from verifybot_tui.targets.local.target import LocalTarget


class _BrokenTarget(LocalTarget):
    """A local target with a bug in its run: what an internal error looks like."""

    async def run(self, request, on_output):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug in the target")


async def test_an_internal_error_closes_its_attempt_as_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    loop = make_loop(ws, write_answers(tmp_path / "a.md", "print('hi')"), auto_accept=True)
    loop.target = _BrokenTarget(loop.config.targets["local"], ws)
    finished = None
    async for ev in loop.events("anything"):
        if isinstance(ev, Finished):
            finished = ev
    assert finished is not None and finished.status == "ERROR"
    attempts = loop.history.attempts(loop.session_id or 0)
    assert [a["status"] for a in attempts] == ["ERROR"]
    assert loop.history.session(loop.session_id or 0)["status"] == "ERROR"


def test_the_cut_count_in_feedback_is_the_real_count() -> None:
    capture = OutputCapture()
    for _ in range(40):
        capture.add("y" * 50_000)  # 2,000,000 characters, one line
    shown = head_tail(capture.text)
    notes = re.findall(r"\[\.\.\. (\d+) characters cut \.\.\.\]", shown)
    kept = len(shown) - sum(len(f"\n[... {n} characters cut ...]\n") for n in notes)
    assert [int(n) for n in notes] == [2_000_000 - kept]


async def test_a_megabyte_answer_streams_in_at_most_a_hundred_steps(tmp_path: Path) -> None:
    body = "```python\n" + "# line of filler text\n" * 50_000 + "print(1)\n```\n"
    path = tmp_path / "big.md"
    path.write_text(f"## Answer 1\n\n````markdown\n{body}````\n")
    llm = ReplayLLM(path)
    await llm.start()
    seen: list[int] = []
    answer = await llm.ask("x", lambda so_far: seen.append(len(so_far)))
    assert len(answer.markdown) > 1_000_000
    assert len(seen) <= 100 and seen[-1] == len(answer.markdown)
    assert seen == sorted(seen)


def traced(read: Callable[[str], list[str]], text: str) -> tuple[list[str], int]:
    """What ``read`` returns for ``text``, and the peak of memory it took meanwhile."""
    tracemalloc.start()
    try:
        return read(text), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_the_answers_of_a_big_prose_file_stays_small() -> None:
    """`extract FILE` first looks for '## Answer N' sections. Only headings and fences
    matter there: parsing every paragraph's emphasis and code spans took 118 s and
    2.4 GB for a 50 MB prose answer (about 44 bytes of memory per byte of text)."""
    para = "Some prose with `inline` code and **bold** text. " * 20 + "\n\n"
    text = "## Answer 1\n\n" + para * (1024 * 1024 // len(para))
    answers, peak = traced(parse_answers, text)
    assert len(answers) == 1 and answers[0].startswith("Some prose with `inline`")
    assert peak < 10 * len(text), f"{peak / len(text):.1f} bytes per byte of text"


def test_one_big_answer_without_answer_headings_is_not_parsed_for_them() -> None:
    """A 50 MB code answer took 7 s and 400 MB only to find it holds no '## Answer N'
    section; a quick look for such a line now comes first."""
    line = "print('x' * 40)  # a line of code\n"
    text = "Here:\n\n```python\n" + line * (1024 * 1024 // len(line)) + "```\n"
    answers, peak = traced(parse_answers, text)
    assert answers == []
    assert peak < len(text), f"{peak / len(text):.1f} bytes per byte of text"
    # The quick look misses no heading form the full parse finds.
    body = "```python\nprint(1)\n```\n"
    for heading in ("## Answer 1", "  ## answer 1 ##", "##\tANSWER 1: first", "Answer 1\n---"):
        assert parse_answers(f"{heading}\n\n{body}") == [body], heading
    assert parse_answers(f"### Answer 1\n\n{body}") == []


def test_names_and_reasons_from_outside_are_shown_escaped() -> None:
    name = "report\u202egnp.exe \x1b]0;TITLE\x07\u200b"
    assert one_line(name) == "report\\u202egnp.exe \\x1b]0;TITLE\\x07\\u200b"
    assert one_line("two\nlines") == "two\\nlines"
    assert visible("keep\nnewlines\tand tabs\x1b[2J") == "keep\nnewlines\tand tabs\\x1b[2J"


def test_secret_variables_are_dropped_and_values_redacted() -> None:
    env = {"PATH": "/bin", "VERIFYBOT_PI_PASSWORD": "a-secret-1", "AWS_SECRET_KEY": "x",
           "my_api_key": "y", "GH_TOKEN": "z", "PI_PASSWORD": "p", "HOME": "/root"}
    assert program_env(env, None) == {"PATH": "/bin", "HOME": "/root"}
    redact = Redactor(["hunter22", "abc"])  # too short a value is not redacted
    assert redact("pw=hunter22 abc") == "pw=[redacted] abc"


def test_the_browser_profile_folder_is_private(tmp_path: Path) -> None:
    import stat

    from verifybot_tui.llm.browser.chromium import make_private_dir

    loose = tmp_path / "profile"
    loose.mkdir(mode=0o755)
    make_private_dir(loose)
    make_private_dir(tmp_path / "new" / "profile")
    for folder in (loose, tmp_path / "new" / "profile"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700


def test_a_big_code_transcript_is_read_with_its_fence_bodies_cut_out() -> None:
    """A 50 MB program as `## Answer 1` in a ````markdown fence peaked at 494-511 MB in
    `extract` (the goal is under 500 MB): markdown-it kept its per-line state for every
    line of the fence. The bodies are now cut out first and put back: same answers."""
    line = "print('x' * 40)  # a line of code\n"
    code = "```python\n" + line * (2 * 1024 * 1024 // len(line)) + "```\n"
    text = (f"## Answer 1\n\n````markdown\n{code}````\n\n## Answer 2\n\nplain\n~~~\n"
            f"{line * 3}~~~\n\n    indented\n\n## Answer 3\n\n````md\n{code}````\n")
    answers, peak = traced(parse_answers, text)
    assert answers == [code, f"plain\n~~~\n{line * 3}~~~\n\n    indented\n", code]
    assert peak < 3 * len(text), f"{peak / len(text):.1f} bytes per byte of text (7.7 uncut)"


def test_cutting_fence_bodies_reads_every_example_transcript_the_same(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from verifybot_tui.core.answers import extract

    examples = sorted((ROOT / "examples").glob("*.md"))
    assert examples
    for path in examples:
        text = path.read_text()
        whole = parse_answers(text)
        monkeypatch.setattr(extract, "COLLAPSE_ABOVE", -1)  # cut even small files
        assert parse_answers(text) == whole, path.name
        monkeypatch.undo()
