"""The local chat site and BrowserLLMs pointed at it, for the browser tests.

One site server per test session (tests set its scenario with configure());
one browser per test module and chatgpt renderer through the module-scoped
`site_llm`, since a Chromium launch costs about a second. chatgpt.com serves
two pages at once, so every test on `site_llm` (or asking for `renderer`) runs
on the legacy page and on the app-shell page. Modules that use it run their tests on
the module's event loop: `pytestmark = pytest.mark.asyncio(loop_scope="module")`.
Import the fixtures with ``from browser_fixtures import *  # noqa: F403``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import tomli_w
from chatsite import ChatSite

from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser import BrowserLLM
from verifybot_tui.llm.browser.chromium import profile_dir, read_lock

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

__all__ = ["CHROMIUM", "RENDERERS", "chatsite", "renderer", "site_llm", "claude", "site_config",
           "site_config_file", "open_llm", "with_settings", "kill_browser",
           "finished_when_returned"]

RENDERERS = ["legacy", "app_shell"]


def site_config(chat: ChatSite, profile: Path, variant: str = "chatgpt",
                name: str = "site", **over: Any) -> LLMConfig:
    """An [llm.NAME] table pointing at the test site, headless on the system Chromium."""
    url = chat.claude_url if variant == "claude" else chat.url
    fields: dict[str, Any] = {"name": name, "kind": "browser", "site": variant, "url": url,
                              "headless": True, "browser_path": CHROMIUM,
                              "profile_dir": str(profile)}
    return LLMConfig(**{**fields, **over})


def site_config_file(tmp_path: Path, url: str, *, site: str = "chatgpt", name: str = "site",
                     head: str = "", **extra: Any) -> Path:
    """tmp_path/config.toml: ``head`` (tables before it), then [llm.NAME] for the test
    site at ``url``, headless on the system Chromium, its profile under tmp_path."""
    table = {"kind": "browser", "site": site, "url": url, "headless": True,
             "browser_path": CHROMIUM, "profile_dir": str(tmp_path / "profile"), **extra}
    path = tmp_path / "config.toml"
    path.write_text(head + tomli_w.dumps({"llm": {name: table}}))
    return path


@asynccontextmanager
async def open_llm(site: ChatSite, tmp: Path, variant: str = "chatgpt", *, start: bool = True,
                   settings: dict[str, Any] | None = None,
                   **kw: Any) -> AsyncIterator[BrowserLLM]:
    """A BrowserLLM of its own (its own profile under tmp), closed afterwards.

    ``settings`` are [llm.NAME] fields over site_config's; ``kw`` go to BrowserLLM.
    With ``start=False`` the first ask starts the browser, as in a real run.
    """
    kw.setdefault("answer_timeout", 30)
    kw.setdefault("page_timeout", 15)
    config = site_config(site, tmp / f"profile-{variant}", variant, **(settings or {}))
    llm = BrowserLLM(config, tmp / "ws", **kw)
    try:
        if start:
            await llm.start()
        yield llm
    finally:
        await llm.close()


@contextmanager
def with_settings(llm: BrowserLLM, **fields: Any) -> Iterator[None]:
    """[llm.NAME] keys the driver reads at each prompt or new chat (send_timeout,
    auto_retry, auto_continue, regenerate_on_error, temporary, model) set on a running
    browser for what is done inside, then put back: a test needing one of them can use
    its module's browser, where a launch of its own costs seconds. Keys read at start
    (site, profile_dir, headless, browser_path) need a browser of their own."""
    default = llm.config
    llm.config = replace(default, **fields)
    try:
        yield
    finally:
        llm.config = default


def kill_browser(llm: BrowserLLM) -> int:
    """SIGKILL the browser as a crash would (its pid from the profile's SingletonLock)."""
    owner = read_lock(profile_dir(llm.config))
    assert owner is not None and owner.pid > 0, "no SingletonLock: is the browser running?"
    os.kill(owner.pid, signal.SIGKILL)
    return owner.pid


async def finished_when_returned(llm: BrowserLLM, site: ChatSite, before: int) -> bool:
    """Whether the page had shown its finish when ask() returned: call it right after.

    The page records the moment it finishes and POSTs it to the site then; the answer
    can come back before that request reaches the server, so the server's count is no
    proof either way. The page's clock is read now and compared with that moment, on
    the page's own clock: an answer returned early reads a time before the finish.
    """
    returned = await llm.page.evaluate("performance.timeOrigin + performance.now()")
    deadline = time.monotonic() + 10
    while len(site.finishes) <= before:
        if time.monotonic() > deadline:
            return False  # the page never finished
        await asyncio.sleep(0.01)
    return bool(site.finishes[before]["t"] <= returned)


@pytest.fixture(scope="session")
def chatsite() -> Iterator[ChatSite]:
    site = ChatSite().start()
    yield site
    site.stop()


@pytest.fixture(scope="module", params=RENDERERS)
def renderer(request: pytest.FixtureRequest, chatsite: ChatSite) -> Iterator[str]:
    """The chatgpt page the site serves (configure() uses it unless told otherwise)."""
    chatsite.renderer = request.param
    yield request.param
    chatsite.renderer = "legacy"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def site_llm(chatsite: ChatSite, renderer: str,
                   tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserLLM]:
    """One browser for the module; each test calls configure() then new_chat()."""
    chatsite.configure("answer")
    async with open_llm(chatsite, tmp_path_factory.mktemp("browser")) as llm:
        yield llm


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def claude(chatsite: ChatSite,
                 tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserLLM]:
    """One claude browser for the module (a launch costs seconds): each test sets its
    layout and scenario, then opens a new chat, as a user does."""
    chatsite.configure("answer")
    async with open_llm(chatsite, tmp_path_factory.mktemp("claude"), "claude") as llm:
        yield llm
