"""No function in the package is longer than 60 lines.

A function that does a whole conversation hides its steps; the loop is a
pipeline of small ones, and this keeps every module that way.
"""

from __future__ import annotations

import ast

from project import ROOT

PACKAGE = ROOT / "verifybot_tui"
LIMIT = 60


def _functions() -> list[tuple[str, int]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                length = node.end_lineno - node.lineno + 1
                found.append((f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}", length))
    return found


def test_the_check_sees_the_loop() -> None:
    names = [name for name, _ in _functions()]
    assert any(name.startswith("core/loop/verify_loop.py:") and name.endswith(" _attempt")
               for name in names)


def test_no_function_is_longer_than_60_lines() -> None:
    too_long = sorted((n, name) for name, n in _functions() if n > LIMIT)
    assert too_long == []
