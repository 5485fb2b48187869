"""What form a block's file takes: whole, or an edit of a file (SEARCH/REPLACE, a
diff, elisions), and the text it gives a file of its own when applied to nothing.

Read once per block by extract (``CodeBlock.how`` and ``content``); applied to a
project tree by tree_edits.
"""

from __future__ import annotations

import re

from verifybot_tui.core.answers.edits.elisions import has_elisions
from verifybot_tui.core.answers.edits.search_replace import apply_edit, has_markers, parse_edits
from verifybot_tui.core.answers.edits.udiff import apply_patch, looks_like_diff, parse_patches

# "Replace `parse()` in main.py with:", "update the `draw` method", "the new parse function"
_FUNCTION_PROSE_RE = re.compile(
    r"\b(?:replace|update|change|modify|fix|rewrite|swap)\w*\b[^.\n]{0,60}?"
    r"(?:`[\w.:$]+\(\)`|\b(?:function|method|class|constructor)\b)", re.I)


def edit_form(code: str, language: str) -> tuple[str, str | None, str]:
    """(how, content, path): the block's form, the file text it makes from nothing
    (None when it edits a file it does not hold), and the one file its edits name
    ("" when they name none, or several)."""
    if has_markers(code):
        edits, _ = parse_edits(code)
        paths = {e.path for e in edits}
        path = next(iter(paths)) if len(paths) == 1 else ""
        text: str | None = None
        for edit in edits:
            text, _why = apply_edit(text, edit, path or "the file")
            if text is None:
                break
        return "search-replace", (text if len(paths) == 1 else None), path
    if looks_like_diff(code, language):
        patches = parse_patches(code)
        if len(patches) == 1:
            made, _why = apply_patch(None, patches[0], patches[0].path or "the file")
            path = patches[0].path if patches[0].path != "/dev/null" else ""
            return "diff", made, path
        return "diff", None, ""
    if has_elisions(code, language):
        return "elided", code, ""  # on an empty tree there is nothing to merge it with
    return "whole", code, ""


def says_function(prose: str) -> bool:
    """Whether the prose before a block says it replaces a function, method or class."""
    return bool(_FUNCTION_PROSE_RE.search(prose))
