"""The README's first part as a newcomer follows it in a fresh shell (no venv active).

`verifybot` alone is "command not found" until the venv is active: the top says so
once, and the commands of the first two sections (install, the offline minute) are
written so they work as pasted. The offline minute comes right after the install.
"""

from __future__ import annotations

import re

from project import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.index("\n## ", start + 3)
    return README[start:end]


def shell_lines(text: str) -> list[str]:
    """The lines of the section's ```sh blocks, continuations joined."""
    blocks = re.findall(r"```sh\n(.*?)```", text, flags=re.S)
    return [line for block in blocks for line in block.replace("\\\n", " ").splitlines()
            if line.strip()]


def test_the_offline_minute_comes_right_after_the_install() -> None:
    headings = re.findall(r"^## (.+)$", README, flags=re.M)
    assert headings[:2] == ["Install and start", "The whole loop in one minute, offline"]


def test_the_top_says_once_how_verifybot_is_found_in_a_fresh_shell() -> None:
    install = section("Install and start")
    assert ". .venv/bin/activate" in install and "`.venv/bin/verifybot`" in install
    assert README.count(". .venv/bin/activate") == 1, "said once, at the top"


def test_the_first_commands_work_as_pasted_into_a_fresh_shell() -> None:
    lines = [*shell_lines(section("Install and start")),
             *shell_lines(section("The whole loop in one minute, offline"))]
    assert len(lines) >= 2, lines
    for line in lines:
        for command in re.split(r"&&|;", line):
            word = command.split()[0]
            assert word != "verifybot", f"bare verifybot (not found without the venv): {line}"
            if "verifybot" in word:
                assert word == ".venv/bin/verifybot", line
