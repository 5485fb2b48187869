"""The whole loop through a chat site: `verifybot run` as a subprocess against the test site.

The first answer's program fails, its error goes back in the same
conversation, the second answer's program works: exit 0. Every prompt the
transcript says was sent must be what the site received, byte for byte, and
both must have gone to one conversation; version 2 on disk is the answer's
code byte for byte. On chatgpt's legacy page, its app-shell page, Claude's
2025-26 page and Claude's 2026-10 hub layout (each answer with a thinking row
whose words must stay out of the answer); the transcript names the renderer.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import site_config_file
from chatsite import SCENARIOS, ChatSite
from project import verifybot_cmd

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def sent_prompts(transcript: Path) -> list[str]:
    """The prompts as the transcript records them (each inside its own fence)."""
    text = transcript.read_text(encoding="utf-8")
    out = []
    for m in re.finditer(r"^## Prompt \d+ \([^)]*\)\n\n(`{3,})text\n", text, re.M):
        fence = m.group(1)
        end = text.index("\n" + fence + "\n", m.end() - 1)
        out.append(text[m.end():end + 1])
    return out


@pytest.mark.parametrize("page", ["legacy", "app_shell", "claude", "claude_hub"])
def test_a_failing_then_working_answer_through_the_site_exits_0(chatsite: ChatSite,
                                                                 tmp_path: Path,
                                                                 page: str) -> None:
    claude = page.startswith("claude")
    chatsite.configure("fix_loop", renderer="app_shell" if page == "app_shell" else "legacy",
                       claude_layout="hub" if page == "claude_hub" else "2025")
    before = len(chatsite.prompts)
    config = site_config_file(tmp_path, chatsite.claude_url if claude else chatsite.url,
                              site="claude" if claude else "chatgpt")
    ws = tmp_path / "ws"
    proc = subprocess.run(
        [*verifybot_cmd(), "run", "Print whether the config says ok", "--llm", "site",
         "--target", "local", "--yes", "--workspace", str(ws), "--config", str(config),
         "--judge", "off"],  # the same-chat judge has its own test (test_verify_browser)
        cwd=tmp_path, capture_output=True, text=True, timeout=150, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "JSONDecodeError" in proc.stderr  # the first version's failure, shown live
    assert "True" in proc.stdout  # the second version's output

    received = [p for p in chatsite.prompts[before:]]
    assert len(received) == 2
    assert received[0].conversation_id == received[1].conversation_id
    transcripts = sorted((ws / "raw_md").glob("*.md"))
    assert len(transcripts) == 1
    sent = sent_prompts(transcripts[0])
    assert len(sent) == 2
    for recorded, got in zip(sent, received, strict=True):
        # the transcript's fence ends the text with one newline of its own if it had none
        assert recorded == (got.text if got.text.endswith("\n") else got.text + "\n")
    assert "Print whether the config says ok" in received[0].text
    assert "JSONDecodeError" in received[1].text
    # version 2 is the second answer's code, byte for byte
    working = SCENARIOS["fix_loop"].replies[1].markdown
    code = working.split("```python\n", 1)[1].rsplit("```", 1)[0]
    v2 = sorted((ws / "programs").glob("*_2.py"))
    assert len(v2) == 1 and v2[0].read_text(encoding="utf-8") == code
    renderer = {"legacy": "legacy", "app_shell": "app_shell", "claude": "claude_2026",
                "claude_hub": "claude_hub"}[page]
    assert f"renderer {renderer}" in transcripts[0].read_text(encoding="utf-8")
    assert "THINKING:" not in transcripts[0].read_text(encoding="utf-8")


def test_a_temporary_chat_session_keeps_no_url_to_resume(chatsite: ChatSite,
                                                         tmp_path: Path) -> None:
    chatsite.configure("answer", renderer="app_shell")
    config = site_config_file(tmp_path, chatsite.url, temporary=True)
    ws = tmp_path / "ws"
    proc = subprocess.run(
        [*verifybot_cmd(), "run", "Say hello", "--llm", "site", "--target", "local", "--yes",
         "--workspace", str(ws), "--config", str(config), "--judge", "off"],
        cwd=tmp_path, capture_output=True, text=True, timeout=150, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert chatsite.prompts[-1].temporary is True
    with sqlite3.connect(ws / "history.db") as db:
        (url,) = db.execute("SELECT conversation_url FROM sessions").fetchone()
    assert url is None  # nothing to resume: the site will not reopen a temporary chat
