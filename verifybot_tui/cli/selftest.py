"""`verifybot selftest`: one canary prompt through the whole bridge, step by step.

What a user runs to know the bridge works today: a fixed prompt asking for a
tiny program with a known output goes through the chat site (send, finish),
the answer is read both ways (the site's copy button, and the DOM fallback,
which must agree with it), the code is extracted and run on this machine. Each
step prints OK or FAIL with its time, so a broken step is named, not guessed.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from verifybot_tui.cli.options import shared
from verifybot_tui.core.answers.extract import extract
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_LLM,
    EXIT_SUCCESS,
    ConfigError,
    VerifyBotError,
)
from verifybot_tui.core.settings.config import (
    Config,
    LLMConfig,
    TargetConfig,
    check_llm_spec,
)

PROMPT = ("This is an automatic test of a tool. Write a Python 3 program that prints the "
          "value of sum(range(1, 11)) * 3 and nothing else. Put the whole program in one "
          "fenced python code block.")
EXPECTED_OUTPUT = "165"

Say = Callable[[str], None]


def add_bridge_args(p: argparse.ArgumentParser, command: str) -> None:
    """The arguments of `doctor` (with --site, the live probe) and `selftest`."""
    if command != "doctor":
        p.description = "One canary prompt through the whole bridge, each step timed."
        shared(p, "--llm", text="the [llm.NAME] to test (default: [run] default_llm)")
        p.add_argument("--offline", action="store_true",
                       help="against VerifyBot's own chat page served on 127.0.0.1, headless: "
                            "checks the installation (browser, driver, extraction, a local "
                            "run) with no login and no network (default: the chat site)")
        return
    p.description = "Check the config, the browser, the login and the targets."
    p.add_argument("--site", nargs="?", const=True, default=None, metavar="SITE",
                   help="alone: probe the chat site's selectors live (HIT/MISS per "
                   "signal; an evidence file on a MISS); with --page: the site the page "
                   "was saved from, chatgpt or claude (default: chatgpt)")
    p.add_argument("--page", metavar="FILE.html", help="check a saved chat page offline "
                   "(the browser's \"Save page as\", or an evidence HTML from runs/log/): "
                   "renderer, page state, each finished-state signal HIT/MISS, the last "
                   "answer as markdown (default: none; the other checks run)")
    shared(p, "--json", text="with --page: print one JSON object (default: off)")
    shared(p, "--llm", text="with --site: the [llm.NAME] to probe; with --page --repair: "
                            "the LLM that proposes selectors, an [llm.NAME] or "
                            "replay:FILE.md (default: [run] default_llm)")
    shared(p, "--yes", text="with --site: send the test prompt without asking (default: ask)")
    p.add_argument("--repair", nargs="?", const=True, default=None, metavar="LLM",
                   help="with --page (or --site): for each MISS, an LLM proposes selectors, "
                   "each is tried on the page, the working ones are shown as a diff of "
                   "your own site profile and written there once accepted; with --site, "
                   "LLM names the proposing LLM (default: off)")
    p.add_argument("--accept", action="store_true", help="with --repair: write the working "
                   "selectors without asking (default: ask)")
    shared(p, "--trust-new-host", text="trust and save an SSH target's host key seen for the "
                                       "first time (default: report it with its fingerprint, "
                                       "trust nothing)")


class _Steps:
    def __init__(self, say: Say) -> None:
        self.say = say
        self.failed = False
        self.passed = "selftest passed: the bridge works today"
        self.current = "open"  # the step under way: an error is reported as that step's
        self.t0 = time.perf_counter()

    def begin(self, step: str) -> float:
        self.current, self.t0 = step, time.perf_counter()
        return self.t0

    def line(self, ok: bool, step: str, ms: float, detail: str) -> None:
        self.failed |= not ok
        self.say(f"{'OK  ' if ok else 'FAIL'} {step:<13} {ms:7.0f} ms  {detail}")

    def failed_now(self, detail: str) -> None:
        """The step under way ended in an error: its name and the time it took."""
        self.line(False, self.current, _ms(self.t0), detail)


def _ms(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000


def _first_difference(a: str, b: str) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y),
                min(len(a), len(b)))


async def run_selftest(config: Config, llm_name: str, say: Say = print) -> int:
    check_llm_spec(config, llm_name, replay=False)
    cfg = config.llm[llm_name]
    if cfg.kind != "browser":
        raise ConfigError(f"selftest checks a browser bridge; [llm.{llm_name}] is kind = "
                          f"{cfg.kind!r}")
    return await _selftest(cfg, config.workspace, say, f"[llm.{llm_name}] ({cfg.site}")


async def run_offline_selftest(config: Config, say: Say = print) -> int:
    """The same steps against VerifyBot's own page on loopback (no login, no network),
    in a throw-away browser profile and workspace; the configured browser_path is used."""
    import tempfile

    from verifybot_tui.llm.browser.selftest_site import SelftestSite, site_file

    # A browser_path the user set is the browser to check (messages name its table).
    mine = next((c for c in config.llm.values() if c.kind == "browser" and c.browser_path),
                LLMConfig(name="selftest"))
    with tempfile.TemporaryDirectory(prefix="verifybot-selftest-") as tmp, \
            SelftestSite() as site:
        cfg = LLMConfig(name=mine.name, kind="browser", site=str(site_file()), url=site.url,
                        headless=True, browser_path=mine.browser_path, answer_timeout=60,
                        profile_dir=str(Path(tmp) / "profile"))
        return await _selftest(cfg, Path(tmp) / "workspace", say,
                               "VerifyBot's own page, offline (headless", offline=True)


async def _selftest(cfg: LLMConfig, ws: Path, say: Say, title: str, *,
                    offline: bool = False) -> int:
    from verifybot_tui.llm.browser import BrowserLLM

    steps = _Steps(say)
    if offline:
        steps.passed = ("selftest passed: this installation's bridge works (log in with "
                        "`verifybot login`; then `verifybot selftest` checks the chat site)")
    llm = BrowserLLM(cfg, ws, answer_timeout=cfg.answer_timeout)
    say(f"selftest of {title}, {llm.new_chat_url()})")
    try:
        answer = await _bridge_steps(llm, steps)
    except VerifyBotError as e:
        steps.failed_now(str(e))
        return e.exit_code if e.exit_code else EXIT_LLM
    finally:
        await llm.close()
    return await _program_steps(answer.markdown, ws, steps, say)


async def _bridge_steps(llm: Any, steps: _Steps) -> Any:
    """Open, send + answer, copy capture, DOM fallback compared with the copy."""
    t0 = steps.begin("open")
    await llm.start()
    steps.line(True, "open", _ms(t0), f"renderer {llm.renderer or '?'}")
    t0 = steps.begin("send + answer")
    first: list[float] = []
    answer = await llm.ask(PROMPT, lambda _t: first or first.append(_ms(t0)))
    steps.line(True, "send + answer", _ms(t0),
               f"first text after {first[0]:.0f} ms; {len(answer.markdown)} characters"
               if first else f"{len(answer.markdown)} characters")
    t0 = steps.begin("copy capture")
    copied = await llm._eval("t => window.__vb.copyAnswer(t)", 2000)
    ok_copy = isinstance(copied, str) and bool(copied.strip())
    steps.line(ok_copy, "copy capture", _ms(t0),
               f"{len(copied)} characters" if ok_copy else
               "the copy button gave nothing (copy_button selectors, or the clipboard)")
    t0 = steps.begin("DOM fallback")
    dom: Any = await llm._eval("t => window.__vb.answerMarkdown(t)", 15000)
    md = dom.get("markdown") if isinstance(dom, dict) else None
    if md is None or dom.get("incomplete"):
        steps.line(False, "DOM fallback", _ms(t0), "could not read the answer from the page")
    elif ok_copy and md != copied:
        at = _first_difference(md, copied)
        steps.line(False, "DOM fallback", _ms(t0),
                   f"differs from the copy at character {at} ({md[at:at + 30]!r} vs "
                   f"{copied[at:at + 30]!r})")
    else:
        steps.line(True, "DOM fallback", _ms(t0),
                   "same as the copy" if ok_copy else f"{len(md)} characters")
    return answer


async def _program_steps(markdown: str, ws: Path, steps: _Steps, say: Say) -> int:
    """Extraction and a local run with the known output."""
    t0 = time.perf_counter()
    ex = extract(markdown)
    programs = ex.programs
    steps.line(len(programs) == 1, "extraction", _ms(t0),
               f"{len(programs)} program(s): "
               f"{', '.join(p.language for p in programs) or 'none'}")
    if len(programs) != 1:
        return EXIT_FAILED
    t0 = time.perf_counter()
    result = await _run_local(programs[0].code, programs[0].language, ws)
    out = result.stdout.strip()
    steps.line(result.exit_code == 0 and out == EXPECTED_OUTPUT, "local run", _ms(t0),
               f"exit {result.exit_code}, printed {out[:60]!r} (expected "
               f"{EXPECTED_OUTPUT!r})")
    say(steps.passed if not steps.failed else "selftest FAILED: see the step marked FAIL")
    return EXIT_FAILED if steps.failed else EXIT_SUCCESS


async def _run_local(code: str, language: str, ws: Path) -> Any:
    from verifybot_tui.core.base.ports import ProgramFile, RunRequest
    from verifybot_tui.targets.local.target import LocalTarget

    target = LocalTarget(TargetConfig(name="local", kind="local"), ws)
    await target.connect()
    try:
        name = "selftest.py"
        req = RunRequest(run_id=f"selftest_{int(time.time())}",
                         files=[ProgramFile(name, name, code, language)], entry=name,
                         language=language, timeout=30)
        return await target.run(req, lambda _s, _t: None)
    finally:
        await target.close()
