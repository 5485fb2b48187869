"""`verifybot doctor` reports each part's state in a line and fails when something is broken."""

from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import verifybot_cmd


def doctor(tmp_path: Path, config: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "config.toml"
    path.write_text(config)
    return subprocess.run([*verifybot_cmd(), "doctor", "--config", str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


def test_doctor_all_well(tmp_path: Path) -> None:
    proc = doctor(tmp_path, '[llm.chatgpt]\nbrowser_path = "/usr/bin/chromium"\n')
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK   llm chatgpt: browser /usr/bin/chromium" in proc.stdout
    assert "WARN llm chatgpt: no profile" in proc.stdout and "verifybot login" in proc.stdout
    assert "OK   target local" in proc.stdout


def test_doctor_reports_a_bad_browser_path_and_an_unreachable_pi(tmp_path: Path) -> None:
    proc = doctor(tmp_path, '[llm.chatgpt]\nbrowser_path = "/nonexistent/chrome"\n'
                            '[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\nport = 1\n'
                            f'user = "pi"\nknown_hosts = "{tmp_path / "kh"}"\n')
    assert proc.returncode == 1
    assert "FAIL llm chatgpt: browser_path '/nonexistent/chrome'" in proc.stdout
    assert "FAIL target pi:" in proc.stdout and "127.0.0.1" in proc.stdout


def test_doctor_bad_config_exit_2(tmp_path: Path) -> None:
    proc = doctor(tmp_path, "[run]\nretries = 2\n")
    assert proc.returncode == 2
    assert "FAIL config" in proc.stdout and "run.retries" in proc.stdout
