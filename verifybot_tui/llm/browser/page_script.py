"""The script every chat page gets: the site's selectors, then the script's parts in order.

The driver installs it (an init script, and on the pages already open);
`doctor --page` and the repair evaluate the same text on a saved page.
"""

from __future__ import annotations

import json
from pathlib import Path

from verifybot_tui.llm.browser.site_profile import SiteProfile

SCRIPTS = Path(__file__).parent


def script_part(name: str) -> str:
    """The text of one part of the page script (dom_markdown.js: the DOM->markdown converter)."""
    return (SCRIPTS / name).read_text(encoding="utf-8")


def init_script(profile: SiteProfile) -> str:
    """The page script: the site's selectors, the DOM->markdown converter, the observer."""
    return ("(() => {\nconst VB_CONFIG = " + json.dumps(profile.page_config()) + ";\n"
            + script_part("dom_markdown.js") + "\n" + script_part("observer.js") + "\n})();")
