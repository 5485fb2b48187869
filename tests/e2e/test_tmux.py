"""The real `verifybot` command in a real terminal (tmux): type, accept, read the screen.

What run_test cannot show: the entry point starts the TUI, keys arrive
through a terminal, and a program's hostile escapes (a new window title,
clear screen) never reach that terminal.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from proc_helpers import below, pids_seen_as

pytestmark = [pytest.mark.tmux, pytest.mark.timeout(120)]

VENV_BIN = Path(sys.executable).parent
PROGRAM = ("import sys\nsys.stdout.write('\\x1b]2;PWNED\\x07\\x1b[2J\\x1b[H')\n"
           "print('\\x1b[31mhello from tmux\\x1b[0m')")


APPROVAL = ("Accept [a]", "a accept")  # the buttons, or the one-line bar of small screens


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args],
                              capture_output=True, text=True, check=True, timeout=10).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "vb")

    def wait_for(self, text: str | tuple[str, ...], timeout: float = 30.0, *,
                 gone: bool = False) -> str:
        """The screen once it shows ``text`` (or any of several texts); ``gone``: once
        it shows none of them. Polled every 0.1 s."""
        wanted = (text,) if isinstance(text, str) else text
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if any(t in screen for t in wanted) != gone:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never {'went' if gone else 'showed'}; "
                                     f"the screen:\n{screen}")
            time.sleep(0.1)

    def settled(self, timeout: float = 30.0) -> str:
        """The screen once two captures 0.3 s apart are the same: where to click is read
        from it, and a pane still laying out would move the spot before the click lands."""
        deadline = time.monotonic() + timeout
        last = self.screen()
        while True:
            time.sleep(0.3)
            screen = self.screen()
            if screen == last or time.monotonic() > deadline:
                return screen
            last = screen


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    assert shutil.which("tmux"), "tmux is needed (apt install tmux)"
    t = Tmux(f"vb-test-{secrets.token_hex(4)}")
    yield t
    subprocess.run(["tmux", "-L", t.socket, "kill-server"], capture_output=True, timeout=10)


def start_app(tui, tmux: Tmux, tmp_path: Path, *codes: str, size: tuple[int, int] = (130, 40),
              config: str = "[run]\ntimeout = 20\n") -> Path:
    """The installed `verifybot` in a tmux pane on a replay of ``codes``; the workspace."""
    transcript = tui.write_answers(tmp_path / "t.md", *codes)
    config_path = tmp_path / "config.toml"
    config_path.write_text(config + ("" if "[ui]" in config else
                                     '[ui]\ntheme = "verifybot-dark"\n'))
    ws = tmp_path / "ws"
    entry = VENV_BIN / "verifybot"
    command = [str(entry)] if entry.exists() else [sys.executable, "-m", "verifybot_tui"]
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
           "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
           "XDG_STATE_HOME": str(tmp_path / "xdg-state"), "TERM": "xterm-256color"}
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    # COLUMNS/LINES from the test run would override the pane's real size.
    shell = (f"cd {tmp_path} && env -u NO_COLOR -u COLUMNS -u LINES {exports} {' '.join(command)} "
             f"--llm replay:{transcript} --workspace {ws} --config {config_path}; "
             f"echo EXITED $?; sleep 30")
    tmux("new-session", "-d", "-s", "vb", "-x", str(size[0]), "-y", str(size[1]), shell)
    tmux.wait_for("Ask for a program")

    return ws


def test_prompt_accept_output_and_history_in_a_real_terminal(tui, tmux: Tmux, tmp_path: Path):
    ws = start_app(tui, tmux, tmp_path, PROGRAM)
    tmux.wait_for("connected")
    tmux("send-keys", "-t", "vb", "-l", "say hello")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    assert "say_hello_1.py" in tmux.screen()
    tmux("send-keys", "-t", "vb", "a")
    tmux.wait_for("hello from tmux")
    tmux.wait_for("✔ #1 say_hello")
    screen = tmux.wait_for("exit status 0")  # the output pane's last line: drawn on its own
    assert "target local" in screen, "the app still owns the screen (no clear got through)"
    title = tmux("display-message", "-p", "-t", "vb", "#{pane_title}")
    assert "PWNED" not in title, "the program could not set the terminal's title"
    tmux("send-keys", "-t", "vb", "C-q")
    tmux.wait_for("EXITED 0", timeout=20)
    assert (ws / "outputs" / "say_hello_1.txt").read_text().count("hello from tmux") == 1
    assert not os.path.exists(tmp_path / "xdg-config" / "verifybot" / "config.toml"), \
        "nothing was written to the user config"


TICKS = 30
TICKER = f"""
import time
for i in range({TICKS}):
    print(f"tick {{i:02d}} at {{time.time():.3f}}", flush=True)
    time.sleep(0.3)
"""


def test_output_follows_a_line_every_0_3_s(tui, tmux: Tmux, tmp_path: Path):
    """The pane (a dozen rows here) keeps the newest tick in view all through the run.

    Each tick is looked for on the screen as soon as possible after it is printed;
    the lag figures are printed (no timed assert: the machine may be busy).
    """
    start_app(tui, tmux, tmp_path, TICKER, size=(100, 30))
    tmux.wait_for("connected")
    tmux("send-keys", "-t", "vb", "-l", "tick")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    tmux("send-keys", "-t", "vb", "a")
    seen: dict[int, float] = {}
    printed: dict[int, float] = {}
    deadline = time.monotonic() + 60
    while len(seen) < TICKS and time.monotonic() < deadline:
        screen = tmux.screen()
        now = time.time()
        for m in re.finditer(r"tick (\d\d) at (\d+\.\d{3})", screen):
            n = int(m[1])
            seen.setdefault(n, now)
            printed[n] = float(m[2])
        time.sleep(0.02)
    assert sorted(seen) == list(range(TICKS)), f"ticks never on screen: " \
        f"{sorted(set(range(TICKS)) - set(seen))}; the pane did not follow"
    screen = tmux.wait_for("exit status 0")
    assert f"tick {TICKS - 1:02d}" in screen, "the last tick is in view at the end"
    by_tick = [round((seen[n] - printed[n]) * 1000) for n in sorted(seen)]
    lags = sorted(by_tick)
    print(f"\ntick on screen after print: median {lags[len(lags) // 2]} ms, "
          f"worst {lags[-1]} ms (includes the 20 ms capture-pane poll); by tick: {by_tick}")


FLOOD = """
import sys
out = sys.stdout
for i in range(1, 200001):
    out.write(f"flood line {i} of 200000\\n")
"""


def test_after_a_200000_line_flood_the_last_line_and_exit_status_show(tui, tmux: Tmux,
                                                                        tmp_path: Path):
    ws = start_app(tui, tmux, tmp_path, FLOOD, size=(100, 30))
    tmux.wait_for("connected")
    tmux("send-keys", "-t", "vb", "-l", "flood")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    tmux("send-keys", "-t", "vb", "a")
    screen = tmux.wait_for("exit status 0", timeout=90)
    assert "flood line 200000 of 200000" in screen, screen
    assert "flood line 199999 of 200000" in screen
    saved = (ws / "outputs" / "flood_1.txt").read_text()
    assert saved.count("\n") >= 200000


def test_a_multi_line_paste_arrives_whole_at_the_replay(tui, tmux: Tmux, tmp_path: Path):
    ws = start_app(tui, tmux, tmp_path, "print('pasted ok')", size=(100, 30))
    tmux.wait_for("connected")
    prompt = "Print a greeting\nthat spans [three] lines\n  and keeps indentation"
    tmux("set-buffer", "-b", "vbpaste", prompt)
    tmux("paste-buffer", "-p", "-b", "vbpaste", "-t", "vb")  # bracketed, as a terminal does
    screen = tmux.wait_for("keeps indentation")
    assert "that spans [three] lines" in screen, "every line is in the box"
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    tmux("send-keys", "-t", "vb", "a")
    tmux.wait_for("pasted ok")
    (transcript,) = (ws / "raw_md").iterdir()
    assert prompt in transcript.read_text(), "the prompt the replay got holds all lines"


def test_after_clicking_elsewhere_a_still_accepts(tui, tmux: Tmux, tmp_path: Path):
    start_app(tui, tmux, tmp_path, "print('accepted after a click')", size=(130, 40))
    tmux.wait_for("connected")
    tmux("send-keys", "-t", "vb", "-l", "click then accept")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    # Click the "You asked" header in the conversation: an SGR mouse press and release,
    # typed into the pane as a terminal would send them (columns and rows from 1).
    # A loaded machine can hold a screen still for a moment and then lay it out again: a
    # click at the spot read before that misses (seen once in CI, the header unopened).
    # So the spot is read again, and a click is sent again only if the header moved; a
    # click at the right spot that does not open it fails the test.
    spot = None
    for _ in range(3):
        screen = tmux.settled()
        lines = screen.splitlines()
        row = next(i for i, line in enumerate(lines, 1) if "You asked" in line)
        if "▶ You asked" not in screen:
            break  # the click reached the app: the prompt opened
        assert (row, lines[row - 1].index("You asked")) != spot, \
            f"a click on the header did not open it; the screen:\n{screen}"
        spot = (row, lines[row - 1].index("You asked"))
        col = spot[1] + 3
        tmux("send-keys", "-t", "vb", "-l", f"\x1b[<0;{col};{row}M\x1b[<0;{col};{row}m")
        try:
            tmux.wait_for("▶ You asked", timeout=10, gone=True)
            break
        except AssertionError:
            continue
    else:
        raise AssertionError("the header moved under three clicks")
    tmux.wait_for("▶ You asked", timeout=1, gone=True)
    tmux("send-keys", "-t", "vb", "a")
    screen = tmux.wait_for("accepted after a click")
    assert "exit status 0" in tmux.wait_for("exit status 0")


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 130), (signal.SIGINT, 130)])
def test_a_signal_ends_the_app_and_its_running_program(tui, tmux: Tmux, tmp_path: Path,
                                                       sig: int, code: int):
    """Issue 21: TERM (and an INT from outside) end the app as a hang-up does: the
    program's tree stopped, the session INTERRUPTED, the app gone."""
    # its pid goes into its run folder, the one place a sandboxed program writes
    ws = start_app(tui, tmux, tmp_path, "import os, time\n"
                   "open('pid', 'w').write(str(os.getpid()))\n"
                   "print('sleeping', flush=True)\ntime.sleep(300)")
    tmux.wait_for("connected")
    tmux("send-keys", "-t", "vb", "-l", "sleep")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    tmux("send-keys", "-t", "vb", "a")
    deadline = time.monotonic() + 30
    pid_files = list((ws / "runs").glob("*/pid"))
    while not (pid_files and pid_files[0].read_text()):
        assert time.monotonic() < deadline, "the program never started"
        time.sleep(0.1)
        pid_files = list((ws / "runs").glob("*/pid"))
    pid_file = pid_files[0]
    shell = int(tmux("display-message", "-p", "-t", "vb", "#{pane_pid}").strip())
    app = int(Path(f"/proc/{shell}/task/{shell}/children").read_text().split()[0])
    # In a sandbox the program reads another pid for itself: the host's is found by it.
    program = next(p for p in pids_seen_as(int(pid_file.read_text())) if below(p, app))
    os.kill(app, sig)
    tmux.wait_for(f"EXITED {code}", timeout=20)
    deadline = time.monotonic() + 10
    while Path(f"/proc/{program}").exists():
        assert time.monotonic() < deadline, "the program outlived the app"
        time.sleep(0.1)
    db = sqlite3.connect(ws / "history.db")
    try:
        assert db.execute("SELECT status FROM sessions").fetchall() == [("INTERRUPTED",)]
    finally:
        db.close()


# -- issue 23: clicks, stops and remaps as a user makes them, small and wide ---------------------

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((200, 50), id="200x50")]
SLOW = "import time\nprint('started', flush=True)\ntime.sleep(300)"


def click(tmux: Tmux, text: str, offset: int = 2) -> None:
    """A mouse press and release on ``text`` where the screen shows it (SGR, from 1)."""
    screen = tmux.settled()
    row = next(i for i, line in enumerate(screen.splitlines(), 1) if text in line)
    col = screen.splitlines()[row - 1].index(text) + 1 + offset
    tmux("send-keys", "-t", "vb", "-l", f"\x1b[<0;{col};{row}M\x1b[<0;{col};{row}m")


def drag(tmux: Tmux, start: tuple[int, int], end: tuple[int, int]) -> None:
    """Press, move and release, each sent on its own as a terminal sends them."""
    (x0, y), (x1, _y) = start, end
    for seq in (f"\x1b[<0;{x0};{y}M", f"\x1b[<32;{(x0 + x1) // 2};{y}M",
                f"\x1b[<32;{x1};{y}M", f"\x1b[<0;{x1};{y}m"):
        tmux("send-keys", "-t", "vb", "-l", seq)
        time.sleep(0.2)


@pytest.mark.parametrize("size", SIZES)
def test_click_accept_remapped_stop_and_a_refused_remap(tui, tmux: Tmux, tmp_path: Path,
                                                         size: tuple[int, int]):
    config = ('[run]\ntimeout = 600\n[ui.keys]\nswitch_target = "ctrl+o"\n'
              'stop = "ctrl+b"\n')
    ws = start_app(tui, tmux, tmp_path, SLOW, size=size, config=config)
    screen = tmux.wait_for("toggle_auto_accept")  # the refusal names the key's owner
    assert "Key settings" in screen and "ctrl+t" not in screen.split("free now")[-1][:40]
    tmux("send-keys", "-t", "vb", "-l", "sleep a while")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    click(tmux, "a accept" if size[0] < 100 else "Accept [a]")  # the compact bar's keys too
    tmux.wait_for("running…")
    tmux.wait_for("started")
    tmux("send-keys", "-t", "vb", "C-b")  # stop, remapped from ctrl+g
    screen = tmux.wait_for("stopped by you before")
    tmux.wait_for("running…", gone=True, timeout=15)
    tmux("send-keys", "-t", "vb", "C-o")  # still auto-accept: the refused remap took nothing
    tmux.wait_for(("auto-accept on", "Auto-accept on"))  # the bar, or its notice
    tmux("send-keys", "-t", "vb", "C-q")
    tmux.wait_for("EXITED 0", timeout=20)
    assert "stopped by the user before the program ended" in \
        (ws / "outputs" / "sleep_a_while_1.txt").read_text()


@pytest.mark.parametrize("size", SIZES)
def test_the_history_pane_is_dragged_wider_and_keeps_its_width(tui, tmux: Tmux,
                                                                tmp_path: Path,
                                                                size: tuple[int, int]):
    start_app(tui, tmux, tmp_path, "print('hi')", size=size)
    tmux.wait_for("connected")
    if size[0] < 100:  # the overlay of small screens, opened once the app stands still
        tmux.settled()
        tmux("send-keys", "-t", "vb", "F2")
    tmux.wait_for("History (F2)")
    screen = tmux.settled()
    tops = [line for line in screen.splitlines() if "History (F2)" in line]
    assert tops, f"the history pane showed, then went:\n{screen}"
    corner = re.compile("[╮┓]")  # its corner; heavy (┓) while it has the focus
    edge = corner.search(tops[0]).start() + 1  # the pane's right border, columns from 1
    drag(tmux, (edge, 6), (edge + 12, 6))
    state = tmp_path / "xdg-state" / "verifybot" / "state.toml"
    deadline = time.monotonic() + 10
    while "history_width" not in (state.read_text() if state.exists() else ""):
        assert time.monotonic() < deadline, f"the width was never kept:\n{tmux.screen()}"
        time.sleep(0.1)
    assert f"history_width = {edge + 12}" in state.read_text()
    top = next(line for line in tmux.settled().splitlines() if "History (F2)" in line)
    assert corner.search(top).start() + 1 == edge + 12


def test_a_run_that_ends_in_the_background_rings_the_bell(tui, tmux: Tmux, tmp_path: Path):
    rang = tmp_path / "bell"
    start_app(tui, tmux, tmp_path, "import time\ntime.sleep(1)\nprint('done')",
              config='[run]\ntimeout = 20\n[ui]\ntheme = "verifybot-dark"\nnotify_after = 0\n')
    tmux("set-hook", "-g", "alert-bell", f"run-shell 'touch {rang}'")
    tmux.wait_for("connected")
    tmux("send-keys", "-t", "vb", "-l", "wait then print")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    tmux("send-keys", "-t", "vb", "a")
    tmux("send-keys", "-t", "vb", "-l", "\x1b[O")  # focus out, as a terminal reports it
    tmux.wait_for("exit status 0")
    deadline = time.monotonic() + 10
    while not rang.exists():
        assert time.monotonic() < deadline, "no bell: the desktop was not told"
        time.sleep(0.1)


def test_trial_a_cloned_folder_with_a_config_toml_answered_no(tui, tmux: Tmux, tmp_path: Path):
    """The trial of files from others: the app started in a clone whose config.toml turns
    the sandbox off; one question, "n", one line, and the app runs with the user's own
    config (its sandbox on: the answer cannot read the key in the home)."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PLANTED-PRIVATE-KEY\n")
    repo.mkdir()
    (repo / "config.toml").write_text('[targets.local]\nsandbox = "off"\n')
    mine = tmp_path / "xdg-config" / "verifybot" / "config.toml"
    mine.parent.mkdir(parents=True)
    mine.write_text('[run]\ntimeout = 20\n\n[ui]\ntheme = "verifybot-dark"\n')
    transcript = tui.write_answers(repo / "t.md", "import os\ntry:\n    print('READ', open("
                                   "os.path.expanduser('~/.ssh/id_ed25519')).read())\n"
                                   "except OSError:\n    print('HIDDEN from the answer')")
    entry = VENV_BIN / "verifybot"
    command = [str(entry)] if entry.exists() else [sys.executable, "-m", "verifybot_tui"]
    exports = " ".join(f"{k}={v}" for k, v in {
        "HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_STATE_HOME": str(tmp_path / "xdg-state"), "TERM": "xterm-256color"}.items())
    shell = (f"cd {repo} && env -u NO_COLOR -u COLUMNS -u LINES {exports} {' '.join(command)} "
             f"--llm replay:{transcript} --workspace {tmp_path / 'ws'}; "
             f"echo EXITED $?; sleep 30")
    tmux("new-session", "-d", "-s", "vb", "-x", "130", "-y", "40", shell)
    screen = tmux.wait_for("Use config.toml for runs in this folder")
    assert "targets.local.sandbox: 'auto' -> 'off'  [RISKY:" in screen
    tmux("send-keys", "-t", "vb", "n", "Enter")
    tmux.wait_for("Ask for a program")
    screen = tmux.wait_for("connected")
    assert "sandbox off" not in screen
    tmux("send-keys", "-t", "vb", "-l", "read the key")
    tmux("send-keys", "-t", "vb", "Enter")
    tmux.wait_for(APPROVAL)
    tmux("send-keys", "-t", "vb", "a")
    screen = tmux.wait_for("exit status 0")
    assert "PLANTED" not in screen
    tmux("send-keys", "-t", "vb", "C-q")
    tmux.wait_for("EXITED 0", timeout=20)
    (output,) = (tmp_path / "ws" / "outputs").glob("*.txt")
    assert "HIDDEN from the answer" in output.read_text()  # the user's sandbox held
    # The app's screen replaced the terminal's; what was said before it is in tmux's
    # history: one question, one line.
    before = tmux("capture-pane", "-p", "-J", "-S", "-200", "-t", "vb")
    assert before.count("[y/N]") == 1
    assert f"not using config.toml: running with your own config, {mine}" in before


def test_first_start_with_no_config_and_no_display_opens_ready(tmux: Tmux, tmp_path: Path):
    """The README's start command on a box with no config and no display: the app opens
    on its main screen, names the LLM it would use, says calmly what fixes it (the config
    file's full path for headless = true, the offline replay), starts no browser (a
    prompt does not either), and leaves no Chromium profile behind."""
    from project import EXAMPLES

    entry = VENV_BIN / "verifybot"
    command = str(entry) if entry.exists() else f"{sys.executable} -m verifybot_tui"
    xdg = {k: tmp_path / k.lower() for k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME",
                                             "XDG_STATE_HOME", "XDG_CACHE_HOME")}
    exports = " ".join(f"{k}={v}" for k, v in xdg.items())
    shell = (f"cd {tmp_path} && env -u DISPLAY -u WAYLAND_DISPLAY -u NO_COLOR -u COLUMNS "
             f"-u LINES HOME={tmp_path} TERM=xterm-256color {exports} {command}; "
             f"echo EXITED $?; sleep 30")
    tmux("new-session", "-d", "-s", "vb", "-x", "80", "-y", "24", shell)
    screen = tmux.wait_for("cannot start here")
    flat = " ".join(screen.split())
    assert "chatgpt: no display" in flat, screen  # the LLM it would use, named
    assert "headless = true under [llm.chatgpt]" in flat, screen
    assert "Ask for a program" in flat, "the prompt box is there, ready"
    config = xdg["XDG_CONFIG_HOME"] / "verifybot" / "config.toml"
    unwrapped = "".join(screen.split())  # a long path wraps where it must
    assert str(config) in unwrapped, screen  # by its full path
    assert f"{command}--llmreplay:{EXAMPLES / 'word_count.md'}" in unwrapped, screen
    assert "error" not in flat.lower(), screen
    tmux("send-keys", "-t", "vb", "-l", "count words")
    tmux("send-keys", "-t", "vb", "Enter")
    screen = tmux.wait_for("your prompt is kept")  # the prompt was taken, and given back
    assert "no display" in screen and "count words" in screen, screen
    tmux("send-keys", "-t", "vb", "C-q")
    tmux.wait_for("EXITED 0", timeout=20)
    profiles = xdg["XDG_DATA_HOME"] / "verifybot" / "profiles"
    assert not profiles.exists() or not any(profiles.iterdir()), list(profiles.rglob("*"))
    assert not list(tmp_path.rglob("SingletonLock"))
