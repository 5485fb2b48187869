"""Bad input is a message before anything runs (issue 21, point 8), each a reproduction.

Output paths that cannot be written, numbers that overflow, recipes naming what is
not there, special files given as input, a full disk: exit 2 (or a plain message)
naming the file, the key and what to do; never a traceback, never a run first.
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
from pathlib import Path

import pytest
from cli_runs import answers, db_rows, python_answer, replay, run_cli, run_once
from project import verifybot_cmd


def _no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr


def _recipe(tmp_path: Path, extra: str = "", name: str = "r.toml") -> Path:
    (tmp_path / "a.md").write_text(answers(python_answer("print(1)")), encoding="utf-8")
    path = tmp_path / name
    path.write_text(f'name = "{name}"\nprompt = "p"\nllm = "replay:a.md"\n{extra}',
                    encoding="utf-8")
    return path


def _nothing_ran(tmp_path: Path) -> None:
    assert not (tmp_path / "ws" / "history.db").exists() or not db_rows(
        tmp_path / "ws", "SELECT id FROM sessions")


@pytest.mark.parametrize("junit, says", [
    (".", "is a folder"), ("no/such/dir/r.xml", "does not exist")])
def test_junit_at_a_folder_or_a_missing_folder_is_refused_before_running(
        tmp_path: Path, junit: str, says: str) -> None:
    _recipe(tmp_path)
    proc = run_cli("recipe", "run", "r.toml", "--junit", junit, "--workspace",
                   str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 2 and says in proc.stderr and "--junit" in proc.stderr
    _no_traceback(proc)
    _nothing_ran(tmp_path)


def test_junit_to_dev_full_is_a_message(tmp_path: Path) -> None:
    _recipe(tmp_path)
    proc = run_cli("recipe", "run", "r.toml", "--junit", "/dev/full", "--workspace",
                   str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 2 and "No space left on device" in proc.stderr, proc.stderr
    _no_traceback(proc)


def test_recipe_new_output_at_a_folder_is_refused(tmp_path: Path) -> None:
    assert run_once(tmp_path, "print(1)").returncode == 0
    proc = run_cli("recipe", "new", "-o", str(tmp_path), "--workspace", str(tmp_path / "ws"),
                   cwd=tmp_path)
    assert proc.returncode == 2 and "is a folder" in proc.stderr
    _no_traceback(proc)


@pytest.mark.parametrize("extra, says", [
    ("timeout = nan\n", "key 'timeout'"),
    ("timeout = inf\n", "key 'timeout'"),
    ('judge = "nobody"\n', "key 'judge' names 'nobody'"),
    ('judge = "replay:nothere.md"\n', "key 'judge'"),
    ('criteria = ["regex:a{99999999999}"]\n', "does not compile"),
    ('criteria = ["file:../../../etc/passwd"]\n', "inside the run folder"),
])
def test_a_bad_recipe_is_found_before_any_recipe_runs(tmp_path: Path, extra: str,
                                                      says: str) -> None:
    _recipe(tmp_path, name="good.toml")
    _recipe(tmp_path, extra, name="bad.toml")
    proc = run_cli("recipe", "run", "good.toml", "bad.toml", "--workspace",
                   str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "bad.toml" in proc.stderr and says in proc.stderr, proc.stderr
    _no_traceback(proc)
    _nothing_ran(tmp_path)


def test_a_non_utf8_replay_in_a_recipe_is_found_before_running(tmp_path: Path) -> None:
    path = _recipe(tmp_path)
    (tmp_path / "a.md").write_bytes(b"## Answer 1\n\n\xff\xfe\n")
    proc = run_cli("recipe", "run", path.name, "--workspace", str(tmp_path / "ws"),
                   cwd=tmp_path)
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr and "key 'llm'" in proc.stderr
    _nothing_ran(tmp_path)


def test_a_workspace_that_cannot_be_made_is_found_before_recipes_run(tmp_path: Path) -> None:
    _recipe(tmp_path)
    (tmp_path / "afile").write_text("x")
    proc = run_cli("recipe", "run", "r.toml", "--workspace", str(tmp_path / "afile" / "ws"),
                   cwd=tmp_path)
    assert proc.returncode == 2 and "not writable" in proc.stderr, proc.stderr
    _no_traceback(proc)


def test_huge_sizes_in_the_config_are_usage_errors(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text("[run]\nmax_output_mb = 1e308\n")
    proc = run_cli("run", "x", "--config", str(cfg), "--llm", replay(tmp_path, "hi"),
                   "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 2 and "run.max_output_mb" in proc.stderr
    _no_traceback(proc)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how", ["criteria", "recipe", "extract"])
@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_special_files_are_refused_by_type(tmp_path: Path, how: str, special: str) -> None:
    path = special
    if special == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    args = {"criteria": ["run", "x", "--llm", replay(tmp_path, "hi"), "--criteria", path],
            "recipe": ["recipe", "run", path],
            "extract": ["extract", path]}[how]
    proc = run_cli(*args, "--workspace", str(tmp_path / "ws"), cwd=tmp_path, timeout=30)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr
    _no_traceback(proc)


def _small_disk() -> None:
    """Every file this process writes stops growing at 100 kB (EFBIG, like a full disk)."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))


def test_a_full_disk_is_a_message_and_history_stays_readable(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    assert run_once(tmp_path, "print('before')").returncode == 0
    flood = "import sys\nfor i in range(20000): print('x' * 60)"
    args = ["run", "flood", "--llm", replay(tmp_path, python_answer(flood), name="f.md"),
            "--target", "local", "--yes", "--max-retries", "0", "--workspace", str(ws)]
    proc = subprocess.run([*verifybot_cmd(), *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, preexec_fn=_small_disk)
    assert proc.returncode != 0
    _no_traceback(proc)
    assert "free some space" in proc.stderr, proc.stderr
    history = subprocess.run([*verifybot_cmd(), "history", "--workspace", str(ws)],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60,
                             preexec_fn=_small_disk)
    assert history.returncode == 0 and "do it" in history.stdout, history.stderr
    _no_traceback(history)


def test_outputs_keep_the_stderr_mark_inside_a_mixed_line(tmp_path: Path) -> None:
    code = """
        import sys, time
        sys.stdout.write("half a line"); sys.stdout.flush(); time.sleep(0.3)
        sys.stderr.write("an error\\n"); sys.stderr.flush(); time.sleep(0.3)
        print(" and its end")
    """
    assert run_once(tmp_path, code).returncode == 0
    out = next((tmp_path / "ws" / "outputs").glob("*.txt")).read_text()
    assert "\nstderr| an error\n" in out, out


def test_modes_are_private_even_in_an_existing_open_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    for sub in ("", "programs", "outputs", "raw_md", "context", "runs"):
        (ws / sub).mkdir(parents=True, exist_ok=True)
        os.chmod(ws / sub, 0o755)
    code = f"""
        import os, time
        deadline = time.monotonic() + 20
        live = []
        while not live and time.monotonic() < deadline:
            live = [os.path.join(r, f) for r, _, fs in os.walk({str(ws / 'runs')!r})
                    for f in fs if f.endswith('.json')]
            time.sleep(0.01)
        print("LIVE", " ".join(oct(os.stat(p).st_mode & 0o777) for p in live))
    """
    # The program looks at runs/.live while it runs: outside the sandbox, which hides it.
    # VerifyBot writes the note once it has the program's pid, so the program waits for it
    # (a loaded CI-like run once started it, and looked, first).
    proc = run_once(tmp_path, code, ws=ws, env={"VERIFYBOT_NO_SANDBOX": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "LIVE 0o600" in proc.stdout, proc.stdout
    for sub in ("programs", "outputs", "raw_md", "context", "runs"):
        assert stat.S_IMODE((ws / sub).stat().st_mode) == 0o700, sub
    run_dirs = [p for p in (ws / "runs").iterdir() if p.name not in (".live", "log")]
    assert run_dirs and all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in run_dirs)
    copies = [p for d in run_dirs for p in d.glob("*.py")]
    assert copies and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in copies)
    contexts = list((ws / "context").glob("*.md"))
    assert contexts and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in contexts)


