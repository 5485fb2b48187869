"""Opening the chat page: Chromium started with the page script, the new chat or a
saved conversation opened, and the model the config names picked in the site's picker.

A page counts as open once the observer says it is ready (its prompt box) or
shows a state that blocks (logged out, a bot check): never after a fixed sleep.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.llm.browser.chromium import launch_context
from verifybot_tui.llm.browser.page.observed import Observed
from verifybot_tui.llm.browser.page.session import TAB_CLOSED, TAB_CRASHED, ChatPage
from verifybot_tui.llm.browser.pagestate import BLOCKING, PageState


class PageOpening(ChatPage):
    """The page opened where the next prompt goes (see ChatPage for the state)."""

    def new_chat_url(self) -> str:
        url = self.profile.new_chat_url or self.config.url
        if self.config.temporary:
            # A temporary chat: not kept in the site's history, cannot be resumed.
            if not self.profile.temporary_chat_query:
                raise LLMError(f"[llm.{self.name}] temporary = true, but the site profile "
                               f"{self.profile.source} names no temporary_chat_query for "
                               f"{self.profile.name}: set temporary = false, or add the "
                               f"query to a profile of your own.")
            url += ("&" if "?" in url else "?") + self.profile.temporary_chat_query
        return url

    # --- browser lifecycle ------------------------------------------------------------

    async def _launch(self) -> None:
        await self._shutdown()
        self._gone = None
        self._context_closed = asyncio.Event()
        self._pw = await async_playwright().start()
        try:
            self._context = await launch_context(self._pw, self.config, headless=self.headless)
            self._context.on("close", lambda _c: self._on_context_closed())
            await self._context.expose_binding("__vbPush", self._on_push)
            await self._context.add_init_script(script=self._script)
            pages = self._context.pages
            for page in pages:  # pages open before the init script: install it now
                try:
                    await asyncio.wait_for(page.evaluate(self._script), 5)
                except (PlaywrightError, TimeoutError):
                    pass
            self._attach(pages[0] if pages else await self._context.new_page())
        except BaseException:
            await self._shutdown()
            raise

    def _attach(self, page: Any) -> None:
        self._page = page
        page.on("close", lambda _p: self._mark_gone(TAB_CLOSED))
        page.on("crash", lambda _p: self._mark_gone(TAB_CRASHED))

    async def _ensure_page(self) -> None:
        if self._gone or self._context is None or self._page is None or self._page.is_closed():
            await self._launch()
            self._navigate = True
        if self._navigate:
            resume = not self._fresh and bool(self.conversation_url)
            await self._open(self.conversation_url if resume else self.new_chat_url(), resume)
            self._navigate = False

    async def _open(self, url: str, resume: bool) -> None:
        if not url:
            raise LLMError(f"[llm.{self.name}] has no url: set url to the chat site's address")
        if self._obs.doc:
            self._old_docs.add(self._obs.doc)
        self._obs = Observed()
        try:
            await self._page.goto(url, wait_until="domcontentloaded",
                                  timeout=self.page_timeout * 1000)
        except PlaywrightError as e:
            if self._gone:
                raise await self._gone_error("opening the page") from None
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise await self._fail(f"Cannot open {url}: {first}. Check the url in "
                                   f"[llm.{self.name}] and the network.", "open") from None
        deadline = time.monotonic() + self.page_timeout
        while True:
            v = self.verdict()
            if v.state is PageState.READY or v.state in BLOCKING:
                break
            self._check_gone_sync()
            if not await self.wait_change(deadline - time.monotonic()):
                if self._gone:
                    raise await self._gone_error("opening the page")
                raise await self._fail(self._message(v), "no_prompt_box")
        if v.state is PageState.READY and not resume and self.config.model:
            await self._choose_model(self.config.model)
        if resume and v.state is PageState.READY:
            # A saved chat's turns load after the page: wait for them, briefly.
            turn_deadline = min(deadline, time.monotonic() + 10)
            while self._obs.users == 0 and not self._gone:
                if not await self.wait_change(turn_deadline - time.monotonic()):
                    break

    async def _choose_model(self, wanted: str) -> None:
        """Pick a model in the site's picker by its visible name; a name not offered is an
        error listing the names seen."""
        got = await self._eval("() => window.__vb.probe()")
        picker = got["signals"].get("model_picker", {}).get("selector") if got else ""
        if not picker:
            raise await self._fail(f"[llm.{self.name}] model = {wanted!r}, but no model picker "
                                   f"(model_picker selectors of {self.profile.source}) is on "
                                   f"the page.", "no_model_picker")
        await self._close_dialogs()
        await self._page.locator(picker).locator("visible=true").first.click(
            timeout=self.page_timeout * 1000)
        options = self.profile.renderer(self.renderer).sel("model_option") if self.renderer \
            else []
        names: list[str] = []
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not names:
            for sel in options:
                loc = self._page.locator(sel)
                # An option's first line is its name (a description may follow).
                names = [(t.strip().splitlines() or [""])[0].strip()
                         for t in await loc.all_inner_texts()]
                if names:
                    for i, name in enumerate(names):
                        if name.lower() == wanted.strip().lower():
                            await loc.nth(i).click(timeout=self.page_timeout * 1000)
                            return
                    break
            await asyncio.sleep(0.05)
        await self._page.keyboard.press("Escape")
        raise await self._fail(f"[llm.{self.name}] model = {wanted!r} is not offered by "
                               f"{self.profile.name}'s model picker; names seen: "
                               f"{', '.join(repr(n) for n in names) or 'none'}. Set model to "
                               f"one of them, or empty for the site's default.", "no_such_model")
