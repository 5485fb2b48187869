"""`verifybot doctor --page FILE.html`: what the driver reads from a saved chat page, offline.

A user whose run failed attaches a page (the browser's "Save page as", or the
evidence HTML VerifyBot saved in runs/log/); a site profile is fixed from what
this reports. The page is loaded in Chromium under the site's own address
(route interception: the URL is the site's, but every request is answered here
and nothing goes to the network), with the page's own scripts off (stripped, and
a Content-Security-Policy that runs none), and the driver's page script put in.
It reports the renderer that claims the page, the page state, every signal of
the finished state HIT or MISS, whether the assistant's own copy button is
there, and the last answer as markdown read from the DOM (the copy button
needs the page's scripts, which a saved page does not run).

A saved page is someone else's file: it is refused over a size cap, nothing it
names is fetched (its frames included: besides the interception, host names
resolve to nothing and every connection goes to a closed local port), and its
text is printed with escape sequences shown escaped, in --json too.
"""

from __future__ import annotations

import asyncio
import re
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import async_playwright

from verifybot_tui.core.base.ansi import visible
from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.settings.config import DEFAULT_LLMS, LLMConfig
from verifybot_tui.llm.browser.chromium import find_browser, launch_args
from verifybot_tui.llm.browser.page_script import init_script
from verifybot_tui.llm.browser.pagestate import classify
from verifybot_tui.llm.browser.site_profile import SiteProfile, load_site_profile

# The signals of a finished answer, and which need a conversation on the page.
FINISHED_SIGNALS = ("prompt_box", "user_turn", "user_message", "assistant_turn",
                    "assistant_message", "action_row", "finished_markers", "copy_button")
_USER_SIGNALS = {"user_turn", "user_message"}
_NEEDS_TURNS = {"user_turn", "user_message", "assistant_turn", "assistant_message",
                "action_row", "finished_markers", "copy_button"}
_SCRIPT = re.compile(r"<script\b[^>]*>.*?</script\s*>|<script\b[^>]*/>", re.I | re.S)
_FALLBACK_URL = "https://chat.invalid/"


@dataclass
class PageReport:
    """What `doctor --page` prints (its --json object is exactly `as_json()`)."""

    renderer: str | None
    state: str
    finished: bool
    copy_button: bool
    signals: dict[str, str] = field(default_factory=dict)  # name -> HIT / MISS / not testable
    answer: str | None = None
    selectors: dict[str, str] = field(default_factory=dict)  # name -> what matched (text form)
    url: str = ""
    language: str = ""

    def as_json(self) -> dict[str, Any]:
        """Every text from the page shown escaped (an escape sequence in a saved page
        must not act on the terminal of whoever reads the JSON with cat)."""
        return {"renderer": self.renderer, "state": self.state, "finished": self.finished,
                "copy_button": self.copy_button, "signals": self.signals,
                "answer": None if self.answer is None else visible(self.answer)}


def site_url(profile: SiteProfile) -> str:
    """The address the saved page is shown under: the built-in site's own."""
    known = DEFAULT_LLMS.get(profile.name)
    return known.url if known else _FALLBACK_URL


def strip_scripts(html: str) -> str:
    return _SCRIPT.sub("", html)


# A saved chat page is a few hundred KB (a long chat's evidence file a few MB);
# a bigger file is not a chat page, and reading it would tie up the browser.
MAX_PAGE_BYTES = 24 * 1024 * 1024
# What a saved page may load: nothing but itself (no script, no frame, no fetch,
# no font, no image from anywhere; inline styles only, so the layout is the page's).
_CSP = ("default-src 'none'; script-src 'none'; frame-src 'none'; child-src 'none'; "
        "connect-src 'none'; img-src data:; font-src data:; style-src 'unsafe-inline'; "
        "form-action 'none'; base-uri 'none'")


def read_saved_page(path: Path) -> str:
    """The page's HTML with its scripts stripped, or an error that says what to give."""
    try:
        size = path.stat().st_size
        if size > MAX_PAGE_BYTES:
            raise LLMError(f"The saved page {path} is {size / 1048576:.1f} MB; a chat page is "
                           f"at most {MAX_PAGE_BYTES // 1048576} MB here. Give the page of one "
                           f"conversation (the browser's \"Save page as\", HTML only, or an "
                           f"evidence file from runs/log/).")
        with path.open("rb") as f:
            data = f.read(MAX_PAGE_BYTES + 1)
    except OSError as e:
        raise LLMError(f"Cannot read the saved page {path}: {e.strerror or e}. Give the path "
                       f"of an .html file (the browser's \"Save page as\", or an evidence "
                       f"file from runs/log/).") from None
    if len(data) > MAX_PAGE_BYTES:  # grew while read
        raise LLMError(f"The saved page {path} is over {MAX_PAGE_BYTES // 1048576} MB.")
    return strip_scripts(data.decode("utf-8", errors="replace"))


def offline_args(dead_port: int) -> list[str]:
    """Chromium flags that leave it no way out: every host name resolves to nothing, and
    every connection (loopback included) goes to a proxy that is a closed local port,
    so a request that slips past the route interception (a frame, a preconnect hint,
    a prefetch) fails before it leaves the machine."""
    return ["--host-resolver-rules=MAP * ~NOTFOUND",
            f"--proxy-server=http://127.0.0.1:{dead_port}", "--proxy-bypass-list=<-loopback>",
            "--disable-background-networking", "--dns-prefetch-disable", "--no-pings"]


def _dead_port() -> int:
    """A loopback port bound by this process and never listened on: a connection to it
    is refused, and no other program can take it while we hold it."""
    global _DEAD_SOCKET
    if _DEAD_SOCKET is None:
        _DEAD_SOCKET = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        _DEAD_SOCKET.bind(("127.0.0.1", 0))
    return int(_DEAD_SOCKET.getsockname()[1])


_DEAD_SOCKET: socket.socket | None = None


class SavedPage:
    """A saved page open offline in a browser context of its own; ``open(profile)``
    shows it again, in a new tab, with another profile's page script in it."""

    def __init__(self, context: Any, url: str, path: Path) -> None:
        self.context = context
        self.url = url
        self.path = path
        self.page: Any = None

    async def open(self, profile: SiteProfile, *, keep: bool = True) -> Any:
        """A new tab; with keep=False a trial tab (its caller closes it) that leaves
        ``page`` the one being repaired."""
        page = await self.context.new_page()
        await page.goto(self.url, wait_until="domcontentloaded", timeout=30_000)
        await page.evaluate(init_script(profile))
        if keep:
            self.page = page
        return page


@asynccontextmanager
async def saved_page(path: Path, profile: SiteProfile, *,
                     browser_path: str = "") -> AsyncIterator[SavedPage]:
    """The saved page open offline under the site's address, the driver's page
    script in it. Every request but the page itself is refused."""
    html = read_saved_page(path)
    url = site_url(profile)
    executable = find_browser(LLMConfig(name="doctor", browser_path=browser_path))
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=executable, headless=True,
                                           args=launch_args() + offline_args(_dead_port()))
        try:
            context = await browser.new_context(service_workers="block",
                                                viewport={"width": 1280, "height": 900})

            async def answer(route: Any) -> None:
                req = route.request
                if req.is_navigation_request() and req.frame.parent_frame is None:
                    await route.fulfill(status=200, body=html, headers={
                        "Content-Type": "text/html; charset=utf-8",
                        "Content-Security-Policy": _CSP})
                else:
                    await route.abort()  # nothing of a saved page goes to the network

            await context.route("**/*", answer)
            shown = SavedPage(context, url, path)
            await shown.open(profile)
            yield shown
        except PlaywrightError as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise LLMError(f"The browser could not show the saved page {path}: {first}") \
                from None
        finally:
            await browser.close()


# How a saved page tells which site it came from: the address the browser wrote into
# it ("Save page as" adds a `saved from url=` comment; a canonical link), else the
# markup only that site has (as attributes, so a code block quoting them does not count).
_SITE_HOSTS = {"claude": ("claude.ai",), "chatgpt": ("chatgpt.com", "chat.openai.com")}
_SITE_MARKS = {
    "claude": (r'data-theme=["\']?claude\b', r"\bdata-is-streaming=",
               r"\bfont-claude-(?:response|message)\b",
               r'data-cds=["\'](?:AssistantMessage|UserMessage|ModelSelector)["\']',
               r'data-testid=["\']chat-input["\']'),
    "chatgpt": (r"\bdata-message-author-role=", r"\bdata-turn-key=", r"\bdata-app-shell-frame=",
                r'id=["\']prompt-textarea["\']', r"\bdata-chatgpt-composer\b",
                r'data-testid=["\']conversation-turn-'),
}
_SAVED_FROM = re.compile(r"<!--\s*saved from url=\(\d+\)\s*(\S+?)\s*-->"
                         r"|<link[^>]+rel=[\"']canonical[\"'][^>]*href=[\"']([^\"']+)"
                         r"|<meta[^>]+property=[\"']og:url[\"'][^>]*content=[\"']([^\"']+)", re.I)


def page_site(html: str) -> tuple[str, str] | None:
    """(the built-in site a saved page came from, how that was told), or None."""
    for m in _SAVED_FROM.finditer(html[:200_000]):
        url = next(g for g in m.groups() if g)
        host = re.sub(r"^[a-z]+://", "", url.lower()).split("/")[0].split(":")[0]
        for site, hosts in _SITE_HOSTS.items():
            if any(host == h or host.endswith("." + h) for h in hosts):
                return site, f"saved from {host}"
    found = {site: [p for p in marks if re.search(p, html)] for site, marks in _SITE_MARKS.items()}
    ranked = sorted(found.items(), key=lambda kv: -len(kv[1]))
    if ranked[0][1] and len(ranked[0][1]) > len(ranked[1][1]):
        site, hits = ranked[0]
        return site, f"its {site} markup ({len(hits)} of the site's markers)"
    return None


def fit_site(path: Path, site: str) -> tuple[str, str]:
    """The site to read a saved page as, and a line when it is not the one given: a page
    of the other built-in site is read as that site's (with the --site to give)."""
    if site not in _SITE_HOSTS:
        return site, ""  # the user's own profile file: theirs to choose
    try:
        found = page_site(read_saved_page(path))
    except LLMError:
        return site, ""  # the read that follows says what is wrong with the file
    if found is None or found[0] == site:
        return site, ""
    return found[0], (f"site     {found[0]}: the page is {found[0]}'s ({found[1]}), not "
                      f"{site}'s; read as {found[0]} (name it with --site {found[0]})")


async def inspect_page(path: Path, site: str = "chatgpt", *,
                       browser_path: str = "") -> PageReport:
    """Load the saved page offline and read it as the driver would."""
    profile = load_site_profile(site)
    async with saved_page(path, profile, browser_path=browser_path) as shown:
        return await read_report(shown.page, profile, shown.url)


async def read_report(page: Any, profile: SiteProfile, url: str) -> PageReport:
    """What doctor --page reports of the open page."""
    snap = await asyncio.wait_for(page.evaluate("() => window.__vb.snapshot()"), 30)
    probe = await asyncio.wait_for(page.evaluate("() => window.__vb.probe()"), 30)
    renderer = probe["renderer"] or None
    verdict = classify(snap["facts"], profile)
    # No renderer claims the page: nothing the driver would decide by is read from
    # it, so there is no "finished" and no copy button to report.
    report = PageReport(renderer=renderer, state=verdict.state.value, url=url,
                        finished=bool(renderer) and bool(snap["answerId"]) and
                        snap["finished"] and not snap["busy"],
                        copy_button=bool(renderer) and bool(probe.get("copy")),
                        language=str(probe.get("lang") or ""))
    rend = profile.renderer(renderer) if renderer else None
    for key in FINISHED_SIGNALS:
        if rend is not None and not rend.sel(key):
            continue  # a signal this renderer does not use
        hit = probe["signals"].get(key, {"count": 0, "selector": ""})
        # A page of an answer alone (a fragment saved without the prompt): its user
        # signals cannot be tested, its answer's can.
        if rend is None or (key in _NEEDS_TURNS and not probe["users"] and (
                key in _USER_SIGNALS or not probe["answer"])):
            report.signals[key] = "not testable here"
            if rend is not None:
                report.selectors[key] = ("no conversation on the page" if not probe["answer"]
                                         else "no user message on the page")
        else:
            report.signals[key] = "HIT" if hit["count"] else "MISS"
            report.selectors[key] = hit["selector"]
    if probe["answer"]:
        got = await asyncio.wait_for(page.evaluate("t => window.__vb.answerMarkdown(t)", 15000),
                                     30)
        report.answer = got["markdown"] if got else None
    return report


def format_report(path: Path, report: PageReport) -> list[str]:
    """The lines `doctor --page` prints without --json, each safe for a terminal."""
    return [visible(line, newlines=False) for line in _lines(path, report)]


def _lines(path: Path, report: PageReport) -> list[str]:
    lines = [f"page     {path} (shown as {report.url}, scripts off, no network)",
             f"renderer {report.renderer or 'none: no renderer signature is on the page'}",
             f"state    {report.state}" + (f" (page language {report.language})"
                                           if report.language else "")]
    for key, result in report.signals.items():
        mark = {"HIT": "HIT ", "MISS": "MISS"}.get(result, "--  ")
        how = report.selectors.get(key, "")
        why = how or "no conversation on the page"
        lines.append(f"  {mark} {key}" + (f": {how}" if how and result == "HIT" else
                                          "" if result != "not testable here" else
                                          f": not testable here ({why})"))
    if report.renderer is None:
        lines.append("finished --; assistant's copy button --: no renderer claims the page, "
                     "so nothing is read as the driver would read it")
    else:
        lines.append(f"finished {'yes' if report.finished else 'no'}; assistant's copy button "
                     f"{'found' if report.copy_button else 'not found'}")
    if report.answer is None:
        lines.append("answer   none on the page")
    else:
        lines.append("answer   (markdown read from the page):")
        lines += report.answer.splitlines() or [""]
    return lines
