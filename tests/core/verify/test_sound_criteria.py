"""Verdicts that lied (issue 21, point 6), each a reproduction on real runs.

The loop runs real programs on the local target with the replay LLM; the criteria
must judge the whole output, only the files the run made, and refuse what cannot hold.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from loop_runs import make_loop, write_answers

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.core.loop import events as ev
from verifybot_tui.core.verify import criteria
from verifybot_tui.core.verify.verification import Verification


async def _verdict(tmp_path: Path, code: str, *expect: str):
    loop = make_loop(tmp_path / "ws", write_answers(tmp_path / "a.md", code), auto_accept=True,
                     max_retries=0,
                     verification=Verification(criteria=criteria.parse_all(list(expect))))
    verdicts = []
    async for event in loop.events("do it"):
        if isinstance(event, ev.VerdictReached):
            verdicts.append(event.verdict)
    assert len(verdicts) == 1
    return verdicts[0]


async def test_not_sees_a_word_in_the_middle_of_a_long_output(tmp_path: Path) -> None:
    code = """
        for i in range(60000):
            print("fine line number", i)
        print("WRONG")
        for i in range(60000):
            print("fine line number", i)
    """
    v = await _verdict(tmp_path, code, "not:WRONG", "contains:WRONG")
    assert v.status == "criteria_unmet", v.reason
    assert v.checks[0].evidence == 'line 60001: "WRONG"'
    assert v.checks[1].met


async def test_file_counts_only_what_the_run_wrote(tmp_path: Path) -> None:
    v = await _verdict(tmp_path, 'open("made.txt", "w").write("x")', "file:*.py",
                       "file:made.txt")
    assert not v.checks[0].met, "the program's own source is not a file it made"
    assert v.checks[1].met and v.checks[1].evidence == "made.txt (1 bytes)"


async def test_compiles_clean_without_a_compile_step_fails_with_that_reason(
        tmp_path: Path) -> None:
    v = await _verdict(tmp_path, 'print("hi")', "compiles-clean")
    assert v.status == "criteria_unmet"
    assert "no compile step" in v.checks[0].evidence


@pytest.mark.parametrize("text", ["file:../../../etc/passwd", "file:/etc/passwd",
                                  "file:out/../../x:10", "file:~/.ssh/id_rsa"])
def test_a_file_pattern_leaving_the_run_folder_is_refused_when_parsed(text: str) -> None:
    with pytest.raises(ConfigError, match="inside the run folder") as e:
        criteria.parse(text)
    assert e.value.exit_code == 2


def test_a_huge_repeat_count_is_a_usage_error() -> None:
    with pytest.raises(ConfigError, match="does not compile") as e:
        criteria.parse("regex:a{99999999999}")
    assert e.value.exit_code == 2


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", ["regex", "regex-whole", "range"])
def test_a_backtracking_regex_fails_its_criterion_in_bounded_time(kind: str) -> None:
    spec = "^(a|a)+$" if kind != "range" else "^(a|a)+$:1..2"
    result = RunResult(exit_code=0, stdout="a" * 40 + "!\n", stderr="", duration=0.1)
    check = criteria.check(criteria.parse(f"{kind}:{spec}"), result)
    assert not check.met and "backtracks too much" in check.evidence
