"""The Textual app: themes, keys, the command palette, and the main screen.

The app holds what lives as long as it does (the back-end session, the output
buffer, themes and keymap); everything about the loop is on the main screen.
Building it checks --llm and --target, so a bad one stops before any frame,
as a bad config does; the browser and SSH are only started after the first.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import Screen

from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.settings.ui_state import load_ui_state, save_ui_choice, state_path
from verifybot_tui.tui.keys import APP_BINDINGS, check_keymap
from verifybot_tui.tui.output_buffer import OutputBuffer
from verifybot_tui.tui.prompter import DialogPrompter
from verifybot_tui.tui.screens.main.screen import MainScreen
from verifybot_tui.tui.session import AppSession
from verifybot_tui.tui.themes import load_themes
from verifybot_tui.tui.widgets.notices import NoticeLine

FALLBACK_THEME = "textual-dark"


def _commands_provider():
    """Imported when the palette first opens (textual.command costs the first frame)."""
    from verifybot_tui.tui.commands import VerifyBotCommands

    return VerifyBotCommands


class VerifyBotApp(App[int]):
    TITLE = "VerifyBot"
    # The main screen is the default screen (its frame is the first frame), and
    # Textual reads a default screen's CSS_PATH only with the app's: name it here.
    CSS_PATH = [Path(__file__).parent / "screens" / "main" / MainScreen.CSS_PATH]
    BINDINGS: list[Binding] = APP_BINDINGS
    COMMANDS = App.COMMANDS | {lambda: _commands_provider()}

    # Textual's own palette entries that ours already hold: its Quit (ours asks first
    # during a run), its Theme (ours lists our theme files, F9), its Keys (F1's help).
    DUPLICATE_SYSTEM_COMMANDS = frozenset({"Quit", "Theme", "Keys"})

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        for command in super().get_system_commands(screen):
            if command.title not in self.DUPLICATE_SYSTEM_COMMANDS:
                yield command

    def __init__(self, *, config: Config, prompt: str | None = None, target: str | None = None,
                 llm: str | None = None, workspace: Path | None = None,
                 review_feedback: bool = True, theme_dirs: list[Path] | None = None,
                 trust: bool = False) -> None:
        super().__init__()
        self.config = config
        self.initial_prompt = prompt
        self.output_buffer = OutputBuffer()
        self.session = AppSession(config, llm_spec=llm or config.run.default_llm,
                                  target_name=target or config.run.default_target,
                                  workspace=workspace, review_feedback=review_feedback)
        prompter = DialogPrompter(self, trust_all=trust)
        self.session.prompter = prompter
        # A run that needs a file from others that sets commands asks in a dialog first.
        self.session.ask_trust = prompter.approve_files
        self.main_screen: MainScreen | None = None
        self._theme_dirs = theme_dirs
        self._theme_ready = False
        self._theme_problems: list[str] = []
        self.keymap, self._keymap_problems = check_keymap(config.ui.keys)
        self.background_since: float | None = None  # when the terminal lost focus
        self.initial_race: tuple[str, str] | None = None  # (prompt, "A,B"): --race
        self.early_notices: list[Notification] = []  # notices before the main screen mounted
        # The user's choices made in the app win over config.toml's [ui] (the contract).
        self.ui_state = load_ui_state()
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
        race = self.initial_race  # verifybot PROMPT --race A,B
        if race and self.main_screen is not None:
            from verifybot_tui.tui.screens.race import open_race

            self.main_screen.call_later(open_race, self.main_screen, *race)

    def on_mount(self) -> None:
        for problem in self._theme_problems:
            self.notify(problem, title="Theme", severity="warning", timeout=12)
        self._theme_ready = True
        if self.keymap:
            self.set_keymap(self.keymap)
        for problem in self._keymap_problems:
            self.notify(problem, title="Key settings", severity="warning", timeout=10)
        self.screen_change_signal.subscribe(self, self._carry_notices)

    # -- themes ---------------------------------------------------------------------------

    def _load_themes(self) -> None:
        themes, problems = load_themes(self._theme_dirs)
        for theme in themes:
            self.register_theme(theme)
        for problem in problems:
            self._theme_problems.append(
                f"Theme file not loaded: {problem}\nFix the file or remove it.")
        chosen = self.ui_state.get("theme")
        if isinstance(chosen, str) and chosen in self.available_themes:
            self.theme = chosen
            return
        wanted = self.config.ui.theme
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            self._theme_problems.append(
                f"[ui] theme = {wanted!r} is not a known theme; using {FALLBACK_THEME}. "
                f"Known: {', '.join(sorted(self.available_themes))}")
            self.theme = FALLBACK_THEME

    def watch_theme(self, name: str) -> None:
        """A theme chosen in the app (palette, F9) is kept in the state file.

        Never in config.toml: that file is the user's, comments and all.
        """
        if not self._theme_ready or name == self.ui_state.get("theme", self.config.ui.theme):
            return
        self.save_ui_choice("theme", name)

    def save_ui_choice(self, key: str, value: object) -> None:
        """Remember a UI choice across starts; a failure only costs a warning."""
        self.ui_state[key] = value
        try:
            save_ui_choice(key, value)
        except (OSError, ValueError, TypeError) as e:
            self.notify(f"Choice not saved to {state_path()}: {e}", severity="warning",
                        markup=False)

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information",
               timeout: float | None = None, markup: bool = False) -> None:
        """Every notification is plain text: ours quote config keys ("[targets.NAME]")
        and errors quote program output, and markup would eat their brackets."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def on_notify(self, event: Notify) -> None:
        """A notice goes to the notice line of the screen the user looks at, where it
        covers nothing (every screen of ours has one, a dialog inside itself)."""
        line = self._notice_line()
        if line is not None:
            line.add(event.notification)
        else:  # before the first frame (a refused key setting, a bad theme): shown at mount
            self.early_notices.append(event.notification)

    def _notice_line(self) -> NoticeLine | None:
        """The line of the topmost mounted screen that has one: Textual's own screens
        (the command palette) have none, and the screen under them shows the notice."""
        for screen in reversed(self.screen_stack):
            lines = screen.query(NoticeLine) if screen.is_mounted else None
            if lines:
                return lines.first()
        return None

    def _carry_notices(self, screen: Screen[Any]) -> None:
        """A screen back on top (help closed, a dialog answered) shows the notices still
        live: one said while help was open is not lost when help closes."""
        lines = screen.query(NoticeLine) if screen.is_mounted else None
        if not lines:
            return
        line = lines.first()
        shown = {n.identity for n in line.notices}
        for notice in self._notifications:  # the live ones, oldest first
            if notice.identity not in shown:
                line.add(notice)

    def _refresh_notifications(self) -> None:
        """No toasts: Textual's float over the content (at 80x24 they covered the code
        tab, the diff's header, the compare table's right columns, the help's text).
        The notices still go into ``_notifications``; the notice lines show them."""

    def clear_notifications(self) -> None:
        super().clear_notifications()
        for screen in self.screen_stack:
            for line in screen.query(NoticeLine) if screen.is_mounted else ():
                line.clear()

    # -- a desktop notification when a run ends in the background ---------------------------

    def on_app_blur(self) -> None:
        """The terminal lost focus (the user went to another window)."""
        if self.background_since is None:
            self.background_since = time.monotonic()

    def on_app_focus(self) -> None:
        self.background_since = None

    def run_ended(self, text: str) -> None:
        """A run (or an opened recipe's run) ended: tell the desktop when the app has been
        in the background for ``[ui] notify_after`` seconds; never while the user looks."""
        import os

        from verifybot_tui.tui.desktop_notify import pick_kind, sequence
        from verifybot_tui.tui.messages import DesktopNotified

        ui = self.config.ui
        since = self.background_since
        if ui.notify == "off" or since is None or time.monotonic() - since < ui.notify_after:
            return
        seq = sequence(ui.notify, "VerifyBot", text, os.environ)
        if not seq:
            return
        if self._driver is not None and not self.is_headless:
            self._driver.write(seq)  # as App.bell and copy_to_clipboard write theirs
        self.post_message(DesktopNotified(pick_kind(ui.notify, os.environ), seq))

    # -- actions ----------------------------------------------------------------------------

    def action_help_quit(self) -> None:
        """ctrl+c (outside a text box): say how to quit, in plain words.

        Textual's own hint is markup, and every notification here is plain text.
        """
        keys = [key for key, active in self.active_bindings.items()
                if active.binding.action in ("quit", "app.quit")]
        self.notify(f"Press {keys[0] if keys else 'ctrl+q'} to quit the app.",
                    title="Do you want to quit?")

    def action_copy_shown(self) -> None:
        """y: what the user is looking at goes to the clipboard, the selection first."""
        selected = self.screen.get_selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.notify(f"Copied the selection ({len(selected.splitlines())} lines).")
            return
        from verifybot_tui.tui.widgets.code import CodePane

        panes = self.screen.query(CodePane)
        shown = panes.first().active_file() if panes else None
        if shown is None:
            self.notify("Nothing to copy yet: no code is shown. Select text with the mouse, "
                        "or press y in the output pane to copy the output.")
            return
        self.copy_to_clipboard(shown.content)
        self.notify(f"Copied {shown.saved_name} ({len(shown.content.splitlines())} lines).")

    def action_help(self) -> None:
        from verifybot_tui.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.keymap))

    async def action_quit(self) -> None:
        """ctrl+q: quit at once when idle; during a run ask first, then stop the run (its
        status written) and quit; a quit while that stop waits KILLs the program at once,
        as a second Ctrl+C does in ``run``. Textual's own ctrl+q binding calls this too,
        so no key quits unasked."""
        from verifybot_tui.tui.screens.dialogs import ConfirmScreen

        if isinstance(self.screen, ConfirmScreen):
            return
        if self.session.stopping:
            self._stop_and_exit()
            return
        main = self.main_screen
        loop = self.session.loop
        busy = main is not None and (main.running or (loop is not None and loop.running))
        if not busy:
            self.exit()
            return

        def answer(yes: bool | None) -> None:
            if yes:
                self._stop_and_exit()

        self.push_screen(ConfirmScreen("A run is going on. Quit anyway? The program is "
                                       "stopped, and what ran so far is kept.",
                                       "Quit?"), callback=answer)

    def _stop_and_exit(self) -> None:
        how = self.session.stop_loop()
        if how == "idle":
            self.exit()
        elif how == "stopping":
            self.notify("Stopping the run, then quitting (ctrl+q again kills it at once)…")
            self.run_worker(self._exit_after_stop(), group="quit", exit_on_error=False)

    async def _exit_after_stop(self) -> None:
        import asyncio

        while self.session.loop is not None and self.session.loop.running:
            await asyncio.sleep(0.05)
        self.exit()

    async def on_unmount(self) -> None:
        await self.session.close()
