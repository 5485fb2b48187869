"""The script every chat page gets: the site's selectors, then the script's parts in order.

The parts are plain JavaScript files beside this module, cut where the script
has seams (each under the house's 600 lines); together they run as one block,
in one scope, inside an IIFE after ``const VB_CONFIG = {...}``, and only in the
top window, once. The driver installs it (an init script, and on the pages
already open); `doctor --page` and the repair evaluate the same text on a saved
page.
"""

from __future__ import annotations

import json
from pathlib import Path

from verifybot_tui.llm.browser.site_profile import SiteProfile

SCRIPTS = Path(__file__).parent

# The DOM->markdown converter (vbDomToMarkdown), then the observer's parts, in this
# order: each may use what the parts before it declare (the last one starts it).
CONVERTER = "dom_markdown.js"
PARTS = ("page_renderer.js", "page_facts.js", "observer.js", "page_actions.js",
         "answer_markdown.js", "page_probe.js")


def script_part(name: str) -> str:
    """The text of one part of the page script (dom_markdown.js: the DOM->markdown converter)."""
    return (SCRIPTS / name).read_text(encoding="utf-8")


def init_script(profile: SiteProfile) -> str:
    """The page script: the site's selectors, the DOM->markdown converter, the observer
    (once, in the top window: not in the site's frames, not twice in one page)."""
    return ("(() => {\nconst VB_CONFIG = " + json.dumps(profile.page_config()) + ";\n"
            + script_part(CONVERTER) + "\n"
            + "if (window.top === window && !window.__vb) {\n"
            + "".join(script_part(name) + "\n" for name in PARTS) + "}\n})();")
