"""The chat page the driver holds: the browser, what the page pushes, failures with evidence.

The page tells us about itself: observer.js pushes every change through a
binding, and every wait of the driver (opening, sending, the answer) waits on
those pushes (asyncio events with deadlines) instead of polling with sleeps.
Every failure saves a screenshot and the page HTML, and says what to do in its
message. `ChatPage` is the base the driver's parts stand on; each part uses only
what is here and its own methods.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.base.ports import ReportsState, TextCallback
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser.chromium import profile_dir
from verifybot_tui.llm.browser.page.observed import Observed
from verifybot_tui.llm.browser.page_script import init_script
from verifybot_tui.llm.browser.pagestate import BLOCKING, PageState, Verdict, classify, message
from verifybot_tui.llm.browser.site_profile import load_site_profile

BROWSER_CLOSED = "The browser was closed (or crashed)"
TAB_CLOSED = "The browser tab was closed"
TAB_CRASHED = "The browser tab crashed"


@dataclass
class AnswerStream:
    """The answer being waited for: after which prompt, and who is told its text."""

    base_user: str  # the last prompt's key before this one was sent
    callback: TextCallback | None
    last: str = ""
    error: BaseException | None = None


@dataclass
class Phase:
    text: str  # what the driver was doing, for messages


class PageGone(Exception):
    """The browser went away; turned into an LLMError by the driver."""


class ChatPage(ReportsState):
    """A chat site's page in Chromium, as the driver's parts share it (the state of one
    BrowserLLM: see ../driver.py)."""

    def __init__(self, config: LLMConfig, workspace: Path, *, answer_timeout: float = 600.0,
                 page_timeout: float = 30.0, stable_window: float = 0.1,
                 headless: bool | None = None) -> None:
        self.config = config
        self.workspace = Path(workspace)
        self.name = config.name or Path(config.site).stem
        self.profile = load_site_profile(config.site)
        self.headless = config.headless if headless is None else headless
        self.answer_timeout = answer_timeout
        self.page_timeout = page_timeout
        self.stable_window = stable_window
        self._thinking_since: float | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._reported = ""
        self.state = "stopped"
        self.renderer = ""  # the page layout in use (a renderer of the site profile)
        self.conversation_url: str | None = None
        self._pw: Any = None
        self._context: Any = None
        self._page: Any = None
        self._obs = Observed()
        self._old_docs: set[str] = set()
        self._changed = asyncio.Event()
        self._gone: str | None = None  # why the browser or its page went away
        self._context_closed = asyncio.Event()
        self._closing = False
        self._fresh = True  # the next prompt opens a new conversation
        self._navigate = True  # the page must be (re)opened before the next prompt
        self._stream: AnswerStream | None = None
        self._asking = asyncio.Lock()
        self._script = init_script(self.profile)
        self._closed: list[str] = []  # dialogs closed during this prompt, for the transcript

    # --- the state the status bar shows ---------------------------------------------

    @property
    def state(self) -> str:
        """"stopped", "starting", "logged_out", "idle", "streaming", "error", or while a
        reasoning model thinks "thinking (23 s)" (what the status bar shows)."""
        if self._state == "streaming" and self._thinking_since is not None:
            return f"thinking ({time.monotonic() - self._thinking_since:.0f} s)"
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        self._state = value
        self._report_state()

    def _report_state(self) -> None:
        """Tell the listeners the shown state (the thinking seconds change on their own)."""
        shown = self.state
        if shown != self._reported:
            self._reported = shown
            for listener in list(self.__dict__.get("_state_listeners", ())):
                listener(shown)

    def _thinking_changed(self, thinking: bool) -> None:
        if thinking and self._thinking_since is None:
            self._thinking_since = time.monotonic()
            if self._ticker is None or self._ticker.done():
                self._ticker = asyncio.get_running_loop().create_task(self._tick())
        elif not thinking:
            self._thinking_since = None
        self._report_state()

    async def _tick(self) -> None:
        """While the model thinks, "thinking (N s)" counts up once a second."""
        while self._thinking_since is not None:
            await asyncio.sleep(1.0)
            self._report_state()

    @property
    def page(self) -> Any:
        """The Playwright page in use (for diagnostics and tests), or None."""
        return self._page
    # --- for login() and diagnostics ----------------------------------------------------

    def verdict(self) -> Verdict:
        return classify(self._obs.facts, self.profile)

    async def wait_change(self, timeout: float) -> bool:
        """Wait for the page to change (True) or the timeout to pass (False)."""
        self._changed.clear()
        try:
            await asyncio.wait_for(self._changed.wait(), max(0.0, timeout))
            return True
        except TimeoutError:
            return False

    @property
    def gone(self) -> str | None:
        return self._gone

    def _on_context_closed(self) -> None:
        if not self._closing:
            self._context_closed.set()
        self._mark_gone(BROWSER_CLOSED)

    def _mark_gone(self, reason: str) -> None:
        if self._closing or self._gone:
            return
        self._gone = reason
        self._changed.set()

    async def _shutdown(self) -> None:
        self._closing = True
        try:
            if self._context is not None:
                try:
                    await asyncio.wait_for(self._context.close(), 10)
                except (PlaywrightError, TimeoutError, OSError):
                    pass
            if self._pw is not None:
                try:
                    await asyncio.wait_for(self._pw.stop(), 10)
                except (PlaywrightError, TimeoutError, OSError):
                    pass
        finally:
            self._context = self._pw = self._page = None
            self._closing = False

    # --- the page's pushes ----------------------------------------------------------

    def _on_push(self, source: dict[str, Any], st: dict[str, Any]) -> None:
        if source.get("page") is not self._page or not isinstance(st, dict):
            return
        doc = st.get("doc", "")
        if doc != self._obs.doc:
            if doc in self._old_docs:
                return  # a late push from a page we already left
            if self._obs.doc:
                self._old_docs.add(self._obs.doc)
            self._obs = Observed(doc=doc)
        self._obs.apply(st)
        self._changed.set()
        s = self._stream
        if self._obs.renderer:
            self.renderer = self._obs.renderer
        if self._obs.thinking != (self._thinking_since is not None):
            self._thinking_changed(self._obs.thinking)
        if (s is not None and s.callback is not None and self._obs.answer_id
                and self._obs.user_key != s.base_user and self._obs.text != s.last):
            s.last = self._obs.text
            try:
                s.callback(self._obs.text)
            except Exception as e:  # the front end's bug must not kill the page's pushes
                s.error = e

    # --- the page's own helpers (window.__vb) -----------------------------------------

    async def _eval(self, expression: str, arg: Any = None, timeout: float | None = None) -> Any:
        return await asyncio.wait_for(self._page.evaluate(expression, arg),
                                      timeout or self.page_timeout)

    async def _close_dialogs(self) -> None:
        """Close the dialogs covering the page (announcements, "what's new", consent,
        rating) by their own buttons; a login or an account picker stays a page state.
        What was closed goes into the transcript (the answer's details)."""
        closed = await self._eval("() => window.__vb.closeDialogs()")
        for d in closed or []:
            self._closed.append(f"closed a dialog on the page: \"{d['title']}\" (by its "
                                f"\"{d['button']}\" button)")
        if closed:
            self._changed.clear()
            await self.wait_change(0.5)  # let the page settle behind it

    # --- page states and failures -----------------------------------------------------

    def _message(self, v: Verdict) -> str:
        facts = self._obs.facts
        if v.state is PageState.LOADING and facts and facts.get("langKnown") is False:
            return (f"{self.profile.name} shows a page VerifyBot cannot read: its language "
                    f"({facts.get('lang')}) has no texts in {self.profile.source} (known: "
                    f"{', '.join(self.profile.languages)}) and no prompt box is recognised. "
                    f"The page is saved as evidence: open it in a browser to see what it asks; "
                    f"add a [texts.{facts.get('lang', 'LANG').split('-')[0].lower()}] table to "
                    f"a site profile of your own (extends = \"{self.profile.name}\"), or switch "
                    f"the account's language to a known one.")
        if v.state is PageState.LOADING and self._obs.facts and not self._obs.renderer:
            return (f"{self.profile.name} shows a page that no renderer of "
                    f"{self.profile.source} recognises (signatures tried: "
                    f"{self.profile.signatures()}). The site may have changed its page: run "
                    f"`verifybot doctor --site --llm {self.name}` to see which selectors "
                    f"still match, and fix the site profile.")
        return message(v, llm=self.name, site=self.profile.name, headless=self.headless,
                       profile_dir=str(profile_dir(self.config)), site_file=self.profile.source,
                       url=self.conversation_url or "")

    async def _raise_if_blocked(self, when: str) -> None:
        v = self.verdict()
        if v.state not in BLOCKING:
            return
        if v.state in (PageState.LOGGED_OUT, PageState.ACCOUNT_PICKER):
            self.state = "logged_out"
        raise await self._fail(self._message(v), v.state.value)

    def _check_gone_sync(self) -> None:
        if self._gone:
            raise PageGone()

    async def _gone_error(self, phase: str) -> LLMError:
        if self._gone == TAB_CLOSED:
            # A killed browser closes its tab first: give the browser's own event a moment.
            try:
                await asyncio.wait_for(self._context_closed.wait(), 0.5)
            except TimeoutError:
                pass
        reason = BROWSER_CLOSED if self._context_closed.is_set() else self._gone
        url = f" ({self.conversation_url})" if self.conversation_url else ""
        evidence = await self._evidence("browser_gone")
        await self._shutdown()
        self._navigate = True
        self.state = "error"
        return LLMError(f"{reason} while {phase}. The next prompt starts the browser again "
                        f"and reopens the conversation{url}.", evidence=evidence)

    async def _fail(self, text: str, reason: str) -> LLMError:
        return LLMError(text, evidence=await self._evidence(reason))

    async def _evidence(self, reason: str) -> list[str]:
        """A screenshot and the page HTML in <workspace>/runs/log/ (what is still possible)."""
        folder = self.workspace / "runs" / "log"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            return []
        stem = folder / f"{datetime.now().strftime('%Y%m%d-%H%M%S-%f')}_{self.name}_{reason}"
        saved: list[str] = []
        page = self._page
        if page is not None and not self._gone and not page.is_closed():
            try:
                png = stem.with_suffix(".png")
                await page.screenshot(path=str(png), timeout=5000)
                saved.append(str(png))
            except (PlaywrightError, OSError):
                pass
            try:
                html = await asyncio.wait_for(page.content(), 5)
                stem.with_suffix(".html").write_text(html, encoding="utf-8")
                saved.append(str(stem.with_suffix(".html")))
            except (PlaywrightError, TimeoutError, OSError):
                pass
        if not saved:
            # The page is gone: keep what we last saw of it.
            o = self._obs
            note = stem.with_suffix(".txt")
            try:
                note.write_text(f"reason: {reason}\nbrowser: {self._gone or 'unknown'}\n"
                                f"url: {o.url}\nfacts: {json.dumps(o.facts)}\n\n"
                                f"answer so far:\n{o.text}\n", encoding="utf-8")
                saved.append(str(note))
            except OSError:
                pass
        return saved

