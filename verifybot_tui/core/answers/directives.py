"""The answer's own lines for VerifyBot: ``TIMEOUT: 30`` and ``DEPENDENCIES: requests``."""

from __future__ import annotations

import re
from collections.abc import Iterator

from verifybot_tui.core.answers.hints import shown_name
from verifybot_tui.core.answers.kinds import requirement_name

_TIMEOUT_RE = re.compile(
    r"TIMEOUT[*_`]*[ \t]*:[*_` \t]*(\d+(?:\.\d+)?)[ \t]*"
    r"(ms|s|secs?|seconds?|m|mins?|minutes?|h|hours?)?\b")
DEPS_RE = re.compile(r"DEPENDENCIES[*_`]*[ \t]*:[*_`]*(.*)$")
_NONE_WORDS = {"none", "no", "n/a", "na", "-", "nothing", "stdlib", "standard"}
_MARKUP_CHARS = " \t>*_#/;-+•|`"


def _lines_holding(text: str, word: str) -> Iterator[str]:
    """Each line of ``text`` that holds ``word``, once (no split of a 50 MB answer)."""
    at = 0
    while (i := text.find(word, at)) != -1:
        start = text.rfind("\n", 0, i) + 1
        end = text.find("\n", i)
        end = len(text) if end == -1 else end
        yield text[start:end]
        at = end + 1


def directive_lines(markdown: str, word: str) -> list[str]:
    """Lines that start (after list, quote, emphasis or comment marks) with ``word``.

    Done by stripping rather than one regex: a regex prefix such as ``[*_]*``
    followed by ``[*_`]*`` goes quadratic on a line of 20,000 asterisks.
    """
    found = []
    for line in _lines_holding(markdown, word):
        rest = line.lstrip(_MARKUP_CHARS)
        if rest.startswith("<!--"):
            rest = rest[4:].lstrip(_MARKUP_CHARS)
        if rest.startswith(word):
            found.append(rest)
    return found


def timeout_values(markdown: str) -> list[float]:
    """Every TIMEOUT the answer states, in seconds (units read: ms, s, min, h)."""
    values = []
    for line in directive_lines(markdown, "TIMEOUT"):
        m = _TIMEOUT_RE.match(line)
        if not m:
            continue
        value = float(m.group(1))
        unit = (m.group(2) or "s").lower()
        if unit == "ms":
            value /= 1000
        elif unit.startswith("m"):
            value *= 60
        elif unit.startswith("h"):
            value *= 3600
        if value > 0:
            values.append(value)
    return values


def declared_dependencies(markdown: str, notes: list[str]) -> list[str]:
    """The package names of the DEPENDENCIES lines; a token that is none is noted."""
    names: list[str] = []
    for line in directive_lines(markdown, "DEPENDENCIES"):
        m = DEPS_RE.match(line)
        if not m:
            continue
        rest = re.sub(r"\([^)]*\)", " ", m.group(1)).replace("`", " ").replace("*", " ")
        rest = re.sub(r"-->.*$", "", rest)
        tokens = [t for t in re.split(r"[,\s]+", rest) if t]
        if tokens[:2] in (["pip", "install"], ["pip3", "install"]):
            tokens = tokens[2:]
        if not tokens or tokens[0].lower().rstrip(".") in _NONE_WORDS:
            continue
        for token in tokens:
            if token.lower() in ("and", "&"):
                continue
            name = requirement_name(token)
            if name is None:
                notes.append(f"dependency '{shown_name(token)}' ignored: not a package name")
            elif name not in names:
                names.append(name)
    return names
