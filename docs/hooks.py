"""MkDocs hooks for the guide (mkdocs.yml names this file; it is not a page of the site).

A table cell's code span writes a pipe as ``\\|`` so that GitHub, which splits a row at
every other pipe, shows these pages right; Python-Markdown keeps the backslash inside
code, so the built page would show ``chatgpt\\|claude``. The escape is taken out there.
"""

from __future__ import annotations

import re
from typing import Any

CODE = re.compile(r"<code>(.*?)</code>", flags=re.S)


def on_page_content(html: str, **_: Any) -> str:
    """The page's HTML with ``\\|`` read as ``|`` inside its code spans."""
    return CODE.sub(lambda m: "<code>" + m.group(1).replace("\\|", "|") + "</code>", html)
