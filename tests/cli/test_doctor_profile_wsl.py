"""doctor on a never-used profile and on WSL; `verifybot history` cuts at a word."""

from __future__ import annotations

import subprocess
from pathlib import Path

from project import verifybot_cmd

from verifybot_tui.cli.commands import shorten
from verifybot_tui.cli.doctor import wsl


def test_a_profile_with_only_a_stale_singleton_lock_says_run_login(tmp_path: Path) -> None:
    profile = tmp_path / "profile"
    profile.mkdir()
    (profile / "SingletonLock").symlink_to("gone-host-12345")  # dangling, as Chromium leaves it
    (tmp_path / "config.toml").write_text(
        f'[llm.chatgpt]\nbrowser_path = "/usr/bin/chromium"\nprofile_dir = "{profile}"\n'
        'headless = true\n[targets.local]\nkind = "local"\n')
    proc = subprocess.run([*verifybot_cmd(), "doctor", "--config", "config.toml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "was never used" in proc.stdout and "run `verifybot login --llm chatgpt`" \
        in proc.stdout, proc.stdout
    assert "exists, login not checked" not in proc.stdout


def test_wsl_is_recognised_by_its_kernel(tmp_path: Path) -> None:
    version = tmp_path / "version"
    version.write_text("Linux version 5.15.153.1-microsoft-standard-WSL2 (root@...)\n")
    assert wsl(version)
    version.write_text("Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org)\n")
    assert not wsl(version)
    assert not wsl(tmp_path / "missing")


def test_history_cuts_at_a_word_with_an_ellipsis() -> None:
    reason = 'FAILED: TypeError: can only concatenate str (not "int") to str, see line 8'
    cut = shorten(reason, 60)
    assert cut.endswith("…") and len(cut) <= 60
    assert reason.startswith(cut[:-1]) and reason[len(cut) - 1] == " ", cut  # a whole word
    assert shorten("short enough", 60) == "short enough"
