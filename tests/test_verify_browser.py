"""The same-chat judge through the browser backend, against the local test chat site.

`verifybot run` (a subprocess, no --judge: same-chat is the default for browser LLMs)
sends the task, feeds back the first program's failure, and after the second program
passes asks for the judgement in the same conversation. The site receives it byte for
byte as the transcript records it, in plain text, and its PASS ends the session VERIFIED.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import *  # noqa: F403
from browser_fixtures import CHROMIUM
from chatsite import ChatSite
from chatsite.scenarios import FAILING, SCENARIOS, WORKING, Reply, Scenario
from conftest import verifybot_cmd
from test_browser_e2e import sent_prompts

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]


def test_the_same_chat_judge_gets_the_judgement_prompt_in_the_same_conversation(
        chatsite: ChatSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCENARIOS, "judge_pass",
                        Scenario([Reply(FAILING), Reply(WORKING), Reply("PASS")]))
    chatsite.configure("judge_pass")
    before = len(chatsite.prompts)
    config = tmp_path / "config.toml"
    config.write_text(f"""
[llm.site]
kind = "browser"
site = "chatgpt"
url = "{chatsite.url}"
headless = true
browser_path = "{CHROMIUM}"
profile_dir = "{tmp_path / 'profile'}"
""")
    ws = tmp_path / "ws"
    proc = subprocess.run(
        [*verifybot_cmd(), "run", "Print whether the config says ok", "--llm", "site",
         "--target", "local", "--yes", "--workspace", str(ws), "--config", str(config),
         "--expect", "contains:True", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=150, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "VERIFIED" and record["message"] == "the judge says PASS"
    assert record["attempts"][-1]["judgement"] == {"verdict": "PASS", "reason": "",
                                                   "judge": "same-chat"}

    received = chatsite.prompts[before:]
    assert len(received) == 3
    assert len({p.conversation_id for p in received}) == 1  # one conversation throughout
    (transcript,) = sorted((ws / "raw_md").glob("*.md"))
    assert "## Prompt 3 (judge)" in transcript.read_text()
    sent = sent_prompts(transcript)
    for recorded, got in zip(sent, received, strict=True):
        assert recorded == (got.text if got.text.endswith("\n") else got.text + "\n")
    judge = received[2].text
    assert judge.startswith("Please judge this run of the program: did it do the task?")
    assert "Task:\nPrint whether the config says ok" in judge
    assert '- the output contains "True" (seen: line 1: "True")' in judge
    assert "Output (stdout):\nTrue" in judge
    assert "Files: print_whether_the_config_says_ok.py (run)" in judge
    assert "```" not in judge and "**" not in judge  # plain text: nothing the box would format
