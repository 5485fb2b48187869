"""The browser backend: a chat site (ChatGPT, Claude...) driven by Playwright.

`BrowserLLM` answers prompts through the site's own page; `login` opens a
visible window once so the user logs in and the profile keeps the session.
"""

from verifybot_tui.llm.browser.driver import BrowserLLM
from verifybot_tui.llm.browser.login import login

__all__ = ["BrowserLLM", "login"]
