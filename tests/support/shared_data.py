"""Where the real inputs live: ../shared/reference beside the clone.

The real pages, answers and firmware are public projects' data that this
repository must not copy; CI always has ../shared beside its clone, a plain clone
may not. Tests that read them carry ``pytest.mark.needs_shared`` and take their
paths from here, so the suite can tell in one place whether they can run.
"""

from __future__ import annotations

from project import ROOT

SHARED = ROOT.parent / "shared"
REFERENCE = SHARED / "reference"


def available() -> bool:
    """Whether ../shared/reference is there to read."""
    return REFERENCE.is_dir()
