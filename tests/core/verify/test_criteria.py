"""Success criteria: the KIND:SPEC grammar, evaluation with evidence, the texts the LLM reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifybot_tui.core.base.errors import EXIT_USAGE, ConfigError
from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.core.verify import criteria
from verifybot_tui.core.verify.criterion import Check

ROCKET = "Launching...\nApogee: 0.0 m\nFlight time: 12.5 s\n"


def run(stdout: str = ROCKET, stderr: str = "", exit_code: int | None = 0,
        duration: float = 0.5, **kw) -> RunResult:
    return RunResult(exit_code=exit_code, stdout=stdout, stderr=stderr, duration=duration, **kw)


def one(text: str, result: RunResult, run_dir: Path | None = None) -> Check:
    return criteria.check(criteria.parse(text), result, run_dir)


def test_contains_and_not_name_the_line_seen():
    assert one("contains:Apogee", run()).evidence == 'line 2: "Apogee: 0.0 m"'
    miss = one("contains:Landed", run())
    assert not miss.met and 'the last line was "Flight time: 12.5 s"' in miss.evidence
    bad = one("not:0.0 m", run())
    assert not bad.met and bad.evidence == 'line 2: "Apogee: 0.0 m"'
    assert one("not:NaN", run()).met


def test_regex_per_line_and_whole():
    assert one(r"regex:^Apogee: \d", run()).met
    assert not one(r"regex:^Launching.*Apogee", run()).met  # per line: no line holds both
    assert one(r"regex-whole:^Launching.*Apogee", run()).met  # the whole output does


def test_range_reads_the_value_and_says_where_it_lies():
    c = one("range:Apogee: ([0-9.]+) m:100..5000", run())
    assert not c.met
    assert c.evidence == 'line 2: "Apogee: 0.0 m": read 0.0, not between 100 and 5000'
    ok = one("range:Apogee: ([0-9.]+) m:100..5000", run("Apogee: 1234.5 m\n"))
    assert ok.met and "read 1234.5, between" in ok.evidence
    assert one("range:time: (\\S+):..20", run()).met  # open low bound
    assert not one("range:Apogee: (\\S+):1..", run("Apogee: nan\n")).met
    assert "no line matches" in one("range:Perigee: (\\d+):1..2", run()).evidence


def test_exit_duration_stderr_compile():
    assert one("exit:0", run()).met
    assert one("exit:3", run(exit_code=1)).evidence == "exit status 1"
    assert not one("exit:0", run(exit_code=None)).met
    assert not one("duration:<=0.1", run()).met
    assert one("duration:<=2", run()).evidence == "took 0.50 s"
    c = one("no-stderr", run(stderr="\nwarning: deprecated\n"))
    assert not c.met and 'stderr line 1: "warning: deprecated"' in c.evidence
    assert not one("compiles-clean", run(compile_failed=True, stderr="x.c:1: error\n")).met
    assert one("compiles-clean", run()).met


def test_file_glob_and_min_size(tmp_path: Path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "plot.png").write_bytes(b"x" * 10)
    wrote = run(files_changed=["out/plot.png"])
    assert one("file:out/*.png", wrote, tmp_path).evidence == "out/plot.png (10 bytes)"
    small = one("file:out/*.png:100", wrote, tmp_path)
    assert not small.met and "smaller than 100 bytes" in small.evidence
    assert not one("file:*.csv", run(), tmp_path).met
    # A remote run folder: the target's list of written files decides.
    assert one("file:*.csv", run(files_changed=["data.csv"]), None).met


@pytest.mark.parametrize("text, says", [
    ("nope:x", "unknown kind 'nope'"),
    ("contains:", "needs a value"),
    ("regex:(", "does not compile"),
    ("range:Apogee (\\d+)", "range needs PATTERN:LO..HI"),
    ("range:(\\d+):9..1", "above the high bound"),
    ("range:(a)(b):1..2", "at most one group"),
    ("exit:zero", "not an integer"),
    ("duration:<=soon", "is not a number"),
    ("no-stderr:yes", "takes no value"),
])
def test_bad_criteria_say_what_to_write(text: str, says: str):
    with pytest.raises(ConfigError) as e:
        criteria.parse(text)
    assert says in str(e.value) and "KIND:SPEC" in str(e.value)
    assert e.value.exit_code == EXIT_USAGE


def test_criteria_file(tmp_path: Path):
    f = tmp_path / "c.toml"
    f.write_text('expect = ["contains:Apogee", "exit:0"]\nsanity = false\n')
    found, sanity = criteria.load_file(f)
    assert [c.text for c in found] == ["contains:Apogee", "exit:0"] and sanity is False
    f.write_text('expect = ["contains:Apogee"]\nexpected = 1\n')
    with pytest.raises(ConfigError, match="unknown key 'expected'"):
        criteria.load_file(f)
    f.write_text('expect = ["bogus:1"]\n')
    with pytest.raises(ConfigError, match=r"c.toml: key 'expect': bad criterion 'bogus:1'"):
        criteria.load_file(f)


def test_texts_for_the_llm_are_plain_and_name_the_evidence():
    cs = criteria.parse_all(["contains:Apogee", "range:Apogee: ([0-9.]+) m:100..5000"])
    first = criteria.prompt_text(cs)
    assert first.splitlines() == [
        "The run is checked against these success criteria; all must hold:",
        '- the output contains "Apogee"',
        "- the number captured by the regular expression Apogee: ([0-9.]+) m is between 100 "
        "and 5000",
    ]
    fb = criteria.feedback_text(criteria.evaluate(cs, run()))
    assert fb.splitlines() == [
        "These success criteria are not met:",
        "- the number captured by the regular expression Apogee: ([0-9.]+) m is between 100 "
        'and 5000: NOT MET. Seen: line 2: "Apogee: 0.0 m": read 0.0, not between 100 and 5000',
    ]
    assert criteria.prompt_text([]) == "" and criteria.feedback_text([]) == ""
