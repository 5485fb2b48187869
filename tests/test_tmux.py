"""The real `verifybot` command in a real terminal (tmux): type, accept, read the screen.

What run_test cannot show: the entry point starts the TUI, keys arrive
through a terminal, and a program's hostile escapes (a new window title,
clear screen) never reach that terminal.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tui_support import write_answers

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(120)]

VENV_BIN = Path(sys.executable).parent
PROGRAM = ("import sys\nsys.stdout.write('\\x1b]2;PWNED\\x07\\x1b[2J\\x1b[H')\n"
           "print('\\x1b[31mhello from tmux\\x1b[0m')")


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True, check=True, timeout=10).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "vb")

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never showed; the screen:\n{screen}")
            time.sleep(0.1)


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    assert shutil.which("tmux"), "tmux is needed (apt install tmux)"
    t = Tmux(f"vb-test-{secrets.token_hex(4)}")
    yield t
    subprocess.run(["tmux", "-L", t.socket, "kill-server"], capture_output=True, timeout=10)


def test_prompt_accept_output_and_history_in_a_real_terminal(tmux: Tmux, tmp_path: Path):
    transcript = write_answers(tmp_path / "t.md", PROGRAM)
    config = tmp_path / "config.toml"
    config.write_text('[run]\ntimeout = 20\n[ui]\ntheme = "verifybot-dark"\n')
    ws = tmp_path / "ws"
    entry = VENV_BIN / "verifybot"
    command = [str(entry)] if entry.exists() else [sys.executable, "-m", "verifybot_tui"]
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
           "XDG_DATA_HOME": str(tmp_path / "xdg-data"), "TERM": "xterm-256color"}
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    shell = (f"cd {tmp_path} && env -u NO_COLOR {exports} {' '.join(command)} "
             f"--llm replay:{transcript} --workspace {ws} --config {config}; "
             f"echo EXITED $?; sleep 30")
    tmux("new-session", "-d", "-s", "vb", "-x", "130", "-y", "40", shell)
    tmux.wait_for("Ask for a program")
    tmux.wait_for("connected")
    tmux("send-keys", "-t", "vb", "-l", "say hello")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for("Accept [a]")
    assert "say_hello_1.py" in tmux.screen()
    tmux("send-keys", "-t", "vb", "a")
    screen = tmux.wait_for("hello from tmux")
    screen = tmux.wait_for("✔ #1 say_hello")
    assert "exit status 0" in screen
    assert "target local" in screen, "the app still owns the screen (no clear got through)"
    title = tmux("display-message", "-p", "-t", "vb", "#{pane_title}")
    assert "PWNED" not in title, "the program could not set the terminal's title"
    tmux("send-keys", "-t", "vb", "C-q")
    tmux.wait_for("EXITED 0", timeout=20)
    assert (ws / "outputs" / "say_hello_1.txt").read_text().count("hello from tmux") == 1
    assert not os.path.exists(tmp_path / "xdg-config" / "verifybot" / "config.toml"), \
        "nothing was written to the user config"
