"""core/ is the loop both front ends share: it must never pull in Textual.

A headless ``verifybot run`` on a Pi-side box or in CI should not pay for (or
depend on) the TUI, and a stray import would make the layering a lie.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parent.parent / "verifybot_tui" / "core"
MODULES = sorted(
    ".".join(("verifybot_tui", *p.relative_to(CORE.parent).with_suffix("").parts))
    .removesuffix(".__init__")
    for p in CORE.rglob("*.py"))


def test_core_has_modules() -> None:
    assert "verifybot_tui.core.extract" in MODULES
    assert "verifybot_tui.core.verdict" in MODULES


@pytest.mark.parametrize("module", MODULES)
def test_importing_a_core_module_loads_no_textual(module: str) -> None:
    probe = (f"import sys, {module}\n"
             "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
             "print(','.join(bad))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=60, cwd=CORE.parent.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"{module} loads {out.stdout.strip()}"


def test_core_source_never_imports_textual() -> None:
    pattern = re.compile(r"^\s*(?:import\s+textual\b|from\s+textual\b)", re.M)
    offenders = [p.name for p in CORE.rglob("*.py") if pattern.search(p.read_text("utf-8"))]
    assert offenders == []
