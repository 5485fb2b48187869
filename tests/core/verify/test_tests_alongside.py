"""Which test files run under pytest and which as a plain script (core.verify.tests_alongside)."""

from __future__ import annotations

import pytest

from verifybot_tui.core.base.ports import ProgramFile
from verifybot_tui.core.verify import tests_alongside


def a_test_file(content: str) -> ProgramFile:
    return ProgramFile("test_main.py", "test_main_1.py", content, "python")


@pytest.mark.parametrize("content, pytest_style", [
    ("import pytest\n\ndef test_a():\n    assert 1\n", True),
    ("from pytest import approx\nassert 0.1 + 0.2 == approx(0.3)\n", True),
    ("from main import f\n\n\ndef test_f():\n    assert f() == 1\n", True),
    ("async def test_f():\n    assert True\n", True),
    ("# plain asserts, no pytest needed\nfrom main import f\nassert f() == 1\n", False),
    ("def check_f():\n    assert True\n\ncheck_f()\n", False),
])
def test_pytest_style_is_told_from_plain_asserts(content: str, pytest_style: bool) -> None:
    t = a_test_file(content)
    assert tests_alongside.uses_pytest(t) is pytest_style
    main = ProgramFile("main.py", "main_1.py", "def f():\n    return 1\n", "python")
    files, entry = tests_alongside.runnable([main, t], t)
    if pytest_style:
        assert entry == tests_alongside.RUNNER and files[-1].name == entry
        assert "'--confcutdir', '.', 'test_main.py'" in files[-1].content
    else:
        assert (files, entry) == ([main, t], "test_main.py")
