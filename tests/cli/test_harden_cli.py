"""Hostile input and bad settings through the real CLI (issue 11): each test is a repro.

A program's escapes, a secret in the environment, odd names and numbers, a
workspace that cannot work, concurrent sessions, a flood of output: the CLI
runs as a user runs it (a subprocess, the replay LLM, real local programs) and
the test reads what reached the terminal and the disk.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from cli_runs import db_rows, python_answer, replay, run_cli, run_once
from project import verifybot_cmd

ESCAPES = 'boom \\x1b]52;c;T1NDNTI=\\x07 \\x1b]0;TITLE\\x07 \\x1b[2J\\x1b[H\\n'


# -- 1. escapes from a program never reach the terminal or the transcript --------------


def test_verdict_line_carries_no_raw_escapes_and_the_transcript_shows_them(
        tmp_path: Path) -> None:
    code = f'import sys; sys.stderr.write("{ESCAPES}"); sys.exit(1)'
    proc = run_once(tmp_path, code)
    assert proc.returncode == 1, proc.stderr
    fail = [line for line in proc.stderr.splitlines() if "FAIL attempt 1" in line]
    assert fail, proc.stderr
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "\\x1b]0;TITLE" in fail[0]  # shown, escaped, not acted on
    transcript = next((tmp_path / "ws" / "raw_md").glob("*.md")).read_bytes()
    assert b"\x1b" not in transcript and b"\x07" not in transcript
    assert b"\\x1b]52;c;" in transcript
    # outputs/ keeps the program's own bytes
    out = next((tmp_path / "ws" / "outputs").glob("*.txt")).read_bytes()
    assert b"\x1b]0;TITLE\x07" in out


def test_a_file_name_with_escapes_and_bidi_is_shown_escaped(tmp_path: Path) -> None:
    code = """
        import time
        open("x\\x1b]0;PWNED\\x07\\u202egnp.exe", "w").write("data")
        time.sleep(30)
    """
    proc = run_once(tmp_path, textwrap.dedent(code), "--timeout", "1.5")
    assert "writing files (" in proc.stderr, proc.stderr
    assert "\x1b" not in proc.stderr and "\u202e" not in proc.stderr
    assert "\\x1b]0;PWNED\\x07\\u202egnp.exe" in proc.stderr


# -- 4. secrets stay out of programs, files and prompts ---------------------------------


def test_secrets_never_reach_the_program_nor_any_file_nor_a_prompt(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("PI_HOST=127.0.0.1\nPI_PASSWORD=dotenv-pass-4242\n")
    config = tmp_path / "config.toml"
    config.write_text('[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\n'
                      'password_env = "MY_PI_PW"\n')
    env = {"MY_PI_PW": "hunter2-pi-password", "GITHUB_TOKEN": "ghp-token-777777",
           "SOME_API_KEY": "sk-api-key-99999", "HARMLESS": "visible-value"}
    # The program prints its whole environment, then the .env file it finds on disk,
    # and fails, so its output also goes back to the LLM in a feedback prompt.
    code = """
        import os, sys
        for k, v in sorted(os.environ.items()):
            print(f"{k}={v}")
        print(open("../../.env").read())
        sys.exit(1)
    """
    llm = replay(tmp_path, python_answer(code), python_answer("print('ok')"))
    # Outside the sandbox, which would hide the .env file (tests/targets/test_sandbox*.py):
    # here what is redacted is what a program found on disk.
    proc = run_cli("run", "show env", "--llm", llm, "--target", "local", "--yes",
                   "--workspace", str(ws), "--config", str(config), cwd=tmp_path,
                   env={**env, "VERIFYBOT_NO_SANDBOX": "1"})
    assert proc.returncode == 0, proc.stderr
    first = (ws / "outputs" / "show_env_1.txt").read_text()
    assert "HARMLESS=visible-value" in first  # the program did print its environment
    for name in ("MY_PI_PW", "GITHUB_TOKEN", "SOME_API_KEY"):
        assert f"\n{name}=" not in first
    assert "PI_PASSWORD=[redacted]" in first  # read from the file: the value is cut
    feedback = db_rows(ws, "SELECT text FROM prompts WHERE kind='feedback'")
    assert feedback and "HARMLESS=visible-value" in feedback[0][0]
    leaked = [str(p) for p in ws.rglob("*") if p.is_file() and p.name != ".env"
              and any(s.encode() in p.read_bytes() for s in
                      ("hunter2-pi-password", "ghp-token-777777", "sk-api-key-99999",
                       "dotenv-pass-4242"))]
    assert leaked == []
    for secret in ("hunter2-pi-password", "ghp-token-777777", "dotenv-pass-4242"):
        assert secret not in proc.stdout + proc.stderr


def test_env_deny_in_the_config_adds_names(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[run]\nenv_deny = ["MY_PRIVATE_*"]\n')
    proc = run_once(tmp_path, "import os; print(sorted(k for k in os.environ if 'MY_' in k))",
                    "--config", str(config), env={"MY_PRIVATE_X": "1", "MY_OPEN_Y": "2"})
    assert proc.returncode == 0, proc.stderr
    assert "['MY_OPEN_Y']" in proc.stdout


# -- 5. concurrent sessions in one workspace -------------------------------------------


def test_four_parallel_runs_of_one_prompt_never_share_a_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    llm = replay(tmp_path, python_answer("import os; print('pid', os.getpid())"))
    for round_ in range(3):
        procs = [subprocess.Popen([*verifybot_cmd(), "run", "same prompt", "--llm", llm,
                                   "--target", "local", "--yes", "--workspace", str(ws)],
                                  cwd=tmp_path, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert p.returncode == 0, err
        n = 4 * (round_ + 1)
        transcripts = list((ws / "raw_md").glob("*.md"))
        assert len(transcripts) == n
        for t in transcripts:
            assert t.read_text().count("# VerifyBot session ") == 1, t
        assert len(list((ws / "programs").glob("*.py"))) == n
        outputs = list((ws / "outputs").glob("*.txt"))
        assert len(outputs) == n
        for o in outputs:
            assert o.read_text().count("# exit status:") == 1, o


def test_a_session_waiting_at_approval_keeps_its_version_number(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    waiting = subprocess.Popen(
        [*verifybot_cmd(), "run", "same prompt", "--llm",
         replay(tmp_path, python_answer("print('from a')"), name="a.md"),
         "--target", "local", "--workspace", str(ws)],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        deadline = time.monotonic() + 60
        while not list((ws / "programs").glob("*.py")):
            assert time.monotonic() < deadline and waiting.poll() is None
            time.sleep(0.1)
        other = run_cli("run", "same prompt", "--llm", replay(
            tmp_path, "```python title=other.py\nprint('from b')\n```\n", name="b.md"),
            "--target", "local", "--yes", "--workspace", str(ws), cwd=tmp_path)
        assert other.returncode == 0, other.stderr
        out, err = waiting.communicate("a\n", timeout=60)
    finally:
        waiting.kill()
    assert waiting.returncode == 0, err
    outputs = sorted((ws / "outputs").glob("*.txt"))
    assert [o.name for o in outputs] == ["same_prompt_1.txt", "same_prompt_2.txt"]
    assert "from a" in outputs[0].read_text() and "from b" in outputs[1].read_text()
    assert sorted(p.name for p in (ws / "programs").iterdir()) == [
        "other_2.py", "same_prompt_1.py"]


# -- 6. no internal error from any name or number ----------------------------------------


def test_a_254_byte_file_name_is_saved_shortened(tmp_path: Path) -> None:
    name = "é" * 124 + "abc.py"  # 254 bytes: 256 with "_1"
    assert len(name.encode()) == 254
    answer = f"```python title={name}\nprint('long name ran')\n```\n"
    proc = run_cli("run", "long", "--llm", replay(tmp_path, answer), "--target", "local",
                   "--yes", "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "long name ran" in proc.stdout
    saved = list((tmp_path / "ws" / "programs").iterdir())
    assert len(saved) == 1 and saved[0].name.endswith("_1.py")
    assert len(saved[0].name.encode()) <= 255


def test_a_file_beside_a_folder_of_the_same_name_is_refused_with_a_note(
        tmp_path: Path) -> None:
    answer = ("```python title=main.py\nprint('main ran')\n```\n\n"
              "```python title=main.py/helper.py\nX = 1\n```\n")
    proc = run_cli("run", "clash", "--llm", replay(tmp_path, answer), "--target", "local",
                   "--yes", "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "main ran" in proc.stdout
    assert "main.py/helper.py is left out" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e12"])
def test_bad_timeouts_exit_2_on_the_command_line_and_in_the_config(
        tmp_path: Path, value: str) -> None:
    proc = run_once(tmp_path, "print(1)", "--timeout", value)
    assert proc.returncode == 2, proc.stderr
    assert "--timeout must be" in proc.stderr and "Traceback" not in proc.stderr
    config = tmp_path / "config.toml"
    config.write_text(f"[run]\ntimeout = {value}\n")
    proc = run_once(tmp_path, "print(1)", "--config", str(config))
    assert proc.returncode == 2, proc.stderr
    assert "run.timeout" in proc.stderr and "Traceback" not in proc.stderr


def test_a_replay_file_that_is_not_utf8_exits_2_with_a_short_message(tmp_path: Path) -> None:
    path = tmp_path / "latin1.md"
    path.write_bytes(b"## Answer 1\n\n```python\nprint('caf\xe9')\n```\n" + b"\xff" * 5000)
    proc = run_cli("run", "x", "--llm", f"replay:{path}", "--target", "local", "--yes",
                   "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "not UTF-8" in proc.stderr
    assert len(proc.stderr) < 1000 and "\\xff\\xff" not in proc.stderr


@pytest.mark.parametrize("command", [
    ["run", "x", "--llm", "replay:/nonexistent", "--target", "local", "--yes"],
    ["history"], ["probe", "--target", "local"]])
def test_a_workspace_that_cannot_work_exits_2_for_every_command(
        tmp_path: Path, command: list[str]) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a folder")
    for ws, words in ((a_file, "is a file"), (Path("/proc/verifybot-ws"), "system folder")):
        proc = run_cli(*command, "--workspace", str(ws), cwd=tmp_path)
        assert proc.returncode == 2, (ws, proc.stderr)
        assert words in proc.stderr and "Traceback" not in proc.stderr


def test_a_read_only_workspace_exits_2(tmp_path: Path) -> None:
    ro = Path(tempfile.mkdtemp(prefix="vb-ro-", dir="/tmp"))  # reachable by nobody
    os.chmod(ro, 0o555)
    # root writes anywhere: run as nobody, who cannot write into ro/
    proc = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         *verifybot_cmd(), "run", "x", "--llm", "replay:/nonexistent", "--target", "local",
         "--yes", "--workspace", str(ro / "ws")],
        cwd="/", capture_output=True, text=True, timeout=60,
        env={**os.environ, "HOME": "/tmp", "XDG_CONFIG_HOME": "/nonexistent"})
    ro.rmdir()
    assert proc.returncode == 2, proc.stderr
    assert "not writable" in proc.stderr and "Traceback" not in proc.stderr


# -- 7. history never lies ----------------------------------------------------------------


def test_history_marks_a_dead_session_interrupted_on_read(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    proc = run_once(tmp_path, "print('ok')", ws=ws)
    assert proc.returncode == 0
    dead = subprocess.Popen(["true"])
    dead.wait()
    con = sqlite3.connect(ws / "history.db")
    con.execute("UPDATE sessions SET status='RUNNING', finished_at=NULL, pid=?",
                (dead.pid,))
    con.execute("UPDATE attempts SET status='RUNNING'")
    con.commit()
    con.close()
    listing = run_cli("history", "--workspace", str(ws), cwd=tmp_path)
    assert listing.returncode == 0
    assert "INTERRUPTED" in listing.stdout and "RUNNING" not in listing.stdout
    assert db_rows(ws, "SELECT status FROM attempts") == [("INTERRUPTED",)]


# -- 9. bounded output and answers --------------------------------------------------------


def test_outputs_keep_at_most_max_output_mb_with_a_note(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[run]\nmax_output_mb = 1\n")
    code = """
        import sys
        line = "x" * 1023 + "\\n"
        for _ in range(8 * 1024):
            sys.stdout.write(line)
        print("the end")
    """
    proc = run_once(tmp_path, textwrap.dedent(code), "--config", str(config))
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = next((tmp_path / "ws" / "outputs").glob("*.txt"))
    assert out.stat().st_size < 1024 * 1024 + 4096
    text = out.read_text()
    assert "# output cut: 7,340,040 more bytes came after the first 1,048,576" in text
    assert "# exit status: 0" in text


def test_an_answer_above_the_size_limit_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[run]\nmax_answer_mb = 1\n")
    big = "```python\n" + "# filler\n" * 200_000 + "print(1)\n```\n"
    proc = run_cli("run", "x", "--llm", replay(tmp_path, big), "--target", "local", "--yes",
                   "--workspace", str(tmp_path / "ws"), "--config", str(config),
                   cwd=tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "max_answer_mb" in proc.stderr


# -- 10. private files ----------------------------------------------------------------------


def test_a_new_workspace_is_private(tmp_path: Path) -> None:
    ws = tmp_path / "new" / "ws"
    proc = run_once(tmp_path, "print('hi')", ws=ws)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(ws.stat().st_mode) == 0o700
    for folder in ("programs", "outputs", "raw_md", "context"):
        assert stat.S_IMODE((ws / folder).stat().st_mode) == 0o700, folder
    files = [ws / "history.db", *(ws / "raw_md").iterdir(), *(ws / "outputs").iterdir()]
    for f in files:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f


def test_extract_refuses_an_oversized_or_non_utf8_file_with_exit_2(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_text("```python\n" + "# filler\n" * 700_000 + "```\n")  # 6.3 MB > 5 MB
    proc = run_cli("extract", str(big), cwd=tmp_path)
    assert proc.returncode == 2 and "max_answer_mb" in proc.stderr, proc.stderr
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"```python\nprint('\xff')\n```\n")
    proc = run_cli("extract", str(bad), cwd=tmp_path)
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr, proc.stderr
