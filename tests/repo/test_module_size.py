"""No module of the package, and no test file, is longer than 600 lines.

600 lines is about what one can hold in mind while changing a module; past it the
module holds two or three things that want names of their own (the browser's
observer script counts too: it is code we read and change like the rest).
"""

from __future__ import annotations

from project import PACKAGE, ROOT

LIMIT = 600


def _lengths(folder, *patterns: str) -> dict[str, int]:
    return {str(p.relative_to(ROOT)): len(p.read_text("utf-8").splitlines())
            for pattern in patterns for p in folder.rglob(pattern)
            if "__pycache__" not in p.parts}


def test_the_check_sees_the_modules_and_the_script() -> None:
    seen = _lengths(PACKAGE, "*.py", "*.js")
    assert "verifybot_tui/core/loop/verify_loop.py" in seen
    assert any(name.endswith(".js") for name in seen)


def test_no_module_is_longer_than_600_lines() -> None:
    long = {name: n for name, n in _lengths(PACKAGE, "*.py", "*.js").items() if n > LIMIT}
    assert long == {}


def test_no_test_file_is_longer_than_600_lines() -> None:
    long = {name: n for name, n in _lengths(ROOT / "tests", "*.py").items() if n > LIMIT}
    assert long == {}
