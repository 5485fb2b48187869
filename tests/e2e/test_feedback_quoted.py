"""Feedback quotes what ran, byte for byte (issue 29), through the test chat site.

`plain()` used to turn ``**`` into ``*`` and ``~~~`` into ``---``: the LLM was told
``sum(v*2 for v in values)`` failed, and every Python 3.11+ traceback's markers
changed. Here a failing ``sum(v**2 ...)`` program runs through `verifybot run
--verbose` against the test chat site: the feedback the CLI shows holds the code and
the traceback's ``~`` and ``^`` markers as the program printed them, and the site's
record of what the page received equals that prompt byte for byte.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import site_config_file
from chatsite import SCENARIOS, ChatSite, Reply, Scenario
from project import verifybot_cmd

from verifybot_tui.core.base.chat_text import quoted

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]

SQUARES = '''Here is the sum of squares:

```python
values = [1, 2, "3", 4]
total = sum(v**2 for v in values)
print(f"**total**: {total}")
```'''

FIXED = '''The list held a string; fixed:

```python
values = [1, 2, 3, 4]
total = sum(v**2 for v in values)
print(f"**total**: {total}")
```'''


def _verbose_prompts(stderr: str) -> list[str]:
    """The prompts --verbose printed: the lines behind the bar, between its markers."""
    out: list[str] = []
    for m in re.finditer(r"the \w+ prompt as sent \(attempt \d+\):\n(.*?)\n\[verifybot\] end "
                         r"of the prompt", stderr, re.S):
        out.append("\n".join(line.removeprefix("│ ") for line in m.group(1).split("\n")))
    return out


def test_the_feedback_quotes_the_failing_code_and_its_traceback_exactly(
        chatsite: ChatSite, tmp_path: Path) -> None:
    SCENARIOS["squares"] = Scenario([Reply(SQUARES), Reply(FIXED)])
    chatsite.configure("squares")
    before = len(chatsite.prompts)
    config = site_config_file(tmp_path, chatsite.url)
    ws = tmp_path / "ws"
    proc = subprocess.run(
        [*verifybot_cmd(), "run", "Print the sum of squares", "--llm", "site",
         "--target", "local", "--yes", "--workspace", str(ws), "--config", str(config),
         "--judge", "off", "--verbose"],
        cwd=tmp_path, capture_output=True, text=True, timeout=150,
        env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "**total**: 30" in proc.stdout

    received = [p.text for p in chatsite.prompts[before:]]
    assert len(received) == 2
    feedback = received[1]
    # What the program wrote to stderr, from the run's own record, is in the prompt as is.
    traceback = feedback.split("Errors (stderr):\n", 1)[1]
    assert "    total = sum(v**2 for v in values)\n" in traceback
    assert re.search(r"\n +~*\^+~*\n", traceback), traceback  # the 3.11+ markers
    assert "TypeError: unsupported operand type(s) for ** or pow(): 'str' and 'int'" in traceback
    assert "sum(v*2" not in feedback and "---" not in traceback
    stderr_run = (ws / "outputs").glob("*_1.txt")
    recorded = next(stderr_run).read_text(encoding="utf-8")
    for line in traceback.split("\n"):
        if "~" in line or "**" in line:
            assert line in recorded, line  # the markers as the program printed them
    assert quoted(traceback.split("\n```\n", 1)[0].split("\n", 1)[1]) in feedback

    # --verbose shows that feedback exactly as the page received it.
    shown = _verbose_prompts(proc.stderr)
    assert len(shown) == 2
    assert shown[1] == feedback
    assert shown[0] == received[0]
