"""The app's first screen loads only what it draws: what it does not show yet loads when used.

Every module imported before the first frame is time the user waits at each start
(issue 22: the first frame within 1.5x a bare Textual app). This starts the real
``verifybot`` command in a terminal (a pty), lets it draw its first screen, and
lists what the process has imported by then: none of the modules below may be
there. Each was on the first screen's path once (criteria's regex library, the
headless commands, the code pane's tabs, the Tree label's emoji table) or belongs
to a later step (markdown, highlighting, the browser, SSH, the API SDKs).
"""

from __future__ import annotations

import os
import pty
import select
import sys
import time
from pathlib import Path

# Not needed until a prompt is sent, code is shown, a pattern is compiled or a
# command other than the app runs.
LATER = (
    "regex",                                 # criteria compile their patterns when parsed
    "markdown_it",                           # answers are parsed when one arrives
    "pygments",                              # code is highlighted when there is code
    "playwright", "asyncssh", "anthropic", "openai", "httpx",  # the backends connect later
    "verifybot_tui.cli.run",                 # the headless commands
    "verifybot_tui.cli.commands",
    "verifybot_tui.core.answers.extract",
    "verifybot_tui.core.loop.verify_loop",
    "verifybot_tui.core.verify.recipe",      # a recipe is opened from the palette
    "textual.widgets._tabbed_content",       # the code pane's tabs, once there is code
    "textual.widgets._markdown",
    "rich._emoji_codes",                     # markup in a plain label
)

# Run in the child: at the first write that draws the screen, list sys.modules.
PROBE = """
import os, sys
from textual.drivers.linux_driver import LinuxDriver
_write = LinuxDriver.write
def write(self, data):
    if "Conversation" in data:
        with open(os.environ["VB_MODULES"] + ".part", "w") as f:
            f.write("\\n".join(sorted(sys.modules)))
        os.replace(os.environ["VB_MODULES"] + ".part", os.environ["VB_MODULES"])  # whole
        os._exit(0)
    _write(self, data)
LinuxDriver.write = write
from verifybot_tui.cli.entry import main
sys.argv[0] = "verifybot"
sys.exit(main())
"""


def _first_screen_modules(tmp_path: Path) -> set[str]:
    listing = tmp_path / "modules.txt"
    transcript = tmp_path / "one.md"
    transcript.write_text("## Answer 1\n\n```python\nprint(1)\n```\n")
    env = {**os.environ, "TERM": "xterm-256color", "VB_MODULES": str(listing),
           "XDG_CONFIG_HOME": str(tmp_path / "cfg"), "XDG_DATA_HOME": str(tmp_path / "data")}
    argv = [sys.executable, "-c", PROBE, "--llm", f"replay:{transcript}",
            "--workspace", str(tmp_path / "ws")]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, env)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while not listing.exists() or not listing.read_text():
            assert time.monotonic() < deadline, f"no first screen: {seen[-800:]!r}"
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    seen += os.read(fd, 65536)
                except OSError:  # the child is gone: it listed its modules, or failed
                    pass
            if os.waitpid(pid, os.WNOHANG)[0]:
                pid = 0
                break
    finally:
        if pid:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
    assert listing.exists(), f"the app exited before its first screen: {seen[-800:]!r}"
    return set(listing.read_text().split())


def test_the_first_screen_imports_only_what_it_draws(tmp_path: Path) -> None:
    loaded = _first_screen_modules(tmp_path)
    assert "verifybot_tui.tui.screens.main.screen" in loaded  # it did draw the app's screen
    assert sorted(m for m in LATER if m in loaded) == []
