"""The page as observer.js last described it: the state every wait of the driver reads.

The page pushes a whole observation on each change (the answer's text as a
change to the last one); this is its Python side, one field per key it sends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class Observed:
    """The page as the observer last described it (one document at a time)."""

    doc: str = ""
    text_t: float = 0.0  # page clock (ms since the epoch) of the answer text's last change
    url: str = ""
    renderer: str = ""  # the site's page layout in use ("" : none matched)
    users: int = 0
    user_key: str = ""  # the last prompt's message id (or element), never a count
    user_text: str = ""
    user_rich: bool = False  # the prompt is shown rendered as markdown
    answer_id: int = 0
    answer_key: str = ""
    text: str = ""
    finished: bool = False
    busy: bool = False
    stop: bool = False
    activity: str = ""  # "Thinking", "Thought for 12s"...
    thinking: bool = False
    can_continue: bool = False
    turn_error: str = ""
    artifacts: bool = False
    box_len: int = 0  # characters in the prompt box (0: the composer is empty)
    model: str = ""  # the model the page names for the last answer (or its picker)
    effort: str = ""  # the effort / mode word the picker shows beside it ("Extended")
    retry: str = ""  # a failed answer's Retry button (its label), with turn_error
    facts: dict[str, Any] = field(default_factory=dict)

    def apply(self, st: dict[str, Any]) -> None:
        """Take one observation: each field from observer.js's camelCase key of its name
        (text_t <- textT); the answer text comes as a change: keep ``keep``, add ``add``."""
        for name, key in _OBSERVED_KEYS:
            setattr(self, name, st[key])
        if "userText" in st:  # sent only when the last prompt's bubble changed
            self.user_text = st["userText"]
        self.text = self.text[: st["keep"]] + st["add"]


# The fields every observation sets, with the key observer.js sends each under.
_OBSERVED_KEYS = tuple(
    (f.name, re.sub(r"_(\w)", lambda m: m.group(1).upper(), f.name))
    for f in fields(Observed) if f.name not in ("doc", "user_text", "text"))

