"""Waiting for the answer's end: seen as soon as its finish signals show, never before.

Finished means: an answer after our prompt, the page no longer busy, the
finished-action buttons (or an in-turn error) shown, and the text unchanged
for the stable window. An answer cut off is continued, a failed one retried
once when the config says so; at the answer timeout a saved conversation is
kept for a resume to wait again (AnswerPending).
"""

from __future__ import annotations

import time
from typing import Any

from verifybot_tui.core.base.errors import AnswerPending
from verifybot_tui.llm.browser.page.observed import Observed
from verifybot_tui.llm.browser.page.reading import AnswerReading

MAX_CONTINUES = 5  # "Continue generating" clicks per answer, at most


class AnswerWaiting(AnswerReading):
    """The whole answer, waited for (see ChatPage for the state)."""

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
