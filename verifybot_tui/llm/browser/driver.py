"""BrowserLLM: a chat site (ChatGPT, Claude...) driven in Chromium as the LLM backend.

The page tells us about itself: observer.js pushes every change through a
binding, and the driver waits on those pushes (asyncio events with deadlines)
instead of polling with sleeps, so an answer is returned as soon as its finish
signals appear and never before. Every failure saves a screenshot and the page
HTML, and says what to do in its message.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from verifybot_tui.core.base.errors import AnswerPending, LLMError
from verifybot_tui.core.base.ports import Answer, ReportsState, TextCallback
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser.chromium import launch_context, profile_dir
from verifybot_tui.llm.browser.pagestate import BLOCKING, PageState, Verdict, classify, message
from verifybot_tui.llm.browser.site_profile import SiteProfile, load_site_profile

_HERE = Path(__file__).parent
_WS = re.compile(r"\s+")


def init_script(profile: SiteProfile) -> str:
    """The page script: the site's selectors, the DOM->markdown converter, the observer."""
    return ("(() => {\nconst VB_CONFIG = " + json.dumps(profile.page_config()) + ";\n"
            + (_HERE / "dom_markdown.js").read_text(encoding="utf-8") + "\n"
            + (_HERE / "observer.js").read_text(encoding="utf-8") + "\n})();")


def _squash(text: str) -> str:
    """Text with all whitespace removed: sites re-wrap a prompt's lines when they show it."""
    return _WS.sub("", text.replace("\u00a0", " "))


@dataclass
class Observed:
    """The page as the observer last described it (one document at a time)."""

    doc: str = ""
    text_t: float = 0.0  # page clock (ms since the epoch) of the answer text's last change
    url: str = ""
    renderer: str = ""  # the site's page layout in use ("" : none matched)
    users: int = 0
    user_key: str = ""  # the last prompt's message id (or element), never a count
    user_text: str = ""
    user_rich: bool = False  # the prompt is shown rendered as markdown
    answer_id: int = 0
    answer_key: str = ""
    text: str = ""
    finished: bool = False
    busy: bool = False
    stop: bool = False
    activity: str = ""  # "Thinking", "Thought for 12s"...
    thinking: bool = False
    can_continue: bool = False
    turn_error: str = ""
    artifacts: bool = False
    box_len: int = 0  # characters in the prompt box (0: the composer is empty)
    model: str = ""  # the model the page names for the last answer (or its picker)
    effort: str = ""  # the effort / mode word the picker shows beside it ("Extended")
    retry: str = ""  # a failed answer's Retry button (its label), with turn_error
    facts: dict[str, Any] = field(default_factory=dict)

    def apply(self, st: dict[str, Any]) -> None:
        """Take one observation: each field from observer.js's camelCase key of its name
        (text_t <- textT); the answer text comes as a change: keep ``keep``, add ``add``."""
        for name, key in _OBSERVED_KEYS:
            setattr(self, name, st[key])
        if "userText" in st:  # sent only when the last prompt's bubble changed
            self.user_text = st["userText"]
        self.text = self.text[: st["keep"]] + st["add"]


# The fields every observation sets, with the key observer.js sends each under.
_OBSERVED_KEYS = tuple(
    (f.name, re.sub(r"_(\w)", lambda m: m.group(1).upper(), f.name))
    for f in fields(Observed) if f.name not in ("doc", "user_text", "text"))


@dataclass
class _Stream:
    base_user: str  # the last prompt's key before this one was sent
    callback: TextCallback | None
    last: str = ""
    error: BaseException | None = None


class BrowserLLM(ReportsState):
    """The LLMBackend of a chat site in a browser (see core/ports.py for the protocol)."""

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
        self._stream: _Stream | None = None
        self._asking = asyncio.Lock()
        self._script = init_script(self.profile)
        self._closed: list[str] = []  # dialogs closed during this prompt, for the transcript

    # --- public protocol -------------------------------------------------------------

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

    async def start(self) -> None:
        self.state = "starting"

        async def steps(phase: _Phase) -> None:
            await self._ensure_page()
            await self._raise_if_blocked("start")

        await self._guarded(steps)
        self.state = "idle"

    async def new_chat(self) -> None:
        self._fresh = True
        self._navigate = True
        self.conversation_url = None

    async def resume(self, conversation_url: str) -> None:
        """Go on in a conversation: only one on the site's own origin is opened (a history
        from others may store any address, and the browser is the logged-in one)."""
        from verifybot_tui.core.settings.config_review import site_origin

        home = self.profile.new_chat_url or self.config.url
        if site_origin(conversation_url) != site_origin(home):
            scheme, host = site_origin(home)
            raise LLMError(f"not opened: the conversation {conversation_url!r} is not on "
                           f"{scheme}://{host}, the site of [llm.{self.name}]; a history "
                           "from others may hold any address. Start a new session instead")
        self._fresh = False
        self._navigate = True
        self.conversation_url = conversation_url

    async def ask(self, prompt: str, on_text: TextCallback | None = None) -> Answer:
        prompt = prompt.replace("\r\n", "\n")
        if not prompt.strip():
            raise LLMError("Nothing to send: the prompt is empty.")

        self._thinking_since = None

        async def steps(phase: _Phase) -> str:
            if self._gone or self._context is None or self._navigate:
                self.state = "starting"
                await self._ensure_page()
            await self._close_dialogs()
            await self._raise_if_blocked("before_prompt")
            await self._wait_not_busy()
            base_user = self._obs.user_key
            phase.text = "typing the prompt"
            await self._type_prompt(prompt)
            phase.text = "sending the prompt"
            await self._close_dialogs()
            await self._raise_if_blocked("before_send")  # a limit shown once typed
            await self._send()
            self._stream = _Stream(base_user, on_text)
            await self._wait_user_turn(prompt, base_user)
            self._fresh = False
            phase.text = "waiting for the answer"
            self.state = "streaming"
            markdown = await self._wait_answer(time.monotonic() + self.answer_timeout)
            await self._settle_url()
            return markdown

        async with self._asking:  # one prompt at a time: they share one page
            markdown = await self._guarded(steps)
        self.state = "idle"
        details, self._closed = self._details(), []
        return Answer(markdown=markdown, conversation_url=self.conversation_url,
                      renderer=self.renderer, resumable=not self.config.temporary,
                      details=details, model=self._obs.model)

    def _details(self) -> str:
        """For the transcript: what the driver did on the way (dialogs closed, a second
        click on send) and the effort word the picker showed beside the model."""
        effort = [f"model effort: {self._obs.effort}"] if self._obs.effort else []
        return "; ".join([*self._closed, *effort])

    async def reattach(self, prompt: str, on_text: TextCallback | None = None) -> Answer:
        """Wait again for an answer that outlived an earlier wait (AnswerPending): reopen
        the conversation (``resume`` first), check that its last message is this prompt,
        and wait for the answer after it. Nothing is sent."""
        prompt = prompt.replace("\r\n", "\n")
        self._thinking_since = None

        async def steps(phase: _Phase) -> str:
            phase.text = "reopening the conversation"
            if self._gone or self._context is None or self._navigate:
                self.state = "starting"
                await self._ensure_page()
            await self._close_dialogs()
            await self._raise_if_blocked("before_prompt")
            o = self._obs
            if not o.users or not _shown_as(o.user_text, prompt, o.user_rich):
                raise await self._fail(
                    f"The conversation {self.conversation_url or ''} does not end with the "
                    f"prompt whose answer was pending (its last message is "
                    f"{len(o.user_text)} characters, the prompt {len(prompt)}): nothing to "
                    f"wait for. Send the prompt again.", "pending_not_found")
            self._stream = _Stream(_NO_KEY, on_text)  # the answer after the last message
            self._fresh = False
            phase.text = "waiting for the answer"
            self.state = "streaming"
            markdown = await self._wait_answer(time.monotonic() + self.answer_timeout)
            await self._settle_url()
            return markdown

        async with self._asking:
            markdown = await self._guarded(steps)
        self.state = "idle"
        details, self._closed = self._details(), []
        return Answer(markdown=markdown, conversation_url=self.conversation_url,
                      renderer=self.renderer, resumable=not self.config.temporary,
                      details=details, model=self._obs.model)

    async def _guarded(self, steps: Any) -> Any:
        """Run steps, turning every way the browser can fail into an LLMError with evidence."""
        phase = _Phase("opening the page")
        try:
            return await steps(phase)
        except LLMError:
            if self._state != "logged_out":
                self.state = "error"
            raise
        except _Gone:
            raise await self._gone_error(phase.text) from None
        except TimeoutError:
            self.state = "error"
            raise await self._fail(f"The page stopped responding while {phase.text} (no reply "
                                   f"within {self.page_timeout:g} s). Try again.",
                                   "page_unresponsive") from None
        except PlaywrightError as e:
            self.state = "error"
            if self._gone:
                raise await self._gone_error(phase.text) from None
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise await self._fail(f"The browser failed while {phase.text}: {first}. Try "
                                   f"again.", "browser_error") from None
        except asyncio.CancelledError:
            # The user stopped the loop: stop the site's answer too, so the next prompt
            # is not sent into a page that is still busy.
            if self._state == "streaming" and self._page is not None and not self._gone:
                task = asyncio.get_running_loop().create_task(self._click_stop())
                _BACKGROUND.add(task)
                task.add_done_callback(_BACKGROUND.discard)
            self.state = "idle" if self._context is not None else "stopped"
            raise
        finally:
            self._stream = None

    async def _click_stop(self) -> None:
        try:
            await self._eval("() => window.__vb.clickStop()", timeout=5)
        except (PlaywrightError, TimeoutError):
            pass

    async def close(self) -> None:
        self._thinking_since = None
        if self._ticker is not None:
            self._ticker.cancel()
        await self._shutdown()
        self.state = "stopped"

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
        page.on("close", lambda _p: self._mark_gone(_TAB_CLOSED))
        page.on("crash", lambda _p: self._mark_gone(_TAB_CRASHED))

    def _on_context_closed(self) -> None:
        if not self._closing:
            self._context_closed.set()
        self._mark_gone(_BROWSER_CLOSED)

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

    # --- sending ----------------------------------------------------------------------

    async def _eval(self, expression: str, arg: Any = None, timeout: float | None = None) -> Any:
        return await asyncio.wait_for(self._page.evaluate(expression, arg),
                                      timeout or self.page_timeout)

    async def _read_box(self) -> str | None:
        return await self._eval("() => window.__vb.readBox()")

    async def _type_prompt(self, prompt: str) -> None:
        if not await self._eval("() => window.__vb.focusBox()"):
            raise await self._fail(self._message(Verdict(PageState.LOADING)), "no_prompt_box")
        if await self._read_box():
            await self._page.keyboard.press("ControlOrMeta+a")
            await self._page.keyboard.press("Backspace")
        await asyncio.wait_for(self._page.keyboard.insert_text(prompt), self.page_timeout)
        got = await self._read_box()
        if _same_box_text(got, prompt):
            return
        # The editor mangled the typed text: put one paragraph per line in directly.
        await self._eval("t => window.__vb.setBox(t)", prompt)
        got = await self._read_box()
        if _same_box_text(got, prompt):
            return
        got = got or ""
        at = next((i for i, (a, b) in enumerate(zip(got, prompt, strict=False)) if a != b),
                  min(len(got), len(prompt)))
        raise await self._fail(
            f"The prompt box holds {len(got)} of the {len(prompt)} characters sent (first "
            f"difference at character {at}): the site truncated or changed the prompt. "
            f"Shorten the prompt, or send it in parts.", "prompt_truncated")

    async def _send(self) -> None:
        """Click the page's send control. Never Enter: on some accounts Enter inserts a
        newline (Ctrl+Enter sends), and a dialog may take the keystroke."""
        if await self._eval("() => window.__vb.clickSend()"):
            return
        try:
            await self._page.wait_for_function("() => window.__vb.canSend()",
                                               timeout=min(self.page_timeout, 5.0) * 1000)
            if await self._eval("() => window.__vb.clickSend()"):
                return
        except PlaywrightError:
            if self._gone:
                raise
        raise await self._fail(
            f"The prompt is typed, but {self.profile.name} shows no send button to click "
            f"(send_button selectors of {self.profile.source}, or the composer's submit "
            f"button). Nothing was sent. Run `verifybot doctor --site --llm {self.name}` to "
            f"see which selectors still match.", "no_send_button")

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

    async def _wait_not_busy(self) -> None:
        """A page still answering (an earlier, stopped run) would swallow the prompt."""
        if not self._obs.busy:
            return
        deadline = time.monotonic() + self.page_timeout
        while self._obs.busy:
            self._check_gone_sync()
            if not await self.wait_change(deadline - time.monotonic()):
                raise await self._fail(
                    f"{self.profile.name} is still answering an earlier prompt after "
                    f"{self.page_timeout:g} s. Wait for it to finish or press Stop in the "
                    f"browser, then try again.", "still_busy")

    async def _wait_user_turn(self, prompt: str, base_user: str) -> None:
        """Proof that the prompt went: the page shows a new user message equal to it and
        the composer is empty, within [llm] send_timeout. A click the page swallowed (the
        box keeps the text, no new message) is clicked once more half-way; then it is an
        error with evidence, long before the answer timeout."""
        limit = self.config.send_timeout
        start = time.monotonic()
        deadline, resend_at = start + limit, start + limit / 2
        resent = False
        while True:
            self._check_gone_sync()
            o = self._obs
            shown = o.user_key != base_user and _shown_as(o.user_text, prompt, o.user_rich)
            if shown and o.box_len == 0:
                return
            await self._raise_if_blocked("after_send")
            now = time.monotonic()
            if (not resent and now >= resend_at and o.user_key == base_user and o.box_len
                    and not o.busy):
                resent = True
                self._closed.append("the first click on send did nothing (the prompt stayed "
                                    "in the box): clicked it once more")
                await self._close_dialogs()
                await self._eval("() => window.__vb.clickSend()")
                continue
            wake = deadline if resent or now >= resend_at else resend_at
            if not await self.wait_change(wake - time.monotonic()) and \
                    time.monotonic() >= deadline:
                break
        if self._gone:
            raise await self._gone_error("sending the prompt")
        o = self._obs
        again = " (clicked twice)" if resent else ""
        if o.user_key == base_user:
            held = (f"the prompt box still holds {o.box_len} characters" if o.box_len
                    else "the prompt box was emptied")
            raise await self._fail(
                f"The prompt was not sent: {limit:g} s after clicking send{again}, "
                f"{self.profile.name} shows no new message and {held} (send_button "
                f"selectors of {self.profile.source} may be out of date, or the page "
                f"ignored the click). Nothing to wait for: try again.", "prompt_not_sent")
        if not _shown_as(o.user_text, prompt, o.user_rich):
            raise await self._fail(
                f"The page shows a different prompt than the one sent ({len(o.user_text)} vs "
                f"{len(prompt)} characters): the site changed or cut it. Shorten the prompt.",
                "prompt_changed")
        raise await self._fail(
            f"The prompt shows on the page, but the prompt box still holds {o.box_len} "
            f"characters {limit:g} s after sending: {self.profile.name} may not have taken "
            f"it. Open the conversation to check, then try again.", "prompt_not_sent")

    # --- the answer -------------------------------------------------------------------

    async def _wait_answer(self, deadline: float) -> str:
        """The whole answer: finished, continued when cut off, read exactly."""
        parts: list[tuple[str, str]] = []  # (answer key, markdown) of cut-off parts
        regenerated = False
        while True:
            await self._wait_finished(deadline)
            o = self._obs
            if o.turn_error:
                again = self.config.auto_retry or self.config.regenerate_on_error
                if again and not regenerated:
                    regenerated = True
                    what = f'its "{o.retry}" button' if o.retry else "its regenerate button"
                    self._closed.append(f'the answer failed ("{o.turn_error[:120]}"): '
                                        f"clicked {what} once (auto_retry)")
                    await self._click_and_wait("clickRegenerate", lambda ob: not ob.turn_error)
                    continue
                shows = f' and shows a "{o.retry}" button' if o.retry else ""
                raise await self._fail(
                    f"{self.profile.name} could not deliver the answer: the page says "
                    f'"{o.turn_error[:200]}"{shows}. Send the prompt again (or set auto_retry '
                    f"= true in [llm.{self.name}] to retry once by itself).", "delivery_error")
            markdown = await self._read_answer()
            if o.can_continue and self.config.auto_continue and len(parts) < MAX_CONTINUES:
                parts.append((o.answer_key, markdown))
                key, text = o.answer_key, o.text
                await self._click_and_wait(
                    "clickContinue",
                    lambda ob, k=key, t=text: ob.answer_key != k or ob.text != t or ob.busy)
                continue
            break
        if parts:
            # A continued answer grows in its own message (ChatGPT) or comes as a new
            # message (Claude): keep each message's last reading, in order.
            latest: dict[str, str] = {}
            for key, md in [*parts, (self._obs.answer_key, markdown)]:
                latest[key] = md
            markdown = "\n\n".join(md.strip("\n") for md in latest.values())
        return markdown

    async def _wait_finished(self, deadline: float) -> None:
        stream = self._stream
        assert stream is not None
        while True:
            self._check_gone_sync()
            if stream.error is not None:
                raise stream.error
            o = self._obs
            if not o.turn_error:
                await self._raise_if_blocked("during_answer")
            self._note_url(o.url)
            present = bool(o.answer_id) and o.user_key != stream.base_user
            wait = deadline - time.monotonic()
            if present and not o.busy and (o.finished or o.turn_error):
                quiet = time.time() - o.text_t / 1000.0
                if quiet >= self.stable_window:
                    return
                wait = min(wait, self.stable_window - quiet)
            if deadline - time.monotonic() <= 0:
                await self._timed_out(present, o)
            await self.wait_change(wait)

    async def _click_and_wait(self, helper: str, changed: Any) -> None:
        """Click a button of the answer (continue, regenerate) and wait for the page to react."""
        await self._close_dialogs()
        if not await self._eval(f"() => window.__vb.{helper}()"):
            return
        deadline = time.monotonic() + self.page_timeout
        while not changed(self._obs):
            self._check_gone_sync()
            if not await self.wait_change(deadline - time.monotonic()):
                raise await self._fail(f"{self.profile.name} did not react to the "
                                       f"{helper.removeprefix('click').lower()} button within "
                                       f"{self.page_timeout:g} s. Try again.", "no_reaction")

    async def _read_answer(self) -> str:
        """The site's own markdown through its copy button, else the DOM, never less."""
        await self._close_dialogs()
        markdown = await self._eval("t => window.__vb.copyAnswer(t)", 2000)
        if not isinstance(markdown, str) or not markdown.strip():
            got = await self._eval("t => window.__vb.answerMarkdown(t)", self.page_timeout * 700,
                                   timeout=self.page_timeout)
            if got is None:
                raise await self._fail("The answer vanished from the page before it could be "
                                       "read. Try again.", "answer_vanished")
            if got["incomplete"]:
                blocks = ", ".join(f"block {b['block']}"
                                   + (f" ({b['language']})" if b["language"] else "")
                                   + f", {b['shown']} lines shown"
                                   for b in got["incomplete"])
                raise await self._fail(
                    f"The answer's copy button gave nothing and its code could not be read "
                    f"whole from the page: CodeMirror code {blocks} kept lines hidden while "
                    f"scrolled through. Nothing was extracted (a shorter program would be "
                    f"wrong). Try again, or open the conversation and copy the code.",
                    "incomplete_code")
            markdown = got["markdown"]
        if self._obs.artifacts:
            markdown = await self._with_artifacts(markdown)
        return markdown

    async def _with_artifacts(self, markdown: str) -> str:
        """Claude keeps code put in an artifact out of the copied text: read it from the
        conversation JSON the page itself fetches (the site's own session and cookies)."""
        await self._settle_url()  # the JSON is found by the saved chat's id
        url = self._obs.url or self._page.url
        cid = self.profile.conversation_id(url)
        found: list[dict[str, Any]] = []
        if cid:
            base = url[: url.index(cid)]
            conv_id = cid.rsplit("/", 1)[-1]
            try:
                orgs = await self._eval("u => window.__vb.fetchJson(u)",
                                        base + "/api/organizations")
                org_list = orgs.get("data") if isinstance(orgs, dict) else None
                if isinstance(org_list, list):
                    for org in org_list:
                        got = await self._eval(
                            "u => window.__vb.fetchJson(u)",
                            f"{base}/api/organizations/{org.get('uuid')}/chat_conversations/"
                            f"{conv_id}?tree=True&rendering_mode=messages&render_all_tools=true")
                        if isinstance(got, dict) and isinstance(got.get("data"), dict):
                            found = _artifacts_of(got["data"])
                            break
            except (PlaywrightError, TimeoutError, AttributeError):
                found = []
        if not found:
            raise await self._fail(
                f"The answer's code is in a {self.profile.name} artifact, which the copied "
                f"text leaves out, and the conversation data could not be read from the page. "
                f"Ask again for the code in the answer itself (not an artifact), or copy it "
                f"from the artifact panel.", "artifact")
        blocks = []
        for art in found:
            code = art["content"]
            fence = "```"
            while fence in code:
                fence += "`"
            title = f"**{art['title']}**\n\n" if art.get("title") else ""
            blocks.append(f"{title}{fence}{art.get('language', '')}\n{code.rstrip(chr(10))}\n"
                          f"{fence}")
        return markdown.rstrip("\n") + "\n\n" + "\n\n".join(blocks)

    async def _timed_out(self, present: bool, o: Observed) -> None:
        """The answer timeout: the prompt went, so the site may still be writing (a long
        "thinking" answer). Its saved conversation is kept for a resume to wait again."""
        text = self._timeout_message(present, o)
        url = self.conversation_url if not self.config.temporary else None
        if url and self.profile.conversation_id(url):
            evidence = await self._evidence("answer_timeout")
            raise AnswerPending(f"{text} The conversation is kept ({url}): resuming the "
                                f"session waits for this same answer instead of asking "
                                f"again.", conversation_url=url, evidence=evidence)
        raise await self._fail(text, "answer_timeout")

    def _timeout_message(self, present: bool, o: Observed) -> str:
        waited = []
        if not present:
            waited.append("the answer to appear after the prompt")
        if o.busy:
            waited.append("the stop button / busy marker to go away")
        if not o.finished:
            waited.append("the finished-action buttons (finished_markers) in the last answer")
        if not waited:
            waited.append(f"the text to stay unchanged for {self.stable_window:g} s")
        return (f"No complete answer from {self.profile.name} within {self.answer_timeout:g} s: "
                f"waited for {', '.join(waited)}. The model may still be working: open the "
                f"conversation in a browser to see it, then try again.")

    def _note_url(self, url: str) -> None:
        if url and self.profile.conversation_id(url):
            self.conversation_url = url

    async def _settle_url(self) -> None:
        """Record the chat's URL once the site has saved it (/c/<uuid>, not /c/WEB:...)."""
        deadline = time.monotonic() + 3.0
        while True:
            self._note_url(self._obs.url or self._page.url)
            if self.profile.conversation_id(self._obs.url or ""):
                return
            if self._gone or not await self.wait_change(deadline - time.monotonic()):
                self._note_url(self._page.url if self._page else "")
                return

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
            raise _Gone()

    async def _gone_error(self, phase: str) -> LLMError:
        if self._gone == _TAB_CLOSED:
            # A killed browser closes its tab first: give the browser's own event a moment.
            try:
                await asyncio.wait_for(self._context_closed.wait(), 0.5)
            except TimeoutError:
                pass
        reason = _BROWSER_CLOSED if self._context_closed.is_set() else self._gone
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


_BROWSER_CLOSED = "The browser was closed (or crashed)"
_TAB_CLOSED = "The browser tab was closed"
_TAB_CRASHED = "The browser tab crashed"


_BACKGROUND: set[asyncio.Task[None]] = set()


@dataclass
class _Phase:
    text: str  # what the driver was doing, for messages


class _Gone(Exception):
    """Internal: the browser went away; turned into an LLMError by the caller."""


MAX_CONTINUES = 5  # "Continue generating" clicks per answer, at most
_NO_KEY = "\0none"  # a user-message key no page has: any answer after the last message


def _artifacts_of(conversation: dict[str, Any]) -> list[dict[str, str]]:
    """Code artifacts of the last assistant message in Claude's conversation JSON."""
    messages = [m for m in conversation.get("chat_messages", []) if isinstance(m, dict)
                and m.get("sender") == "assistant"]
    if not messages:
        return []
    out = []
    for item in messages[-1].get("content", []):
        inp = item.get("input") if isinstance(item, dict) else None
        if (item.get("type") == "tool_use" and isinstance(inp, dict)
                and isinstance(inp.get("content"), str)):
            out.append({"content": inp["content"], "language": str(inp.get("language") or ""),
                        "title": str(inp.get("title") or "")})
    return out


_FENCE_LINE = re.compile(r"^\s*`{3,}[\w+#.-]*\s*$", re.M)
_NOT_LETTER = re.compile(r"[\W\d_]+")


def _shown_as(shown: str, prompt: str, rich: bool) -> bool:
    """The page's bubble shows this prompt. It is not the prompt verbatim: lines are
    re-wrapped, the app-shell page drops the backticks of inline code, and a prompt
    holding a fenced block is shown rendered as markdown (its markers gone). The box
    was read back exactly before sending; this only tells our prompt from another."""
    def squash(t: str) -> str:
        return _squash(t).replace("`", "")
    if squash(shown) == squash(prompt):
        return True
    if rich:
        return (_NOT_LETTER.sub("", shown).lower()
                == _NOT_LETTER.sub("", _FENCE_LINE.sub("", prompt)).lower())
    return False


def _same_box_text(got: str | None, sent: str) -> bool:
    return got is not None and got.replace("\u00a0", " ") == sent.replace("\u00a0", " ")
