"""The main screen's target: the one the status bar shows, and the switch to another.

A switch (ctrl+t, the palette, a prompt about Pi hardware) connects in the screen's
target worker; the status bar says "connecting" until the target is probed and
current, and one notice at the end says where the next attempt runs. What a switch
is under way to, and which target the last one could not reach, are kept here, once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.settings.trust import RefusedFile
from verifybot_tui.tui.screens.main.host import config_name

if TYPE_CHECKING:
    from verifybot_tui.tui.messages import TargetReady
    from verifybot_tui.tui.screens.main.host import SwitchHost


class TargetSwitcher:
    """Shows the session's target on the status bar and switches it."""

    def __init__(self, screen: SwitchHost) -> None:
        self.screen = screen
        self.session = screen.session
        self.switching: str | None = None  # a target being connected to, not yet current
        # the target the last switch could not reach: the next switch moves on past it
        self.unreachable: str | None = None
        # A target the user picked (--target, ctrl+t) is kept; the default one may give
        # way to the Pi when a prompt is about Pi hardware, as `verifybot run` does.
        self.chosen = self.session.target_name != self.session.config.run.default_target
        self.told_sandbox_off: set[str] = set()  # once per target: the bar keeps saying it

    def show(self, name: str) -> None:
        """The status bar follows this target: its name and its state now."""
        self.screen.target = name
        target = self.session.targets.get(name)
        self.screen.target_state = target.state if target is not None else "disconnected"
        self.show_sandbox(name)

    def show_sandbox(self, name: str) -> None:
        """The status bar says when what an answer brings would run unsandboxed there."""
        from verifybot_tui.targets.sandbox.bubblewrap import sandbox_label

        cfg = self.session.config.targets.get(name)
        self.screen.status_bar.sandbox = sandbox_label(cfg.kind, cfg.sandbox) if cfg else ""
        from verifybot_tui.core.settings.config import sandbox_off_line

        if (off := sandbox_off_line(self.session.config, name)) and \
                name not in self.told_sandbox_off:
            self.told_sandbox_off = self.told_sandbox_off | {name}
            self.screen.app.notify(off, title="sandbox off", severity="warning", timeout=20)

    def connect(self, name: str) -> None:
        if name != self.session.target_name:
            self.switching = name
        if self.session.config.targets[name].kind == "ssh":
            self.screen.output_pane.loading = True
        self.screen.connect_target(name)

    def switch_next(self) -> None:
        """ctrl+t: the next target in the config, past one the last switch could not reach."""
        name = self.session.next_target_name(self.switching or self.unreachable)
        if name == self.session.target_name and len(self.session.target_names) > 1:
            self.unreachable = None  # round the list: try them all again
            name = self.session.next_target_name()
        if name == self.session.target_name and len(self.session.target_names) == 1:
            self.screen.notify(
                f"Only one target is configured ({name}). To switch, add another to "
                f"{config_name(self.screen)}, such as [targets.pi] with kind = \"ssh\", "
                "host and user (config.toml.example shows more).")
            return
        self.switch_to(name)

    def switch_to(self, name: str) -> None:
        self.chosen = True
        self.screen.target = name
        self.screen.target_state = "connecting"  # the status bar says so; one notice at the end
        self.show_sandbox(name)
        self.connect(name)

    def for_prompt(self, prompt: str) -> None:
        """The default target gives way to the one a new chat's prompt is about."""
        from verifybot_tui.targets import choose_target

        name, why = choose_target(self.session.config, prompt, None)
        if name != self.session.target_name and why:
            self.session.use_target(name)
            self.show(name)
            self.screen.notify(f"{why[0].upper()}{why[1:]}. ctrl+t switches back.",
                               title=f"Running on {name}")
            self.connect(name)

    def _switch_key(self) -> str:
        """The key that switches targets, as the footer shows it (it may be remapped)."""
        for key, active in self.screen.active_bindings.items():
            if active.binding.action == "switch_target":
                return self.screen.app.get_key_display(active.binding) or key
        return "Switching"

    def ready(self, message: TargetReady) -> None:
        """The target worker is done: the target is current, or why it is not."""
        self.screen.output_pane.loading = False
        if self.switching == message.name:
            self.switching = None
        if message.error is None:
            if message.name != self.session.target_name:
                self.unreachable = None
                self.session.use_target(message.name)
                self.screen.notify(f"Target is now {message.name}: the next attempt runs there.")
            self.show(message.name)
            return
        where = message.name
        if isinstance(message.error, RefusedFile):  # "Don't run": told by the dialog
            self.show(self.session.target_name)
            return
        if message.name != self.session.target_name:
            self.unreachable = where
            self.show(self.session.target_name)
            after = self.session.next_target_name(where)
            then = (f" {self._switch_key()} again tries {after}."
                    if after not in (where, self.session.target_name) else "")
            self.screen.notify(f"Could not switch to {where}: {one_line(str(message.error))}\n"
                               f"Still on {self.session.target_name}.{then}", severity="error",
                               timeout=15, markup=False)
        else:
            self.show(where)
            self.screen.notify(f"{where}: {one_line(str(message.error))}",
                               title="Target not ready", severity="error", timeout=15,
                               markup=False)
