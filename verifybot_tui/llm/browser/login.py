"""`verifybot login`: a visible window where the user logs in once; the profile keeps it.

Logged in is what the page shows (a prompt box, no login buttons, no login
path, no account picker or bot check), held for a moment so a page in the
middle of a redirect does not count; it is never assumed from time passing.
"""

from __future__ import annotations

import time
from pathlib import Path

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser.driver import BrowserLLM
from verifybot_tui.llm.browser.pagestate import PageState

# How long the page must look logged in before we believe it (redirects flicker).
SETTLE_SECONDS = 1.0


async def login(config: LLMConfig, workspace: Path, timeout: float = 600, *,
                headless: bool = False) -> None:
    """Open the site in a window and return once the user is logged in.

    `headless` exists for tests (a site that logs in by itself); users need
    the window. Raises LLMError on timeout or when the window is closed.
    """
    llm = BrowserLLM(config, Path(workspace), headless=headless, page_timeout=60)
    name = llm.name
    try:
        await llm._launch()
        try:
            await llm.page.goto(llm.new_chat_url(), wait_until="domcontentloaded",
                                timeout=60_000)
        except Exception as e:  # playwright Error: unreachable site, closed window
            if llm.gone:
                raise _closed(name) from None
            raise LLMError(f"Cannot open {llm.new_chat_url()}: {str(e).splitlines()[0]}. "
                           f"Check the url in [llm.{name}] and the network.") from None
        deadline = time.monotonic() + timeout
        ready_since: float | None = None
        while True:
            if llm.gone:
                raise _closed(name)
            ready = llm.verdict().state is PageState.READY
            now = time.monotonic()
            if ready:
                ready_since = ready_since or now
                if now - ready_since >= SETTLE_SECONDS:
                    return
                wait = SETTLE_SECONDS - (now - ready_since)
            else:
                ready_since = None
                wait = deadline - now
            if now >= deadline:
                v = llm.verdict()
                raise LLMError(f"Not logged in to {llm.profile.name} after {timeout:g} s (the "
                               f"page shows: {v.state.value}{': ' + v.detail if v.detail else ''})."
                               f" Run `verifybot login --llm {name}` again and finish the login "
                               f"in the window.", evidence=await llm._evidence("login_timeout"))
            await llm.wait_change(min(wait, max(0.0, deadline - now)))
    finally:
        await llm.close()


def _closed(name: str) -> LLMError:
    return LLMError(f"The browser window was closed before the login finished. Run "
                    f"`verifybot login --llm {name}` again and log in before closing it.")
