"""`verifybot doctor --site`: a live probe of a chat site's selectors, for the day it changes.

The probe opens the logged-in profile (a visible window unless the config says
headless) and takes the page through the states in which each element exists:
idle (empty box), typed (text in the box, not sent), generating, finished. In
each state it asks the page script which selector of the active renderer
matches, and prints HIT or MISS per signal. An element that cannot exist in a
state (the stop button before anything is sent) is "not testable here", never
"broken". On any MISS it saves a redacted evidence file under runs/log/: the
page's data-* attribute histogram, the composer's buttons, the ancestor chain
of the last turn and its markup with every letter replaced, per state; enough
to write the new selector into a site profile from one run, with no
conversation text in it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import EXIT_FAILED, EXIT_LLM, EXIT_SUCCESS, LLMError
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser.driver import BrowserLLM
from verifybot_tui.llm.browser.pagestate import BLOCKING

STATES = ("idle", "typed", "generating", "finished")
# The states in which a signal's element must be on the page (elsewhere a miss
# is "not testable here"). Signals not listed need a state the probe cannot
# make (a reasoning model's activity, a cut-off answer, a delivery error...).
EXPECTED: dict[str, tuple[str, ...]] = {
    "prompt_box": STATES,
    "send_button": ("typed",),
    "stop_button": ("generating",),
    "user_turn": ("generating", "finished"),
    "user_message": ("generating", "finished"),
    "assistant_turn": ("finished",),
    "assistant_message": ("finished",),
    "finished_markers": ("finished",),
    "copy_button": ("finished",),
    "model_picker": ("idle",),
}
# Page-state markers: not conversation signals (absent on a working page).
PAGE_STATE_KEYS = {"login_markers", "bot_check_markers", "account_picker_markers",
                   "alert_containers", "error_toast", "new_chat"}
PROBE_PROMPT = "This is a test of a browser tool. Reply with the single word: ready"

Say = Callable[[str], None]
Confirm = Callable[[str], Awaitable[bool]]


async def probe_site(config: LLMConfig, workspace: Path, *, confirm: Confirm | None = None,
                     say: Say = print, answer_timeout: float = 180.0,
                     page_timeout: float = 30.0,
                     keep_page: Callable[[str], None] | None = None) -> int:
    """Run the probe; 0 when every testable signal hit, 1 on a MISS, 3 when the page
    is not usable (logged out, bot check...). ``keep_page`` gets the page's HTML as
    it was last probed, for `doctor --site --repair`."""
    llm = BrowserLLM(config, Path(workspace), headless=config.headless,
                     page_timeout=page_timeout)
    try:
        probe = _Probe(llm, say, confirm, answer_timeout)
        code = await probe.run()
        if keep_page is not None and code == EXIT_FAILED:
            keep_page(await llm.page.content())
        return code
    except LLMError as e:
        say(f"FAIL {e}")
        return e.exit_code
    finally:
        await llm.close()


class _Probe:
    def __init__(self, llm: BrowserLLM, say: Say, confirm: Confirm | None,
                 answer_timeout: float) -> None:
        self.llm = llm
        self.say = say
        self.confirm = confirm
        self.answer_timeout = answer_timeout
        self.signals: dict[str, dict[str, dict[str, Any]]] = {}  # state -> key -> hit
        self.evidence: dict[str, Any] = {}
        self.renderer = ""

    async def _eval(self, js: str, arg: Any = None) -> Any:
        return await self.llm._eval(js, arg)

    async def _sample(self) -> dict[str, Any]:
        got = await self._eval("() => window.__vb.probe()")
        got.pop("boxText", None)  # the prompt is conversation text: never kept
        return got

    async def run(self) -> int:
        llm = self.llm
        what = f"{llm.profile.name} ({llm.profile.source})"
        self.say(f"Probing {what} at {llm.new_chat_url()} in "
                 f"{'a headless browser' if llm.headless else 'a browser window'}.")
        await llm._launch()
        await llm.page.goto(llm.new_chat_url(), wait_until="domcontentloaded",
                            timeout=llm.page_timeout * 1000)
        await self._wait_page()
        v = llm.verdict()
        if v.state in BLOCKING:
            self.say(f"FAIL {llm._message(v)}")
            return EXIT_LLM
        first = await self._sample()
        self.renderer = first["renderer"]
        if not self.renderer:
            self.say(f"MISS renderer: no renderer's signature is on the page "
                     f"({llm.profile.signatures()})")
            self.evidence["idle"] = await self._eval("() => window.__vb.evidence()")
            self._save_evidence(["renderer"])
            return EXIT_FAILED
        self.say(f"renderer {self.renderer}: "
                 f"{', '.join(llm.profile.renderer(self.renderer).signature)}")

        await self._state("idle", [first])
        await self._type()
        await self._state("typed", [await self._sample()])
        if self.confirm is not None and not await self.confirm(
                f"Send a short test prompt to {llm.profile.name} in this chat to probe the "
                f"answer's signals?"):
            self.say("Stopped before sending: the generating and finished states were not "
                     "probed.")
            return self._report()
        gen = await self._generate()
        await self._state("generating", gen)
        last = await self._sample()
        if last["renderer"] and last["renderer"] != self.renderer:
            # A layout told apart only by its turns (Claude's hub): the page with an
            # answer on it decides which renderer's lists are reported.
            self.renderer = last["renderer"]
            self.say(f"renderer {self.renderer} once the answer is on the page: "
                     f"{', '.join(llm.profile.renderer(self.renderer).signature)}")
        await self._state("finished", [last], evidence=True)
        return self._report()

    async def _wait_page(self) -> None:
        deadline = time.monotonic() + self.llm.page_timeout
        while time.monotonic() < deadline:
            o = self.llm._obs
            if o.renderer and o.facts.get("promptBox") or self.llm.verdict().state in BLOCKING:
                return
            if o.facts and not o.renderer and time.monotonic() > deadline - \
                    self.llm.page_timeout / 2:
                return  # loaded, but nothing recognised: report it
            await self.llm.wait_change(0.5)

    async def _type(self) -> None:
        if not await self._eval("() => window.__vb.focusBox()"):
            return  # no prompt box: its MISS says so
        await self.llm.page.keyboard.insert_text(PROBE_PROMPT)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and not self.llm._obs.busy:
            s = await self._sample()
            if s["signals"].get("send_button", {}).get("count"):
                return
            await self.llm.wait_change(0.2)

    async def _generate(self) -> list[dict[str, Any]]:
        llm = self.llm
        base = llm._obs.user_key
        if not await self._eval("() => window.__vb.clickSend()"):
            # Never Enter: on some accounts it inserts a newline. The MISS says why.
            self.say("WARN no send button to click: the prompt was not sent")
            return []
        samples: list[dict[str, Any]] = []
        deadline = time.monotonic() + self.answer_timeout
        last_text, since = "", time.monotonic()
        while time.monotonic() < deadline:
            o = llm._obs
            if o.text != last_text:
                last_text, since = o.text, time.monotonic()
            quiet = time.monotonic() - since
            if o.user_key != base and o.text and not o.busy and (
                    (o.finished and quiet >= 0.3) or quiet >= 3.0):
                break
            samples.append(await self._sample())
            if "generating" not in self.evidence and (o.text or len(samples) > 10):
                self.evidence["generating"] = await self._eval("() => window.__vb.evidence()")
            await asyncio.sleep(0.05)
        else:
            self.say(f"WARN the answer did not finish within {self.answer_timeout:g} s")
        return samples

    async def _state(self, state: str, samples: list[dict[str, Any]], *,
                     evidence: bool = True) -> None:
        merged: dict[str, dict[str, Any]] = {}
        for s in samples:
            for key, hit in s["signals"].items():
                if hit["count"] and not merged.get(key, {}).get("count"):
                    merged[key] = hit
                merged.setdefault(key, hit)
        self.signals[state] = merged
        if evidence and state not in self.evidence:
            self.evidence[state] = await self._eval("() => window.__vb.evidence()")

    def _report(self) -> int:
        rend = self.llm.profile.renderer(self.renderer)
        assert rend is not None
        misses: list[str] = []
        for state in STATES:
            if state not in self.signals:
                continue
            self.say(f"state {state}:")
            for key, selectors in rend.selectors.items():
                if key in PAGE_STATE_KEYS or not selectors:
                    continue
                hit = self.signals[state].get(key, {"count": 0, "selector": ""})
                if hit["count"]:
                    self.say(f"  HIT  {key}: {hit['selector']} ({hit['count']})")
                elif state in EXPECTED.get(key, ()):
                    misses.append(f"{key} ({state})")
                    self.say(f"  MISS {key}: none of {', '.join(selectors)}")
                else:
                    where = EXPECTED.get(key)
                    why = (f"exists only when {' / '.join(where)}" if where else
                           "needs a page state the probe cannot make")
                    self.say(f"  --   {key}: not testable here ({why})")
        if misses:
            path = self._save_evidence(misses)
            self.say(f"{len(misses)} MISS: {', '.join(misses)}. Evidence (no conversation "
                     f"text): {path}. Write the new selector into a site profile file "
                     f"(extends = \"{self.llm.profile.name}\", [renderers.{self.renderer}."
                     f"selectors]) and point site = at it.")
            return EXIT_FAILED
        self.say(f"OK   every testable signal of {self.renderer} matched")
        return EXIT_SUCCESS

    def _save_evidence(self, misses: list[str]) -> Path | None:
        folder = self.llm.workspace / "runs" / "log"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / (f"{datetime.now().strftime('%Y%m%d-%H%M%S-%f')}_"
                             f"{self.llm.name}_site_probe.json")
            path.write_text(json.dumps({
                "site": self.llm.profile.name, "profile": self.llm.profile.source,
                "renderer": self.renderer, "misses": misses,
                "signals": self.signals, "states": self.evidence}, indent=1),
                encoding="utf-8")
            return path
        except OSError as e:
            self.say(f"WARN cannot save the evidence file: {e}")
            return None
