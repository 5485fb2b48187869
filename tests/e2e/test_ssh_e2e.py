"""The whole loop on the SSH target: the real CLI, the replay LLM, a real sshd.

What a user with a Pi does: `verifybot run ... --target pi`, the first answer
fails on the target, the error goes back, the second answer works there.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from project import EXAMPLES, verifybot_cmd
from sshd_fixtures import wait_gone

pytestmark = pytest.mark.ssh

PROMPT = "Print the total number of words in a short text and its 3 most common words"


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), *args], cwd=cwd, input="", capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def test_loop_end_to_end_on_the_ssh_target(sshd, remote_dir, tmp_path):
    ws = tmp_path / "ws"
    cfg = sshd.write_config_toml(tmp_path / "config.toml", remote_dir[0])
    r = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}", "--target", "pi",
                "--yes", "--workspace", str(ws), "--config", str(cfg), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Total words: 17" in r.stdout
    assert "TypeError" in r.stdout + r.stderr  # the first answer really failed on the target
    runs = sorted(p.name for p in Path(remote_dir[1], "runs").iterdir())
    assert len(runs) == 2, runs
    assert (ws / "context" / "pi.md").read_text().startswith("# Target: pi\n")
    transcript = next((ws / "raw_md").glob("*.md")).read_text()
    assert "# Target: pi" in transcript and sshd.password not in transcript
    assert wait_gone(remote_dir[1]) == []


def test_wrong_credentials_exit_4_with_a_clear_message(sshd, remote_dir, tmp_path):
    stray = tmp_path / "stray"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stray)], check=True)
    home = tmp_path / "home"
    home.mkdir()
    cfg = sshd.write_config_toml(tmp_path / "config.toml", remote_dir[0], key_file=str(stray),
                                 password_env="VB_E2E_PW")
    env = {"HOME": str(home), "VB_E2E_PW": "wrong-password", "SSH_AUTH_SOCK": ""}
    r = run_cli("run", PROMPT, "--llm", f"replay:{EXAMPLES / 'word_count.md'}", "--target", "pi",
                "--yes", "--workspace", str(tmp_path / "ws"), "--config", str(cfg),
                cwd=tmp_path, env=env)
    assert r.returncode == 4, r.stderr[-3000:]
    assert "authentication failed" in r.stderr and f"127.0.0.1:{sshd.port}" in r.stderr
    assert "wrong-password" not in r.stdout + r.stderr
    for path in (tmp_path / "ws").rglob("*"):
        if path.is_file():
            assert b"wrong-password" not in path.read_bytes(), path


def test_a_password_typed_at_the_prompt_is_redacted_everywhere(sshd, remote_dir, tmp_path):
    """Issue 11 item 4: no config names a typed password, yet a program that finds and
    prints it (here from a file on the Pi) never puts it in outputs, transcripts,
    history.db or the feedback prompt: the prompt's answer joins the redactor."""
    from cli_runs import answers, python_answer

    secret_file = Path(remote_dir[1]).parent / "pw.txt"
    secret_file.write_text(sshd.password)
    os.chmod(secret_file, 0o644)
    replay = tmp_path / "leak.md"
    replay.write_text(answers(
        python_answer(f"import sys; print('pw:', open({str(secret_file)!r}).read()); "
                      f"sys.exit(1)"),
        python_answer("print('fixed')")))
    home = tmp_path / "home"
    home.mkdir()
    ws = tmp_path / "ws"
    cfg = sshd.write_config_toml(tmp_path / "config.toml", remote_dir[0], key_file="",
                                 password_env="VB_E2E_UNSET_PW")
    r = subprocess.run(
        [*verifybot_cmd(), "run", "leak it", "--llm", f"replay:{replay}", "--target", "pi",
         "--yes", "--max-retries", "1", "--workspace", str(ws), "--config", str(cfg)],
        cwd=tmp_path, input=sshd.password + "\n", capture_output=True, text=True, timeout=120,
        env={**os.environ, "HOME": str(home), "SSH_AUTH_SOCK": ""})
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Password for" in r.stderr  # it was typed, not configured
    assert "pw: [redacted]" in r.stdout + r.stderr
    assert sshd.password not in r.stdout + r.stderr
    files = [p for p in ws.rglob("*") if p.is_file()]
    assert any(p.suffix == ".md" for p in files) and any(p.name == "history.db" for p in files)
    for path in files:
        assert sshd.password.encode() not in path.read_bytes(), path
    transcript = next((ws / "raw_md").glob("*.md")).read_text()
    assert "pw: [redacted]" in transcript  # the feedback prompt carried it, redacted
