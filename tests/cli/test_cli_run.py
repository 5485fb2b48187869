"""The headless loop end to end: real CLI process, replay LLM, real local runs, real files.

Each test runs ``verifybot`` as a user would (a subprocess), then reads what it
left on disk: programs/, outputs/, the raw_md transcript and history.db. Checks of
what a command says and its exit code alone (usage errors, help, history) call the
same entry in the test's process (``run_here``): a process of their own proves nothing
more there, and ``test_python_m_entry_point_and_help`` shows the real entry starts.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cli_runs import answers, db_rows, python_answer, run_cli, run_here, the_record
from proc_helpers import all_gone
from project import EXAMPLES, ROOT, verifybot_cmd

PROMPT = "Print the total number of words in a short text and its 3 most common words"
SLUG = "print_the_total_number_of_words"


def test_example_transcript_fails_once_then_succeeds(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}",
                   "--target", "local", "--yes", "--workspace", str(ws), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    # the program's own output streamed to stdout, the failure's traceback to stderr
    assert "Total words: 17" in proc.stdout and "the: 4" in proc.stdout
    assert "TypeError" in proc.stderr
    assert sorted(p.name for p in (ws / "programs").iterdir()) == [f"{SLUG}_1.py",
                                                                  f"{SLUG}_2.py"]
    assert sorted(p.name for p in (ws / "outputs").iterdir()) == [f"{SLUG}_1.txt",
                                                                 f"{SLUG}_2.txt"]
    assert "TypeError" in (ws / "outputs" / f"{SLUG}_1.txt").read_text()
    assert "Total words: 17" in (ws / "outputs" / f"{SLUG}_2.txt").read_text()
    record = the_record(ws)
    assert record["prompts"] == 2 and record["status"] == "PASSED"
    assert [a["status"] for a in record["attempts"]] == ["FAILED", "PASSED"]
    rows = db_rows(ws, "SELECT n, status, verdict, files FROM attempts ORDER BY n")
    assert [(r[0], r[1]) for r in rows] == [(1, "FAILED"), (2, "PASSED")]
    assert json.loads(rows[1][3]) == [f"programs/{SLUG}_2.py"]
    # the feedback prompt holds the run's facts, quoted in fences, not the earlier answer
    kinds = db_rows(ws, "SELECT kind, text FROM prompts ORDER BY id")
    assert [k for k, _ in kinds] == ["initial", "feedback"]
    feedback = kinds[1][1]
    assert "TypeError" in feedback and "Errors (stderr):\n```text\n" in feedback
    assert "from collections import Counter" not in feedback
    # the first prompt carried the machine's context and the rules
    first = kinds[0][1]
    assert PROMPT in first and "DEPENDENCIES:" in first and "TIMEOUT:" in first
    assert "Python" in first


def test_json_prints_the_run_record(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}",
                   "--yes", "--json", "--workspace", str(ws), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    record = json.loads(proc.stdout)  # stdout holds only the record
    assert record["status"] == "PASSED" and record["prompts"] == 2
    assert "Total words: 17" in proc.stderr


def test_failing_after_the_last_retry_exits_1(tmp_path: Path) -> None:
    t = tmp_path / "t.md"
    t.write_text(answers(python_answer("raise SystemExit(3)"),
                         python_answer("import sys\nsys.exit('still broken')")))
    proc = run_cli("run", "do it", "--llm", f"replay:{t}", "--yes", "--max-retries", "1",
                   "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert the_record(tmp_path / "ws")["status"] == "FAILED"


def test_running_out_of_answers_is_an_llm_error_exit_3(tmp_path: Path) -> None:
    t = tmp_path / "t.md"
    t.write_text(answers(python_answer("raise SystemExit(3)")))
    proc = run_here("run", "do it", "--llm", f"replay:{t}", "--yes",
                   "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "no answer 2" in proc.stderr
    assert the_record(tmp_path / "ws")["status"] == "LLM_ERROR"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    ws = str(tmp_path / "ws")
    ex = f"replay:{EXAMPLES / 'word_count.md'}"
    cases = [
        (["run", "x", "--llm", ex, "--target", "nowhere", "--workspace", ws], "[targets.nowhere]"),
        (["run", "x", "--llm", "replay:/no/such.md", "--workspace", ws], "no such transcript"),
        (["run", "x", "--llm", "nollm", "--workspace", ws], "[llm.nollm]"),
        (["run", "x", "--llm", ex, "--max-retries", "-1", "--workspace", ws], "--max-retries"),
        (["run"], "the prompt is empty"),  # a PROMPT is optional only with --resume
        (["run", "--resume", "7", "--workspace", ws], "there is no session 7"),
        (["run", "x", "--bogus"], "unrecognized"),
    ]
    for args, expected in cases:
        proc = run_here(*args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert expected in proc.stderr, (args, proc.stderr)


def test_unreachable_ssh_target_exits_4(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    # a loopback port nobody listens on: the connection is refused at once
    cfg.write_text('[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\nport = 1\nuser = "nobody"\n'
                   f'known_hosts = "{tmp_path / "kh"}"\n')
    proc = run_cli("run", "x", "--llm", f"replay:{EXAMPLES / 'word_count.md'}", "--target", "pi",
                   "--yes", "--config", str(cfg), "--workspace", str(tmp_path / "ws"),
                   cwd=tmp_path, timeout=90)
    assert proc.returncode == 4, proc.stderr
    assert "127.0.0.1" in proc.stderr
    assert the_record(tmp_path / "ws")["status"] == "TARGET_ERROR"


def test_approval_on_stdin_reject_with_note_then_accept(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}",
                   "--workspace", str(ws), cwd=tmp_path,
                   stdin="r\nuse an f-string for the total\na\n")
    assert proc.returncode == 0, proc.stderr
    prompts = db_rows(ws, "SELECT kind, text FROM prompts ORDER BY id")
    assert [k for k, _ in prompts] == ["initial", "reject"]
    assert "use an f-string for the total" in prompts[1][1]
    decisions = db_rows(ws, "SELECT n, decision, status FROM attempts ORDER BY n")
    assert decisions == [(1, "reject", "REJECTED"), (2, "accept", "PASSED")]
    assert not (ws / "outputs" / f"{SLUG}_1.txt").exists(), "a rejected version never runs"


def test_stop_on_stdin_and_closed_stdin_stop_with_exit_1(tmp_path: Path) -> None:
    for stdin in ("s\n", ""):
        ws = tmp_path / f"ws{len(stdin)}"
        proc = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}",
                       "--workspace", str(ws), cwd=tmp_path, stdin=stdin)
        assert proc.returncode == 1, proc.stderr
        assert the_record(ws)["status"] == "STOPPED"
        assert not (ws / "outputs").exists() or not any((ws / "outputs").iterdir())


def test_edit_in_editor_runs_the_edited_code_and_keeps_both_versions(tmp_path: Path) -> None:
    editor = tmp_path / "fix-editor.py"
    editor.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        for path in sys.argv[1:]:
            text = open(path).read()
            open(path, "w").write(text.replace('"Total words: " + len(words)',
                                               'f"Total words: {{len(words)}}"'))
        """))
    editor.chmod(0o755)
    ws = tmp_path / "ws"
    proc = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}",
                   "--workspace", str(ws), cwd=tmp_path, stdin="e\na\n",
                   env={"EDITOR": str(editor)})
    assert proc.returncode == 0, proc.stderr
    # As in the app: the edit is shown as a diff and asked about again before it runs.
    assert '-print("Total words: " + len(words))' in proc.stderr
    assert '+print(f"Total words: {len(words)}")' in proc.stderr
    assert "Run the edited version?" in proc.stderr
    first = (ws / "programs" / f"{SLUG}_1.py").read_text()
    second = (ws / "programs" / f"{SLUG}_2.py").read_text()
    assert '"Total words: " + len(words)' in first
    assert 'f"Total words: {len(words)}"' in second
    record = the_record(ws)
    assert record["prompts"] == 1 and record["attempts"][0]["edited"] is True


def test_no_editor_or_a_mistyped_one_is_said_and_asked_again(tmp_path: Path) -> None:
    """The CLI says what the app says (core.answers.editor's words), and the question comes back."""
    for env, says in (({}, "No editor set: export VISUAL or EDITOR"),
                      ({"EDITOR": "vb-no-such-editor-zz"}, "Could not start the editor")):
        ws = tmp_path / f"ws{len(env)}"
        proc = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}",
                       "--workspace", str(ws), cwd=tmp_path, stdin="e\ns\n", env=env)
        assert says in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
        assert proc.returncode == 1 and the_record(ws)["status"] == "STOPPED"


def test_identical_code_is_not_run_again(tmp_path: Path) -> None:
    broken = python_answer("print('hi')\nraise ValueError('bad')")
    t = tmp_path / "t.md"
    t.write_text(answers(broken, broken.replace("Here you go:", "Try this:"),
                         python_answer("print('fixed')")))
    ws = tmp_path / "ws"
    proc = run_cli("run", "say hi", "--llm", f"replay:{t}", "--yes", "--workspace", str(ws),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "identical to version 1" in proc.stderr
    kinds = [k for (k,) in db_rows(ws, "SELECT kind FROM prompts ORDER BY id")]
    assert kinds == ["initial", "feedback", "duplicate"]
    assert sorted(p.name for p in (ws / "programs").iterdir()) == ["say_hi_1.py", "say_hi_2.py"]
    assert (ws / "programs" / "say_hi_2.py").read_text() == "print('fixed')\n"


def test_versions_are_never_overwritten_across_sessions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for _ in range(2):
        proc = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}", "--yes",
                       "--workspace", str(ws), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (ws / "programs").iterdir()) == [
        f"{SLUG}_{n}.py" for n in (1, 2, 3, 4)]
    assert len(list((ws / "raw_md").glob("*.md"))) == 2


def _slow_transcript(tmp_path: Path) -> Path:
    t = tmp_path / "slow.md"
    t.write_text(answers(python_answer("""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        print("pids", os.getpid(), child.pid, flush=True)
        for i in range(600):
            print("tick", i, flush=True)
            time.sleep(0.2)
        """, "TIMEOUT: 300\n\nA slow one:")))
    return t


def _wait_for_pids(proc: subprocess.Popen[str], deadline: float = 60) -> list[int]:
    end = time.monotonic() + deadline
    assert proc.stdout is not None
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if line.startswith("pids"):
            return [int(x) for x in line.split()[1:]]
    raise AssertionError("the program never printed its pids")


def _start_slow_run(tmp_path: Path, ws: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """``verifybot run`` on a program that sleeps, once that program runs: (proc, its pids).

    Without the sandbox: the pids it prints are looked up in /proc (in the sandbox they
    would be numbers of its own PID namespace)."""
    proc = subprocess.Popen([*verifybot_cmd(), "run", "slow", "--llm",
                             f"replay:{_slow_transcript(tmp_path)}", "--yes",
                             "--workspace", str(ws)], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "VERIFYBOT_NO_SANDBOX": "1"})
    return proc, _wait_for_pids(proc)


def test_ctrl_c_stops_program_tree_and_exits_130(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc, pids = _start_slow_run(tmp_path, ws)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert all_gone(pids), "the program's process tree outlived Ctrl+C"
    assert the_record(ws)["status"] == "INTERRUPTED"
    assert db_rows(ws, "SELECT status FROM sessions") == [("INTERRUPTED",)]
    assert db_rows(ws, "SELECT status FROM attempts") == [("STOPPED",)]


def test_kill_mid_run_leaves_history_readable(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc, pids = _start_slow_run(tmp_path, ws)
    time.sleep(0.5)
    proc.kill()  # SIGKILL: no handler runs
    proc.communicate(timeout=30)
    for pid in pids:  # the orphaned program is not the point here: clean it up
        try:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    # everything written so far is readable
    hist = run_cli("history", "--json", "--workspace", str(ws), cwd=tmp_path)
    assert hist.returncode == 0, hist.stderr
    sessions = json.loads(hist.stdout)
    # reading history marks a session whose process is gone (issue 11)
    assert sessions[0]["status"] == "INTERRUPTED" and sessions[0]["attempts"][0]["n"] == 1
    transcript = next((ws / "raw_md").glob("*.md")).read_text()
    assert "## Prompt 1 (initial)" in transcript and "## Answer 1" in transcript
    assert "tick 0" in next((ws / "outputs").glob("*.txt")).read_text()
    # the next start marks the killed session interrupted
    again = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}", "--yes",
                    "--workspace", str(ws), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert db_rows(ws, "SELECT status FROM sessions ORDER BY id") == [("INTERRUPTED",),
                                                                      ("PASSED",)]
    assert db_rows(ws, "SELECT status FROM attempts WHERE session_id = 1") == [("INTERRUPTED",)]
    assert "INTERRUPTED" in transcript + next(
        p for p in (ws / "raw_md").glob("*slow*.md")).read_text()


def test_history_lists_sessions_and_attempts(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    empty = run_here("history", "--workspace", str(ws), cwd=tmp_path)
    assert empty.returncode == 0 and "no history" in empty.stdout
    run_here("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}", "--yes",
            "--workspace", str(ws), cwd=tmp_path)
    proc = run_here("history", "--workspace", str(ws), cwd=tmp_path)
    assert proc.returncode == 0
    assert "PASSED" in proc.stdout and f"programs/{SLUG}_1.py" in proc.stdout
    assert "attempt 2" in proc.stdout


def test_extract_shows_blocks_and_runs_once(tmp_path: Path) -> None:
    answer = tmp_path / "answer.md"
    answer.write_text("**hello.py**\n\n```python\nprint('hello from extract')\n```\n\n"
                      "Output:\n\n```text\nhello from extract\n```\n")
    proc = run_cli("extract", str(answer), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert [b["runnable"] for b in data["blocks"]] == [True, False]
    assert data["blocks"][0]["filename"] == "hello.py"
    ws = tmp_path / "ws"
    ran = run_cli("extract", str(answer), "--run", "--yes", "--workspace", str(ws), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "hello from extract" in ran.stdout
    assert (ws / "programs" / "hello_1.py").exists()


def test_a_session_of_extract_run_makes_a_recipe_that_runs_later(tmp_path: Path) -> None:
    """`extract --answer N --run` then `recipe new` then `recipe run`, as the guide's
    commands go: the answer the session ran is kept in the workspace (it was a temporary
    file, gone when the recipe ran it: "cannot read"), so the recipe replays it."""
    ws = tmp_path / "ws"
    ran = run_cli("extract", str(EXAMPLES / "word_count.md"), "--answer", "2", "--run",
                  "--yes", "--workspace", str(ws), cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    (kept,) = (ws / "raw_md" / "replays").glob("word_count_answer_2_*.md")
    made = run_cli("recipe", "new", "-o", "r.toml", "--workspace", str(ws), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert kept.name in (tmp_path / "r.toml").read_text()
    again = run_cli("recipe", "run", "r.toml", "--workspace", str(tmp_path / "ws2"),
                    cwd=tmp_path)
    # the answer ran again from the kept file: PASSED (without criteria a recipe is
    # not VERIFIED, so `recipe run` exits 1: "0 of 1 verified")
    assert "cannot read" not in again.stderr, again.stderr
    assert "run_the_code_of_answer_2  PASSED" in again.stdout, again.stdout + again.stderr
    assert kept.name in again.stderr and again.returncode == 1
    # a file that is one answer (no '## Answer N'): kept the same way, run the same
    one = tmp_path / "one.md"
    one.write_text("```python\nprint('one answer')\n```\n")
    ran = run_cli("extract", str(one), "--run", "--yes", "--workspace", str(ws), cwd=tmp_path)
    assert ran.returncode == 0 and "one answer" in ran.stdout, ran.stderr
    (kept,) = (ws / "raw_md" / "replays").glob("one_answer_1_*.md")
    assert "print('one answer')" in kept.read_text()


def test_python_m_entry_point_and_help() -> None:
    proc = subprocess.run([sys.executable, "-m", "verifybot_tui", "run", "--help"],
                          capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0 and "--max-retries" in proc.stdout


@pytest.mark.parametrize("command", ["run", "login", "probe", "extract", "history", "doctor"])
def test_every_command_has_help(command: str) -> None:
    proc = run_here(command, "--help", cwd=ROOT)
    assert proc.returncode == 0 and f"verifybot {command}" in proc.stdout


def test_missing_import_is_installed_into_the_workspace_venv_without_a_retry(
        tmp_path: Path) -> None:
    t = tmp_path / "t.md"
    t.write_text(answers("DEPENDENCIES: tomli-w\n\n" + python_answer(
        "import tomli_w\nprint(tomli_w.dumps({'ok': True}).strip())")))
    ws = tmp_path / "ws"
    # approve the run, then refuse the install: the run fails for want of the module
    refused = run_cli("run", "write toml", "--llm", f"replay:{t}", "--max-retries", "0",
                      "--workspace", str(ws), cwd=tmp_path, stdin="a\nn\n", timeout=300)
    assert "tomli-w" in refused.stderr and "Install" in refused.stderr
    assert refused.returncode == 1 and "ModuleNotFoundError" in refused.stderr
    assert not (ws / "venv").exists()
    # --yes alone accepts the version, not the install: named, not installed
    yes = run_cli("run", "write toml", "--llm", f"replay:{t}", "--max-retries", "0", "--yes",
                  "--workspace", str(ws), cwd=tmp_path, stdin="", timeout=300)
    assert yes.returncode == 1 and "not installing tomli-w" in yes.stderr, yes.stderr
    assert not (ws / "venv").exists()
    # --install: installed into <workspace>/venv, and the first attempt succeeds
    ok = run_cli("run", "write toml", "--llm", f"replay:{t}", "--max-retries", "0", "--yes",
                 "--install", "--workspace", str(ws), cwd=tmp_path, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert "ok = true" in ok.stdout
    assert list((ws / "venv").glob("lib/python*/site-packages/tomli_w"))
    transcript = max((ws / "raw_md").glob("*.md")).read_text()
    assert f"installed: tomli-w ({ws.resolve() / 'venv'}" in transcript
    assert the_record_of(transcript)["attempts"][0]["n"] == 1, "the install cost no retry"


def the_record_of(transcript: str) -> dict:
    tail = transcript[transcript.rindex("## Run record"):]
    return json.loads(tail[tail.index("{"):tail.rindex("}") + 1])
