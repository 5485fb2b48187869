"""The app's first start anywhere: what stands between the default LLM and a prompt, in
calm words with the one command that fixes it.

With no config and no display, the default LLM (a chat site in a visible browser)
cannot start: the app says so before Chromium runs (a failed Chromium leaves a
half-made profile), names the config file to put ``headless = true`` in by its full
path, and the offline replay to try the whole loop now. A logged-out site gets the
same calm notice with ``verifybot login``.
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.settings.config import Config, user_config_dir

EXAMPLE = Path("examples") / "word_count.md"


class LLMNotReady(LLMError):
    """The LLM cannot start here as configured; nothing was started. ``state`` is what
    the status bar shows for it."""

    def __init__(self, message: str, state: str) -> None:
        super().__init__(message)
        self.state = state


def config_file(config: Config) -> Path:
    """The config file a fix goes into: the one read, else where the app would read one."""
    return (config.path or user_config_dir() / "config.toml").expanduser().resolve()


def command() -> str:
    """`verifybot` as the user can type it again: the bare name when that is what the
    shell finds, else the path this app was started by (``.venv/bin/verifybot``)."""
    started = sys.argv[0] if sys.argv and sys.argv[0].endswith("verifybot") else ""
    on_path = shutil.which("verifybot")
    if not started or (on_path and Path(on_path).resolve() == Path(started).resolve()):
        return "verifybot"
    return started


def offline_example(cwd: Path | None = None) -> str:
    """The recorded example to replay, as the user can type it from here."""
    here = (cwd or Path.cwd()).resolve()
    if (here / EXAMPLE).is_file():
        return str(EXAMPLE)
    clone = Path(__file__).resolve().parents[2] / EXAMPLE  # an editable install's clone
    return str(clone) if clone.is_file() else str(EXAMPLE)


def no_display_notice(config: Config, name: str, why: str) -> str:
    """A visible browser cannot open: the fix here, the fix elsewhere, the offline try."""
    path = config_file(config)
    where = "in" if path.is_file() else "in a new file"
    return (f"{name} logs in through a visible browser window, and this terminal has no "
            f"display ({why}): nothing was started.\n"
            f"• To use {name} here: add headless = true under [llm.{name}] {where} {path} "
            f"(its profile needs a login: `{command()} login --llm {name}` where there is a "
            "display)\n"
            f"• To try VerifyBot offline now: {command()} --llm replay:{offline_example()}")


def logged_out_notice(config: Config, name: str, can_show_window: bool) -> str:
    """The site asks for a login: the one command, and the offline try meanwhile."""
    if can_show_window:
        fix = f"run `{command()} login --llm {name}` (a window opens; log in there)"
    else:
        fix = (f"run `{command()} login --llm {name}` where there is a display, then use that "
               f"profile here ([llm.{name}] profile_dir in {config_file(config)})")
    return (f"{name} is not logged in: {fix}, then send the prompt again.\n"
            f"• To try VerifyBot offline meanwhile: {command()} --llm replay:{offline_example()}")


def check_start(config: Config, spec: str) -> None:
    """Raise LLMNotReady when ``spec`` cannot start here (before anything is started)."""
    cfg = config.llm.get(spec)
    if cfg is None:  # a replay: nothing to open
        return
    from verifybot_tui.llm.browser.first_start import cannot_open

    why = cannot_open(cfg)
    if why:
        raise LLMNotReady(no_display_notice(config, spec, why), "no_display")


@dataclass
class Notice:
    title: str
    text: str
    severity: Literal["information", "warning", "error"]
    timeout: float
    state: str = ""  # the LLM state the status bar shows, when the notice sets one


def not_ready_notice(config: Config, name: str, error: BaseException, llm_state: str,
                     kept: bool = False) -> Notice:
    """What the app says when the LLM cannot answer: calm, with the command that fixes
    it, when that is known (no display, not logged in); else the error as it came.
    ``kept``: a prompt was refused and put back in the prompt box."""
    if isinstance(error, LLMNotReady):
        title = f"{name} cannot start here" + (" (your prompt is kept in the box)"
                                              if kept else "")
        return Notice(title, str(error), "warning", 60, error.state)
    if llm_state == "logged_out":
        from verifybot_tui.llm.browser.first_start import needs_display

        return Notice(f"{name}: log in first",
                      logged_out_notice(config, name, not needs_display()), "warning", 60)
    return Notice("LLM not ready", one_line(str(error)), "error", 15)
