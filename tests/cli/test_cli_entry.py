"""The command's front door: typos, no terminal, pipes, help texts, extract of transcripts."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

import pytest
from project import EXAMPLES, verifybot_cmd

from verifybot_tui.cli.entry import COMMANDS, build_parser
from verifybot_tui.core.store.history import History


def run(*args: str, cwd: Path, stdin: int | str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    kw: dict = {"input": stdin} if isinstance(stdin, str) else {"stdin": stdin}
    return subprocess.run([*verifybot_cmd(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60, env={**os.environ, **(env or {})}, **kw)


@pytest.mark.parametrize("typo, meant", [("histroy", "history"), ("rn", "run"),
                                         ("dcotor", "doctor"), ("extarct", "extract")])
def test_a_mistyped_command_exits_2_with_a_suggestion_and_sends_nothing(
        tmp_path: Path, typo: str, meant: str) -> None:
    # A config whose LLM is a replay file that does not exist: anything sent would fail
    # differently (exit 3), and no workspace file may appear.
    (tmp_path / "config.toml").write_text(
        '[run]\ndefault_llm = "replay:/nonexistent.md"\nworkspace = "ws"\n')
    proc = run(typo, cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert f"did you mean: verifybot {meant} " in proc.stderr
    assert f"verifybot -- {typo}" in proc.stderr, "says how to send it as a prompt"
    assert not (tmp_path / "ws").exists(), "nothing started, nothing sent"


def test_the_app_refuses_to_start_without_a_terminal(tmp_path: Path) -> None:
    proc = run(cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "needs a terminal" in proc.stderr and "verifybot run PROMPT" in proc.stderr
    prompt = run("write a haiku", cwd=tmp_path, stdin=subprocess.DEVNULL)
    assert prompt.returncode == 2 and "needs a terminal" in prompt.stderr


def test_history_into_head_ends_quietly(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    history = History(ws)
    for i in range(2000):  # far more than a pipe holds: the writer meets the closed pipe
        history.start_session(slug=f"s{i}", prompt=f"prompt {i} " + "x" * 400, target="local",
                              llm="replay", transcript="")
    history.close()
    pipeline = (f"{' '.join(verifybot_cmd())} history --workspace {ws} | head -n 1; "
                "echo status ${PIPESTATUS[0]}")
    proc = subprocess.run(["bash", "-c", pipeline], capture_output=True, text=True,
                          cwd=tmp_path, timeout=60)
    assert proc.stdout.splitlines()[0].startswith("#2000 ")
    assert proc.stdout.splitlines()[-1] == "status 0"
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.stderr == ""


def _parsers():
    yield "verifybot", build_parser(None)
    for command in COMMANDS:
        parser = build_parser(command)
        yield f"verifybot {command}", parser
        for action in parser._actions:  # sub-commands (recipe run, recipe new)
            choices = getattr(action, "choices", None)
            for name, sub in (choices.items() if isinstance(choices, dict) else ()):
                if isinstance(sub, argparse.ArgumentParser):
                    yield f"verifybot {command} {name}", sub


@pytest.mark.parametrize("name, parser", list(_parsers()), ids=lambda v: str(v)[:30])
def test_every_option_has_a_help_text_with_its_default(name: str, parser) -> None:
    for action in parser._actions:
        if action.dest in ("help", "version"):
            continue
        assert action.help, f"{name} {action.option_strings or action.dest} has no help"
        if action.option_strings:
            assert "default" in action.help, \
                f"{name} {action.option_strings[0]}: the help does not say its default"


def test_extract_reads_transcripts_and_replay_files_answer_by_answer(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    done = run("run", "count words", "--llm", f"replay:{EXAMPLES / 'word_count.md'}", "--yes",
               "--workspace", str(ws), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (transcript,) = (ws / "raw_md").iterdir()
    for source in (transcript, EXAMPLES / "word_count.md"):
        proc = run("extract", str(source), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "=== answer 1 of 2 ===" in proc.stdout and "=== answer 2 of 2 ===" in proc.stdout
        assert proc.stdout.count("--- block") == 2, "only the answers' code, not the outputs"
        as_json = json.loads(run("extract", str(source), "--json", cwd=tmp_path).stdout)
        assert [a["answer"] for a in as_json] == [1, 2]
        assert "len(words)" in as_json[1]["blocks"][0]["code"]
    one = run("extract", str(transcript), "--answer", "2", cwd=tmp_path)
    assert "answer 2 of 2" in one.stdout and "answer 1 of" not in one.stdout
    bad = run("extract", str(transcript), "--answer", "5", cwd=tmp_path)
    assert bad.returncode == 2 and "answers 1 to 2" in bad.stderr
    ran = run("extract", str(transcript), "--run", "--yes", "--workspace", str(tmp_path / "w2"),
              cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "Total words: 17" in ran.stdout, "--run runs the last answer (the fixed one)"


@pytest.mark.parametrize("command", [["login"], ["doctor", "--site"], ["selftest"]])
def test_an_unknown_llm_name_has_one_message_in_every_command(tmp_path: Path,
                                                               command: list[str]) -> None:
    """core.settings.config.check_llm_spec words it for all: what is configured, exit 2."""
    proc = run(*command, "--llm", "vb-nope", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--llm vb-nope: there is no [llm.vb-nope] in the config; configured: " \
        "chatgpt, claude" in proc.stderr


def test_extract_json_says_how_each_block_makes_its_file_and_its_content(
        tmp_path: Path) -> None:
    """DESIGN.md's `extract --json`: how, and content as applied to an empty tree."""
    source = tmp_path / "answer.md"
    source.write_text(
        "## Answer 1\n\nlsfl/main.py\n```python\n<<<<<<< SEARCH\n=======\nprint('new')\n"
        ">>>>>>> REPLACE\n```\n\n```diff\n--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n"
        "-X = 1\n+X = 2\n```\n\n```bash\npip install rich\n```\n")
    proc = run("extract", str(source), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (answer,) = json.loads(proc.stdout)
    got = [(b["filename"], b["how"], b["content"], b["runnable"]) for b in answer["blocks"]]
    assert got == [("lsfl/main.py", "search-replace", "print('new')\n", True),
                   ("util.py", "diff", None, False),
                   (None, "not-a-file", None, False)]
    assert answer["blocks"][0]["code"].startswith("<<<<<<< SEARCH\n")
    text = run("extract", str(source), cwd=tmp_path).stdout
    assert "--- block 1 (line 2): python, lsfl/main.py, an edit (search-replace), program ---" \
        in text
    assert "--- block 2 (line 9): diff, util.py, an edit (diff), not run: a diff of a file" in text
