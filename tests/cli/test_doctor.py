"""`verifybot doctor` reports each part's state in a line and fails when something is broken."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from project import verifybot_cmd

from verifybot_tui.llm.browser.first_start import LOGIN_STAMP


def doctor(tmp_path: Path, config: str,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "config.toml"
    path.write_text(config)
    return subprocess.run([*verifybot_cmd(), "doctor", "--config", str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=env)


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


def test_doctor_says_a_profile_is_not_a_login_and_warns_about_no_display(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    (profile / "Default").mkdir(parents=True)  # a browser ran with it; nobody logged in
    config = ('[llm.chatgpt]\nbrowser_path = "/usr/bin/chromium"\n'
              f'profile_dir = "{profile}"\nheadless = false\n')
    env_no_display = {k: v for k, v in os.environ.items()
                      if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = doctor(tmp_path, config, env=env_no_display)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "exists, login not checked" in proc.stdout
    assert "OK   llm chatgpt: profile" not in proc.stdout
    assert "WARN llm chatgpt: headless = false needs a display" in proc.stdout
    (profile / LOGIN_STAMP).write_text("2026-01-01 10:00:00\n")  # what `verifybot login` leaves
    proc = doctor(tmp_path, config, env={**env_no_display, "DISPLAY": ":0"})
    assert "OK   llm chatgpt: profile" in proc.stdout and "logged in with" in proc.stdout
    assert "needs a display" not in proc.stdout


def test_login_without_a_display_says_what_to_do(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    proc = subprocess.run([*verifybot_cmd(), "login"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert "opens a browser window" in proc.stderr and "profile_dir" in proc.stderr
