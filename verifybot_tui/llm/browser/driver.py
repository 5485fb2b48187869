"""BrowserLLM: a chat site (ChatGPT, Claude...) driven in Chromium as the LLM backend.

The driver is the protocol (start, ask, reattach, resume, close) told as steps
of the page's parts in page/: opening the page, sending the prompt, waiting for
the answer and reading it. It adds what a whole prompt needs: one prompt at a
time on the page, and every way the browser can fail turned into an LLMError
with evidence that says what to do.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.base.ports import Answer, TextCallback
from verifybot_tui.llm.browser.page.opening import PageOpening
from verifybot_tui.llm.browser.page.sending import PromptSending, shown_as
from verifybot_tui.llm.browser.page.session import AnswerStream, PageGone, Phase
from verifybot_tui.llm.browser.page.waiting import AnswerWaiting

_BACKGROUND: set[asyncio.Task[None]] = set()
_NO_KEY = "\0none"  # a user-message key no page has: any answer after the last message


class BrowserLLM(AnswerWaiting, PromptSending, PageOpening):
    """The LLMBackend of a chat site in a browser (see core/ports.py for the protocol)."""

    # --- public protocol -------------------------------------------------------------

    async def start(self) -> None:
        self.state = "starting"

        async def steps(phase: Phase) -> None:
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

        async def steps(phase: Phase) -> str:
            await self._reopen()
            await self._wait_not_busy()
            base_user = self._obs.user_key
            phase.text = "typing the prompt"
            await self._type_prompt(prompt)
            phase.text = "sending the prompt"
            await self._close_dialogs()
            await self._raise_if_blocked("before_send")  # a limit shown once typed
            await self._send()
            self._stream = AnswerStream(base_user, on_text)
            await self._wait_user_turn(prompt, base_user)
            return await self._answer_after(phase)

        return await self._answered(steps)

    async def reattach(self, prompt: str, on_text: TextCallback | None = None) -> Answer:
        """Wait again for an answer that outlived an earlier wait (AnswerPending): reopen
        the conversation (``resume`` first), check that its last message is this prompt,
        and wait for the answer after it. Nothing is sent."""
        prompt = prompt.replace("\r\n", "\n")

        async def steps(phase: Phase) -> str:
            phase.text = "reopening the conversation"
            await self._reopen()
            o = self._obs
            if not o.users or not shown_as(o.user_text, prompt, o.user_rich):
                raise await self._fail(
                    f"The conversation {self.conversation_url or ''} does not end with the "
                    f"prompt whose answer was pending (its last message is "
                    f"{len(o.user_text)} characters, the prompt {len(prompt)}): nothing to "
                    f"wait for. Send the prompt again.", "pending_not_found")
            self._stream = AnswerStream(_NO_KEY, on_text)  # the answer after the last message
            return await self._answer_after(phase)

        return await self._answered(steps)

    async def _reopen(self) -> None:
        """The page ready for a prompt: (re)opened when it must be, its dialogs closed,
        and nothing on it that blocks."""
        if self._gone or self._context is None or self._navigate:
            self.state = "starting"
            await self._ensure_page()
        await self._close_dialogs()
        await self._raise_if_blocked("before_prompt")

    async def _answer_after(self, phase: Phase) -> str:
        """The answer after the prompt sent (or found), whole, and the chat's saved URL."""
        self._fresh = False
        phase.text = "waiting for the answer"
        self.state = "streaming"
        markdown = await self._wait_answer(time.monotonic() + self.answer_timeout)
        await self._settle_url()
        return markdown

    async def _answered(self, steps: Callable[[Phase], Awaitable[str]]) -> Answer:
        """One prompt's steps at a time on the page (they share it), guarded; their
        markdown as the Answer, with what the driver did on the way."""
        self._thinking_since = None
        async with self._asking:
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

    async def _guarded(self, steps: Any) -> Any:
        """Run steps, turning every way the browser can fail into an LLMError with evidence."""
        phase = Phase("opening the page")
        try:
            return await steps(phase)
        except LLMError:
            if self._state != "logged_out":
                self.state = "error"
            raise
        except PageGone:
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
