"""The main screen's LLM: the switch to another (F8, the palette) and why one cannot answer.

A switch starts nothing (a browser costs seconds, and the user may be cycling past
it): the next prompt starts it, in a new chat. An API provider is tested at once, as
``doctor`` does. When an LLM cannot answer, the notice says the command that fixes
it, and what to do stays in the conversation once the notice has gone.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from verifybot_tui.tui.screens.main.host import config_name
from verifybot_tui.tui.widgets.status import CHECK_FAILED

if TYPE_CHECKING:
    from verifybot_tui.core.settings.config import LLMConfig
    from verifybot_tui.llm.api_check import ProviderCheck  # imported by the check itself
    from verifybot_tui.tui.screens.main.host import SwitchHost


def llm_label(spec: str) -> str:
    """The LLM as the status bar names it: a replay by its file's name."""
    return f"replay:{Path(spec[7:]).name}" if spec.startswith("replay:") else spec


class LLMSwitcher:
    """Switches the session's LLM and tells why one is not ready."""

    def __init__(self, screen: SwitchHost) -> None:
        self.screen = screen
        self.session = screen.session
        self.last_check: ProviderCheck | None = None  # F8's test of an API provider
        self.guide_shown = ""  # what to do about the LLM, as last put in the conversation

    def switch_next(self) -> None:
        """F8: the next LLM of the config, in a worker (a further F8 replaces it)."""
        names = self.session.llm_names
        if len(names) < 2:
            self.screen.notify(
                f"Only one LLM is configured ({self.session.llm_spec}). To switch, add "
                f"another to {config_name(self.screen)}, such as [llm.claude] with "
                'kind = "browser" and site = "claude" (config.toml.example shows more).')
            return
        name = names[(names.index(self.session.llm_spec) + 1) % len(names)]
        self.screen.run_worker(self.switch_to(name), group="llm-switch", exclusive=True)

    async def switch_to(self, name: str) -> None:
        screen = self.screen
        await self.session.use_llm(name)
        screen.status_bar.llm = llm_label(self.session.llm_spec)
        screen.llm_state = "stopped"
        screen.new_chat_next = True
        screen.resume_id = None
        screen.clear_attempt()
        screen.prompt_box.placeholder = screen.prompt_hint()
        screen.status_bar.mode = "new chat"
        screen.show_criteria()  # the judge follows the LLM unless one was chosen
        # Started by the next prompt, not now: a browser costs seconds, and the user
        # may be cycling past it to the next one.
        screen.notify(f"LLM is now {name}: the next prompt starts it, in a new chat.")
        api = self.session.api_config()
        if api is not None:
            await self._check_api(api)

    async def _check_api(self, api: LLMConfig) -> None:
        """Test the connection as ``doctor`` does: reachable, key taken, model offered.

        Part of the exclusive switch worker: a further F8 cancels a check still going.
        """
        from verifybot_tui.llm.api_check import check_provider

        self.screen.llm_state = "checking"
        result = await check_provider(api, self.session.workspace)
        if self.session.llm_spec != api.name or self.session.llm is not None:
            return  # switched again, or a prompt started it meanwhile: its state rules
        self.screen.llm_state = result.state if result.state in ("ok", *CHECK_FAILED) \
            else "error"
        self.last_check = result
        self.screen.notify(f"{api.name}: {'OK' if result.ok else 'FAIL'}: {result.text}",
                           severity="information" if result.ok else "error",
                           timeout=6 if result.ok else 12, markup=False)

    def not_ready(self, error: BaseException, kept: bool = False) -> None:
        """Why the LLM cannot answer, with the command that fixes it when known."""
        from verifybot_tui.tui.session import not_ready_notice

        llm = self.session.llm
        notice = not_ready_notice(self.session.config, self.session.llm_spec, error,
                                  llm.state if llm is not None else "", kept)
        if notice.state:
            self.screen.llm_state = notice.state
        self.screen.notify(notice.text, title=notice.title, severity=notice.severity,
                           timeout=notice.timeout)
        if notice.severity == "warning" and notice.text != self.guide_shown:
            # What to do stays in the conversation once the notice has gone (and whole,
            # however long its paths make it), said once until it changes.
            self.guide_shown = notice.text
            self.screen.call_later(self.screen.conversation.add_notice,
                                   f"{notice.title}: {notice.text}", "warning")
