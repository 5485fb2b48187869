"""Reading back what a session wrote: a test's view of a raw_md transcript."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def read_record(path: Path) -> dict[str, Any] | None:
    """The JSON run record at the end of a transcript, if it got that far."""
    text = path.read_text(encoding="utf-8", errors="replace")
    idx = text.rfind("\n## Run record\n")
    if idx < 0:
        return None
    m = re.search(r"(`{3,})json\n(.*?)\n\1", text[idx:], re.S)
    return json.loads(m.group(2)) if m else None
