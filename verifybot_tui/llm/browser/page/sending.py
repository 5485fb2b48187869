"""Sending a prompt: typed into the site's box exactly (a long prompt, its newlines
kept), sent by the page's own button, and proven sent by the page.

The box is read back before sending (a mangled text is put in again directly,
a truncated one is an error), and the prompt counts as sent only when the page
shows it as a new message and the composer is empty.
"""

from __future__ import annotations

import asyncio
import re
import time

from playwright.async_api import Error as PlaywrightError

from verifybot_tui.llm.browser.page.session import ChatPage
from verifybot_tui.llm.browser.pagestate import PageState, Verdict

_SPACES = re.compile(r"\s+")


def _squash(text: str) -> str:
    """Text with all whitespace removed: sites re-wrap a prompt's lines when they show it."""
    return _SPACES.sub("", text.replace("\u00a0", " "))


class PromptSending(ChatPage):
    """The prompt into the box and out to the site (see ChatPage for the state)."""

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
            shown = o.user_key != base_user and shown_as(o.user_text, prompt, o.user_rich)
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
        if not shown_as(o.user_text, prompt, o.user_rich):
            raise await self._fail(
                f"The page shows a different prompt than the one sent ({len(o.user_text)} vs "
                f"{len(prompt)} characters): the site changed or cut it. Shorten the prompt.",
                "prompt_changed")
        raise await self._fail(
            f"The prompt shows on the page, but the prompt box still holds {o.box_len} "
            f"characters {limit:g} s after sending: {self.profile.name} may not have taken "
            f"it. Open the conversation to check, then try again.", "prompt_not_sent")


_FENCE_LINE = re.compile(r"^\s*`{3,}[\w+#.-]*\s*$", re.M)
_NOT_LETTER = re.compile(r"[\W\d_]+")


def shown_as(shown: str, prompt: str, rich: bool) -> bool:
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
