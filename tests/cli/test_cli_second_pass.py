"""Issue 23 on the command line: what a newcomer tripped over, each as a real subprocess.

Blank prompts refused before anything is recorded; the typo hint keeps the whole
command; doctor takes the --trust-new-host it advises; a non-UTF-8 replay is refused
before a session exists; `recipe new -o ELSEWHERE` writes a replay path `recipe run`
finds; the wording of counts and of runs with no exit status.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from cli_runs import answers, python_answer, replay, run_cli, run_once
from project import EXAMPLES


def test_a_blank_prompt_is_refused_and_nothing_is_recorded(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = run_cli("run", "   ", "--llm", replay(tmp_path, python_answer("print(1)")),
                   "--target", "local", "--yes", "--workspace", str(ws), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "the prompt is empty" in proc.stderr and "Traceback" not in proc.stderr
    assert not (ws / "history.db").exists() and not (ws / "raw_md").exists()


def test_the_typo_hint_keeps_the_rest_of_the_command(tmp_path: Path) -> None:
    proc = run_cli("recipie", "run", "x.toml", cwd=tmp_path)
    assert proc.returncode == 2
    assert "did you mean: verifybot recipe run x.toml" in proc.stderr, proc.stderr
    assert "verifybot -- 'recipie run x.toml'" in proc.stderr


def test_a_non_utf8_replay_is_refused_before_a_session_is_written(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.md"
    bad.write_bytes(b"## Answer 1\n\n```python\nprint('caf\xe9')\n```\n")
    ws = tmp_path / "ws"
    proc = run_cli("run", "x", "--llm", f"replay:{bad}", "--target", "local", "--yes",
                   "--workspace", str(ws), cwd=tmp_path)
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr, proc.stderr
    history = run_cli("history", "--workspace", str(ws), cwd=tmp_path)
    assert "ERROR" not in history.stdout, history.stdout
    assert not (ws / "raw_md").exists() or not list((ws / "raw_md").iterdir())


def test_recipe_new_into_another_folder_writes_a_replay_path_recipe_run_finds(
        tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "rocket.md").write_bytes((EXAMPLES / "rocket.md").read_bytes())
    ws = tmp_path / "ws"
    proc = run_cli("run", "Simulate a small rocket launched straight up and print its apogee",
                   "--llm", "replay:examples/rocket.md", "--target", "local", "--yes",
                   "--expect", "contains:Apogee", "--workspace", str(ws), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "other" / "dir" / "r.toml"
    out.parent.mkdir(parents=True)
    proc = run_cli("recipe", "new", "1", "-o", "other/dir/r.toml", "--workspace", str(ws),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    llm = tomllib.loads(out.read_text())["llm"]
    assert llm == "replay:../../examples/rocket.md"
    proc = run_cli("recipe", "run", str(out), "--workspace", str(ws), cwd=tmp_path / "other")
    assert "no such transcript" not in proc.stderr, proc.stderr
    assert "PASSED" in proc.stdout or "VERIFIED" in proc.stdout, proc.stdout + proc.stderr


def test_counts_read_as_sentences_and_feedback_starts_a_sentence(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = run_once(tmp_path, "import sys; sys.exit(3)", ws=ws)
    assert proc.returncode == 1
    assert "after 1 attempt" in proc.stderr + proc.stdout
    assert "after 1 attempts" not in proc.stderr + proc.stdout
    ws2 = tmp_path / "ws2"
    llm = tmp_path / "two.md"
    llm.write_text(answers(python_answer("import sys; sys.exit(3)"), python_answer("print(42)")))
    proc = run_cli("run", "do it", "--llm", f"replay:{llm}", "--target", "local", "--yes",
                   "--max-retries", "1", "--workspace", str(ws2), cwd=tmp_path)
    transcript = next((ws2 / "raw_md").glob("*.md")).read_text()
    assert "(attempt 1 of 2). The program" in transcript, transcript[-3000:]
    assert "(attempt 1 of 2). the" not in transcript


def test_a_run_with_no_exit_status_never_reads_none() -> None:
    from verifybot_tui.core.base.ports import RunResult

    dropped = RunResult(exit_code=None, stdout="", stderr="", duration=1.0,
                        target_error="the connection to pi was lost")
    assert dropped.ended == "target error: the connection to pi was lost"
    killed = RunResult(exit_code=None, stdout="", stderr="", duration=1.0)
    assert "None" not in killed.ended and "no exit status" in killed.ended
    assert RunResult(exit_code=2, stdout="", stderr="", duration=1).ended == "exit status 2"


def test_doctor_takes_the_trust_new_host_it_advises(tmp_path: Path, sshd, remote_dir) -> None:
    kh = tmp_path / "known_hosts"
    kh.write_text("")
    cfg = sshd.write_config_toml(tmp_path / "config.toml", remote_dir[0], known_hosts=str(kh))
    proc = run_cli("doctor", "--config", str(cfg), cwd=tmp_path)
    assert "--trust-new-host" in proc.stdout and proc.returncode == 1, proc.stdout
    proc = run_cli("doctor", "--config", str(cfg), "--trust-new-host", cwd=tmp_path)
    assert "target pi" in proc.stdout and "reachable and logged in" in proc.stdout, proc.stdout
    assert sshd.host_key_line.split()[1] in kh.read_text()


def test_run_verbose_prints_each_prompt_and_feedback_as_sent_sanitised(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    llm = tmp_path / "two.md"
    hostile = "import sys; print('bad \\x1b[2J\\u202e'); sys.exit(3)"
    llm.write_text(answers(python_answer(hostile), python_answer("print(42)")))
    proc = run_cli("run", "print the answer", "--llm", f"replay:{llm}", "--target", "local",
                   "--yes", "--max-retries", "1", "--verbose", "--workspace", str(ws),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "the initial prompt as sent (attempt 1):" in err
    assert "│ print the answer" in err and "│ Rules for your answer:" in err
    assert "the feedback prompt as sent (attempt 2):" in err
    assert "│ The program failed (attempt 1 of 2)." in err
    assert "\\x1b[2J" in err and "\\u202e" in err and "\x1b[2J" not in err, \
        "program output quoted in feedback is shown escaped"
    quiet = run_cli("run", "print the answer", "--llm", f"replay:{llm}", "--target", "local",
                    "--yes", "--max-retries", "1", "--workspace", str(tmp_path / "ws2"),
                    cwd=tmp_path)
    assert "as sent" not in quiet.stderr and "│ Rules" not in quiet.stderr
