"""Feedback quotes exactly (issue 29): what ran reaches the LLM byte for byte.

`plain()` turned ``**`` into ``*``, ``~~~`` into ``---`` and ``` into ''', so the LLM
was shown code that was not the code that failed. Text is now quoted in a fence
longer than any backtick run inside it, and otherwise left alone.
"""

from __future__ import annotations

import pytest

from verifybot_tui.core.base.chat_text import quoted, unquoted
from verifybot_tui.core.base.ports import RunResult
from verifybot_tui.core.loop.prompts import edit_note, feedback_prompt

TRICKY = [
    "    total = sum(v**2 for v in values)\n                ~^^~",
    "  File \"m.py\", line 3\n    x = a[0] ** b\n        ~~~~~^^~~",
    "```python\nprint(1)\n```\nand ````four````",
    "# not a heading\n## nor this\n~~~\n^^^\n`code` and **bold** and __dunder__",
    "",
    "``` at the end ```",
]


@pytest.mark.parametrize("text", TRICKY)
def test_quoted_text_is_the_text_byte_for_byte(text: str) -> None:
    block = quoted(text)
    assert unquoted(block) == text
    fence = block.split("\n", 1)[0].removesuffix("text")
    assert set(fence) == {"`"} and len(fence) >= 3
    assert all(not line.startswith(fence) for line in text.split("\n"))


@pytest.mark.parametrize("text", TRICKY[:4])
def test_the_feedback_prompt_keeps_output_and_errors_exactly(text: str) -> None:
    result = RunResult(exit_code=1, stdout=text, stderr=text + "\nError", duration=0.1)
    prompt = feedback_prompt(result, "it failed", attempt=1, max_attempts=3)
    assert quoted(text) in prompt and quoted(text + "\nError") in prompt


def test_a_hand_edit_is_quoted_exactly() -> None:
    from verifybot_tui.core.base.ports import ProgramFile
    before = [ProgramFile("m.py", "m_1.py", "x = 2*3\n", "python")]
    after = [ProgramFile("m.py", "m_2.py", "x = 2**3  # **bold**\n", "python")]
    note = edit_note(before, after)
    assert "+x = 2**3  # **bold**" in note and "-x = 2*3" in note
