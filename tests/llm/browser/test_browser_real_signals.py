"""The driver's newer signals on pages saved from the real chatgpt.com and claude.ai
(../shared).

The model that answered is read where the real page shows it: the legacy page's
answer carries data-message-model-slug; the app-shell capture's picker shows a
reasoning level, not a model, so its model is unknown (never the level's words);
Claude's picker names the model, with its grey mode or effort ("Extended", "Max")
left out.
A finished real answer is never taken for a failed one with a Retry button, and an
empty composer reads as empty (the proof that a prompt went depends on it).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from shared_data import REFERENCE

from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.browser.chromium import find_browser, launch_args
from verifybot_tui.llm.browser.page_script import init_script
from verifybot_tui.llm.browser.saved_page import strip_scripts
from verifybot_tui.llm.browser.site_profile import load_site_profile

pytestmark = [pytest.mark.browser, pytest.mark.needs_shared, pytest.mark.timeout(120),
              pytest.mark.asyncio(loop_scope="module")]

PAGES = REFERENCE / "real-pages"
EXPECTED = {  # page -> (renderer, model the page names for its last answer)
    "chatgpt-legacy/code-heavy.html": ("legacy", "gpt-5-6-thinking"),
    "chatgpt-legacy/short.html": ("legacy", "gpt-5-6-thinking"),
    "chatgpt-legacy/empty.html": ("legacy", ""),
    "chatgpt-app-shell/attachment.html": ("app_shell", ""),
    "claude/tochi-claude.html": ("claude_2026", "Sonnet 4.5"),
    "claude/ylce-claude-001.html": ("claude_2026", "Fable 5"),
    "claude/ylce-claude-2025-code.html": ("claude_2026", ""),  # no picker in the fragment
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Any]:
    """One headless Chromium for the module (a launch costs seconds); each page is read
    in a fresh context of its own."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(
            executable_path=find_browser(LLMConfig(name="t")), headless=True,
            args=launch_args())
        try:
            yield chromium
        finally:
            await chromium.close()


async def snapshot(browser: Any, name: str) -> dict[str, Any]:
    html = strip_scripts((PAGES / name).read_text(encoding="utf-8"))
    site = name.split("-")[0].split("/")[0]
    profile = load_site_profile(site)
    context = await browser.new_context()
    try:
        page = await context.new_page()

        async def serve(route: Any) -> None:
            if route.request.is_navigation_request():
                await route.fulfill(status=200, body=html, headers={
                    "Content-Type": "text/html; charset=utf-8",
                    "Content-Security-Policy": "script-src 'none'"})
            else:
                await route.abort()

        await page.route("**/*", serve)
        await page.goto("https://chatgpt.com/" if site == "chatgpt" else "https://claude.ai/",
                        wait_until="domcontentloaded")
        await page.evaluate(init_script(profile))
        return await page.evaluate("() => window.__vb.snapshot()")
    finally:
        await context.close()


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_model_retry_and_composer_on_the_real_pages(browser: Any, name: str) -> None:
    renderer, model = EXPECTED[name]
    snap = await snapshot(browser, name)
    assert snap["renderer"] == renderer
    assert snap["model"] == model
    assert snap["retry"] == "" and snap["turnError"] == ""
    assert snap["boxLen"] == 0
    if model:
        assert snap["finished"] and not snap["busy"]
