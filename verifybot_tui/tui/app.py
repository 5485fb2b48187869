"""The Textual app: themes, keys, the command palette, and the main screen.

The app holds what lives as long as it does (the back-end session, the output
buffer, themes and keymap); everything about the loop is on the main screen.
Building it checks --llm and --target, so a bad one stops before any frame,
as a bad config does; the browser and SSH are only started after the first.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App
from textual.binding import Binding

from verifybot_tui.core.config import Config, save_setting, user_config_dir
from verifybot_tui.tui.keys import APP_BINDINGS, check_keymap
from verifybot_tui.tui.output_buffer import OutputBuffer
from verifybot_tui.tui.prompter import DialogPrompter
from verifybot_tui.tui.screens.main import MainScreen
from verifybot_tui.tui.session import AppSession
from verifybot_tui.tui.themes import load_themes

FALLBACK_THEME = "textual-dark"


def _commands_provider():
    """Imported when the palette first opens (textual.command costs the first frame)."""
    from verifybot_tui.tui.commands import VerifyBotCommands

    return VerifyBotCommands


class VerifyBotApp(App[int]):
    TITLE = "VerifyBot"
    # The main screen is the default screen (its frame is the first frame), and
    # Textual reads a default screen's CSS_PATH only with the app's: name it here.
    CSS_PATH = [Path(__file__).parent / "screens" / MainScreen.CSS_PATH]
    BINDINGS: list[Binding] = APP_BINDINGS
    COMMANDS = App.COMMANDS | {lambda: _commands_provider()}

    def __init__(self, *, config: Config, prompt: str | None = None, target: str | None = None,
                 llm: str | None = None, workspace: Path | None = None,
                 review_feedback: bool = True, theme_dirs: list[Path] | None = None) -> None:
        super().__init__()
        self.config = config
        self.initial_prompt = prompt
        self.output_buffer = OutputBuffer()
        self.session = AppSession(config, llm_spec=llm or config.run.default_llm,
                                  target_name=target or config.run.default_target,
                                  workspace=workspace, review_feedback=review_feedback)
        self.session.prompter = DialogPrompter(self)
        self.main_screen: MainScreen | None = None
        self._theme_dirs = theme_dirs
        self._theme_ready = False
        self._theme_problems: list[str] = []
        self.keymap, self._keymap_problems = check_keymap(config.ui.keys)
        # Before the first stylesheet is built: a theme set later rebuilds it all.
        self._load_themes()

    def get_default_screen(self) -> MainScreen:
        """The main screen is the first: its frame is the first frame."""
        self.main_screen = MainScreen(self.session)
        return self.main_screen

    def on_ready(self) -> None:
        """The first frame is on the terminal: now the slow starts (browser, SSH)."""
        if self.main_screen is not None:
            self.main_screen.call_later(self.main_screen.start_backends)

    def on_mount(self) -> None:
        for problem in self._theme_problems:
            self.notify(problem, title="Theme", severity="warning", timeout=12)
        self._theme_ready = True
        if self.keymap:
            self.set_keymap(self.keymap)
        for problem in self._keymap_problems:
            self.notify(problem, title="Key settings", severity="warning", timeout=10)

    # -- themes ---------------------------------------------------------------------------

    def _load_themes(self) -> None:
        themes, problems = load_themes(self._theme_dirs)
        for theme in themes:
            self.register_theme(theme)
        for problem in problems:
            self._theme_problems.append(
                f"Theme file not loaded: {problem}\nFix the file or remove it.")
        wanted = self.config.ui.theme
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            self._theme_problems.append(
                f"[ui] theme = {wanted!r} is not a known theme; using {FALLBACK_THEME}. "
                f"Known: {', '.join(sorted(self.available_themes))}")
            self.theme = FALLBACK_THEME

    def watch_theme(self, name: str) -> None:
        """A theme chosen by the user (palette, F9) is saved to [ui] theme."""
        if not self._theme_ready or name == self.config.ui.theme:
            return
        self.config.ui.theme = name
        path = self.config.path or user_config_dir() / "config.toml"
        try:
            save_setting(path, "ui", "theme", name)
        except (OSError, ValueError) as e:
            self.notify(f"Theme not saved to {path}: {e}", severity="warning")

    # -- actions ----------------------------------------------------------------------------

    def action_help(self) -> None:
        from verifybot_tui.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.keymap))

    async def action_quit(self) -> None:
        """Quit; during a run first stop it (its status written), and a second quit
        while it stops KILLs the program at once, as a second Ctrl+C does in ``run``."""
        how = self.session.stop_loop()
        if how == "idle":
            self.exit()
            return
        if how == "stopping":
            self.notify("Stopping the run, then quitting (again to kill it at once)…")
            self.run_worker(self._exit_after_stop(), group="quit", exit_on_error=False)

    async def _exit_after_stop(self) -> None:
        import asyncio

        while self.session.loop is not None and self.session.loop.running:
            await asyncio.sleep(0.05)
        self.exit()

    async def on_unmount(self) -> None:
        await self.session.close()
