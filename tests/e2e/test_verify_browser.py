"""The same-chat judge through the browser backend, against the local test chat site.

`verifybot run` (a subprocess, no --judge: same-chat is the default for browser LLMs)
sends the task, feeds back the first program's failure, and after the second program
passes asks for the judgement in the same conversation. The site receives it byte for
byte as the transcript records it, the output quoted exactly, and its PASS ends the
session VERIFIED.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from browser_fixtures import site_config_file
from chatsite import ChatSite
from chatsite.scenarios import FAILING, SCENARIOS, WORKING, Reply, Scenario
from project import verifybot_cmd
from test_browser_e2e import sent_prompts

from verifybot_tui.core.base.chat_text import unquoted

pytestmark = [pytest.mark.browser, pytest.mark.timeout(180)]



def fenced_stdout(prompt: str) -> str:
    """The program's stdout as the judge prompt fences it (llm_judge._output)."""
    m = re.search(r"Output \(stdout\), between the lines (\S+)-BEGIN and \1-END[^\n]*\n"
                  r"\1-BEGIN\n(.*?)\n\1-END", prompt, flags=re.S)
    assert m, prompt
    return unquoted(m.group(2))  # quoted exactly, in a fence (issue 29)

def test_the_same_chat_judge_gets_the_judgement_prompt_in_the_same_conversation(
        chatsite: ChatSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCENARIOS, "judge_pass",
                        Scenario([Reply(FAILING), Reply(WORKING), Reply("PASS")]))
    chatsite.configure("judge_pass")
    before = len(chatsite.prompts)
    config = site_config_file(tmp_path, chatsite.url)
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
    assert fenced_stdout(judge) == "True"  # between marker lines the output cannot forge
    assert "Files: print_whether_the_config_says_ok.py (run)" in judge
    assert "**" not in judge  # nothing the box would format, but the output, quoted exactly


def test_a_separate_judge_opens_a_new_chat_for_each_judgement(
        chatsite: ChatSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SCENARIOS, "judge_fail", Scenario([Reply("FAIL: say which unit")]))
    chatsite.configure("judge_fail")
    before = len(chatsite.prompts)
    coder = tmp_path / "coder.md"
    coder.write_text("## Answer 1\n\n```python\nprint('42')\n```\n\n"
                     "## Answer 2\n\n```python\nprint('42 m')\n```\n")
    config = site_config_file(tmp_path, chatsite.url, name="judge",
                              head='[run]\njudge = "judge"\n\n')
    proc = subprocess.run(
        [*verifybot_cmd(), "run", "Print the height", "--llm", f"replay:{coder}",
         "--target", "local", "--yes", "--max-retries", "1", "--workspace",
         str(tmp_path / "ws"), "--config", str(config), "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=150, env=dict(os.environ))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "FAILED"
    assert [a["judgement"]["verdict"] for a in record["attempts"]] == ["FAIL", "FAIL"]
    received = chatsite.prompts[before:]
    assert len(received) == 2  # only the judgements went to the site: the coder is a replay
    assert received[0].conversation_id != received[1].conversation_id
    assert fenced_stdout(received[1].text).startswith("42 m")


@pytest.mark.parametrize("shape", ["english", "korean-dialog-enter-newline-hidden-routes"])
def test_the_whole_loop_on_pages_shaped_like_the_real_app_shell_page(
        chatsite: ChatSite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        shape: str) -> None:
    """Fail, feedback in the same chat, fix, the same-chat judge's PASS: VERIFIED, on
    the app-shell page as it is really served (no active-page marker on a direct load,
    the assistant's action row outside its unit); once in English, once in Korean with
    a "what's new" dialog open at load, Enter inserting a newline and 4 hidden earlier
    routes mounted (each with its own finished answer and a draft in its composer)."""
    monkeypatch.setitem(SCENARIOS, "judge_pass",
                        Scenario([Reply(FAILING), Reply(WORKING), Reply("PASS")]))
    korean = shape != "english"
    options = ({"lang": "ko", "dialog": "whats_new", "enter_newline": True,
                "hidden_route": True} if korean else {})
    chatsite.configure("judge_pass", renderer="app_shell", **options)
    before = len(chatsite.prompts)
    config = site_config_file(tmp_path, chatsite.url)
    ws = tmp_path / "ws"
    proc = subprocess.run(
        [*verifybot_cmd(), "run", "Print whether the config says ok", "--llm", "site",
         "--target", "local", "--yes", "--workspace", str(ws), "--config", str(config),
         "--expect", "contains:True", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=150, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout)
    assert record["status"] == "VERIFIED" and record["message"] == "the judge says PASS"
    assert record["attempts"][-1]["judgement"]["judge"] == "same-chat"

    received = chatsite.prompts[before:]
    assert len(received) == 3
    assert len({p.conversation_id for p in received}) == 1
    (transcript,) = sorted((ws / "raw_md").glob("*.md"))
    text = transcript.read_text(encoding="utf-8")
    sent = sent_prompts(transcript)
    assert len(sent) == 3
    for recorded, got in zip(sent, received, strict=True):
        assert recorded == (got.text if got.text.endswith("\n") else got.text + "\n")
    assert "JSONDecodeError" in received[1].text  # the failure went back in the same chat
    code = WORKING.split("```python\n", 1)[1].rsplit("```", 1)[0]
    (v2,) = sorted((ws / "programs").glob("*_2.py"))
    assert v2.read_text(encoding="utf-8") == code
    assert "(renderer app_shell)" in text
    closed = 'closed a dialog on the page: "ChatGPT의 새로운 기능" (by its "닫기" button)'
    assert (closed in text) is korean
