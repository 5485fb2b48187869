"""Verification end to end: the real CLI, replayed LLM and judge, real local runs, real files.

Criteria fail a run that exits 0, sanity checks hold one, and a replayed judge walks
every judgement path (FAIL, REVISE, unparsable, PASS), each checked in what the
session left on disk: the transcript, the run record and history.db.
"""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from cli_runs import answers, python_answer, run_cli, the_record
from project import EXAMPLES

ROCKET = "Simulate a small rocket launched straight up and print its apogee"
SQUARES = "Print the sum of the squares of the integers 1 to 10"


def transcript(ws: Path) -> str:
    (path,) = sorted((ws / "raw_md").glob("*.md"))
    return path.read_text()


def test_a_criterion_fails_attempt_1_with_the_line_seen_and_attempt_2_is_verified(tmp_path):
    r = run_cli("run", ROCKET, "--llm", f"replay:{EXAMPLES / 'rocket.md'}", "--yes",
                "--expect", "contains:Apogee", "--expect", "range:Apogee: ([0-9.]+) m:100..5000",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Apogee: 0.0 m" in r.stdout and "Apogee: 246.4 m" in r.stdout
    rec = the_record(tmp_path)
    assert rec["status"] == "VERIFIED" and rec["message"] == "all 2 success criteria met"
    first, second = rec["attempts"]
    assert (first["status"], first["verdict"]) == ("FAILED", "criteria_unmet")
    assert second["criteria"][1] == {
        "criterion": "range:Apogee: ([0-9.]+) m:100..5000", "met": True,
        "evidence": 'line 1: "Apogee: 246.4 m": read 246.4, between 100 and 5000'}
    text = transcript(tmp_path)
    # The first prompt told the LLM the criteria in plain text.
    assert ("The run is checked against these success criteria; all must hold:\n"
            '- the output contains "Apogee"\n') in text
    # The feedback names the unmet criterion with the line seen and the value read.
    feedback = text.split("## Prompt 2 (feedback)")[1].split("## Answer 2")[0]
    assert ('- the number captured by the regular expression Apogee: ([0-9.]+) m is between '
            '100 and 5000: NOT MET. Seen: line 1: "Apogee: 0.0 m": read 0.0, not between 100 '
            'and 5000') in feedback
    assert "contains" not in feedback.split("not met:")[1]  # only the unmet one is named


def test_a_criteria_file_and_a_bad_criterion(tmp_path):
    crit = tmp_path / "c.toml"
    crit.write_text('expect = ["regex:^Apogee: [1-9]"]\n')
    r = run_cli("run", ROCKET, "--llm", f"replay:{EXAMPLES / 'rocket.md'}", "--yes",
                "--criteria", str(crit), "--max-retries", "0", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert "[verifybot] FAILED" in r.stderr and 'the last line was "Time to apogee' in r.stderr
    bad = tmp_path / "bad"
    bad.mkdir()
    r = run_cli("run", ROCKET, "--llm", f"replay:{EXAMPLES / 'rocket.md'}", "--yes",
                "--expect", "range:Apogee (\\d+)", cwd=bad)
    assert r.returncode == 2
    assert "--expect: bad criterion" in r.stderr and "range needs PATTERN:LO..HI" in r.stderr
    assert not (bad / "raw_md").exists()  # nothing started


def test_the_replayed_judge_walks_fail_revise_unparsable_and_pass(tmp_path):
    stdin = "a\n\na\n\na\nf\nplease check again\na\n\n"
    r = run_cli("run", SQUARES, "--llm", f"replay:{EXAMPLES / 'squares.md'}",
                "--judge", f"replay:{EXAMPLES / 'squares_judge.md'}", cwd=tmp_path, stdin=stdin)
    assert r.returncode == 0, r.stderr
    assert [ln for ln in r.stdout.splitlines() if ln.startswith("Sum")] == [
        "Sum of squares: 55", "Sum of squares: 285", "Sum of squares: 385",
        "Sum of squares 1..10: 385"]
    rec = the_record(tmp_path)
    assert rec["status"] == "VERIFIED" and rec["message"] == "the judge says PASS"
    verdicts = [(a["judgement"]["verdict"], a["judge_decision"], a["status"])
                for a in rec["attempts"]]
    assert verdicts == [("FAIL", "follow", "FAILED"), ("REVISE", "follow", "FAILED"),
                        ("UNPARSABLE", "fail", "FAILED"), ("PASS", "follow", "VERIFIED")]
    text = transcript(tmp_path)
    # FAIL from a separate judge: the coder gets the run's facts and the judge's reason.
    assert ("The program failed (attempt 1 of 4). It exited 0 but was judged a failure: 55 is "
            "the sum of 1 to 10, not the sum of their squares (385).\n\nExit status: 0\n\n"
            "Output (stdout):\n```text\nSum of squares: 55") in text
    # REVISE: the judge's code was approved (stdin 'a') and ran as attempt 3.
    assert "## Decision 3\n\naccept" in text
    # The unparsable judgement was shown and the user's note went back as the failure.
    assert "It exited 0 but was judged a failure: please check again" in text
    assert "Looks good to me!" in r.stderr
    con = sqlite3.connect(tmp_path / "history.db")
    kinds = [k for (k,) in con.execute("SELECT kind FROM prompts ORDER BY id")]
    reasons = [v for (v,) in con.execute("SELECT verdict FROM attempts ORDER BY n")]
    con.close()
    assert kinds.count("judge") == 4
    assert reasons == ["judge_fail", "judge_revise", "judge_unparsable", "judge_pass"]


def test_the_user_overrules_a_fail_judgement_in_the_cli(tmp_path):
    r = run_cli("run", SQUARES, "--llm", f"replay:{EXAMPLES / 'squares.md'}",
                "--judge", f"replay:{EXAMPLES / 'squares_judge.md'}", cwd=tmp_path,
                stdin="a\nv\n")
    assert r.returncode == 0, r.stderr
    rec = the_record(tmp_path)
    assert rec["status"] == "VERIFIED"
    assert rec["message"] == "the user accepted it over the judge's FAIL"


def test_unparsable_with_yes_and_no_user_is_not_a_success(tmp_path):
    judge = tmp_path / "judge.md"
    judge.write_text(answers("I think it works."))
    llm = tmp_path / "llm.md"
    llm.write_text(answers(python_answer('print("Sum of squares: 385")')))
    r = run_cli("run", SQUARES, "--llm", f"replay:{llm}", "--judge", f"replay:{judge}",
                "--yes", "--max-retries", "0", cwd=tmp_path, stdin="")
    assert r.returncode == 1, r.stderr
    assert "stdin is closed: sending it back as a failure" in r.stderr
    assert the_record(tmp_path)["status"] == "FAILED"


SANITY = {
    "all-zero": 'print("Apogee: 0.0 m")\nprint("Speed: 0 m/s")',
    "nan-inf": 'print("Ratio:", float("nan"))',
    "traceback": ('import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n'
                  '    traceback.print_exc()\nprint("done: 3 steps")'),
}


@pytest.mark.parametrize("name", sorted(SANITY))
def test_each_sanity_check_holds_a_program_that_exits_0(tmp_path, name):
    """With --yes and the judge off nobody can judge a held run: PASSED with the warnings."""
    llm = tmp_path / "llm.md"
    llm.write_text(answers(python_answer(SANITY[name]), python_answer('print("fine: 42")')))
    r = run_cli("run", "Compute something and print it", "--llm", f"replay:{llm}", "--yes",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = the_record(tmp_path)
    (first,) = rec["attempts"]  # not sent back: the LLM is not asked to "fix" it
    assert first["exit_code"] == 0 and first["judge_decision"] == "none"
    assert first["status"] == "PASSED"
    assert [s["check"] for s in first["sanity"]] == [name]
    reason = first["sanity"][0]["reason"]
    assert "held for a judgement: " + reason in r.stderr
    assert rec["status"] == "PASSED"  # never VERIFIED
    assert rec["message"] == "exited 0, but held by sanity checks that nobody judged: " + reason
    assert f"[verifybot] PASSED: {rec['message']}" in r.stderr + r.stdout
    text = transcript(tmp_path)
    assert f"- [sanity] {name}: {reason}" in text
    assert "ends PASSED (not VERIFIED) with the sanity warnings" in text


def test_a_program_that_prints_nothing_fails_and_the_feedback_quotes_the_rule(tmp_path):
    """Exit 0 and no output is no pass, even with --yes and the judge off (it was held as
    "empty-output" and ended PASSED): the rules ask a program to print what it did."""
    llm = tmp_path / "llm.md"
    llm.write_text(answers(python_answer("x = 1"), python_answer('print("fine: 42")')))
    r = run_cli("run", "Compute something and print it", "--llm", f"replay:{llm}", "--yes",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = the_record(tmp_path)
    first, second = rec["attempts"]
    assert (first["exit_code"], first["status"], first["verdict"]) == (0, "FAILED", "silent")
    assert first["reason"] == "the program exited with status 0 but printed nothing"
    assert second["status"] == "PASSED" and rec["status"] == "PASSED"
    feedback = transcript(tmp_path).split("## Prompt 2 (feedback)")[1].split("## ")[0]
    assert "The program failed (attempt 1 of 4). The program exited with status 0 but " \
           "printed nothing\n" in feedback
    assert 'The rules say: "It must finish by itself and print what it did."' in feedback


def test_a_held_run_sent_back_by_the_user_goes_to_the_llm_as_a_failure(tmp_path):
    llm = tmp_path / "llm.md"
    llm.write_text(answers(python_answer(SANITY["all-zero"]), python_answer('print("fine: 42")')))
    r = run_cli("run", "Compute something and print it", "--llm", f"replay:{llm}",
                cwd=tmp_path, stdin="a\nf\nzero cannot be right\na\n")
    assert r.returncode == 0, r.stderr
    rec = the_record(tmp_path)
    first, second = rec["attempts"]
    assert first["judge_decision"] == "fail" and first["status"] == "FAILED"
    feedback = transcript(tmp_path).split("## Prompt 2 (feedback)")[1]
    assert "It exited 0 but was judged a failure: zero cannot be right" in feedback
    assert rec["status"] == "PASSED" and "sanity" not in second


SQUARE_WRONG = '''**main.py**

```python
def square(x):
    return x * 2


if __name__ == "__main__":
    print("square(3) =", square(3))
```

**test_main.py**
'''

TESTED_WRONG = SQUARE_WRONG + '''
```python
from main import square

assert square(3) == 9, f"square(3) gave {square(3)}"
print("tests pass")
```
'''


def square_with_tests(tmp_path: Path, wrong: str) -> subprocess.CompletedProcess[str]:
    """`run --yes --install` with ask_for_tests on: ``wrong`` first, then its fix; it must end
    VERIFIED by the program's own tests."""
    config = tmp_path / "config.toml"
    config.write_text("[run]\nask_for_tests = true\n")
    llm = tmp_path / "llm.md"
    llm.write_text(answers(wrong, wrong.replace("x * 2", "x * x")))
    r = run_cli("run", "Square a number", "--llm", f"replay:{llm}", "--yes", "--install",
                "--config", str(config), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rec = the_record(tmp_path)
    assert rec["status"] == "VERIFIED" and rec["message"] == "its tests pass"
    return r


def test_tests_written_alongside_fail_a_run_that_exits_0(tmp_path):
    square_with_tests(tmp_path, TESTED_WRONG)
    first, second = the_record(tmp_path)["attempts"]
    assert first["tests"] == {"file": "test_main.py", "passed": False, "exit_code": 1}
    assert (first["status"], first["verdict"]) == ("FAILED", "tests_failed")
    assert second["tests"] == {"file": "test_main.py", "passed": True, "exit_code": 0}
    text = transcript(tmp_path)
    assert "Also write tests for the program in a separate file named test_main.py" in text
    feedback = text.split("## Prompt 2 (feedback)")[1]
    assert "its tests (test_main.py) failed: they exited 1" in feedback
    assert "AssertionError: square(3) gave 6" in feedback


PYTEST_WRONG = SQUARE_WRONG + '''
```python
from main import square


def test_square_of_three():
    assert square(3) == 9


def test_square_of_zero():
    assert square(0) == 0
```
'''


def test_pytest_tests_written_alongside_run_under_pytest(tmp_path):
    """pytest-style tests (no `import pytest` even) run under pytest, not as a script that
    would define the test functions and exit 0 having checked nothing. Where the runs'
    python has no pytest, the loop installs it into the workspace venv first (--install)."""
    r = square_with_tests(tmp_path, PYTEST_WRONG)
    first, second = the_record(tmp_path)["attempts"]
    assert first["tests"] == {"file": "test_main.py", "passed": False, "exit_code": 1}
    assert second["tests"] == {"file": "test_main.py", "passed": True, "exit_code": 0}
    feedback = transcript(tmp_path).split("## Prompt 2 (feedback)")[1]
    assert "its tests (test_main.py) failed: they exited 1" in feedback
    assert "1 failed, 1 passed" in feedback and "assert 6 == 9" in feedback
    assert "2 passed" in r.stdout + r.stderr  # pytest's own summary of the second run
    runs = sorted(p.name for p in (tmp_path / "runs").iterdir())
    assert not any((tmp_path / "runs" / n / ".pytest_cache").exists() for n in runs)
