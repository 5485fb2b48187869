"""Escapes never reach the terminal (issue 21, point 3): each command, one reproduction.

Foreign text (a judge's reason, a recipe's name, an answer's code, a server's model
ids) arrives with OSC 52, title and clear-screen escapes; what the command prints
shows them escaped, the JUnit report stays well-formed XML, the transcript keeps
them escaped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from api_fixtures import llm_table, write_config
from api_fixtures import run_cli as run_api_cli
from cli_runs import answers, python_answer, replay, run_cli

EVIL = "\x1b]52;c;T1NDNTI=\x07\x1b]0;TITLE\x07\x1b[2J"
SHOWN = "\\x1b]52;c;T1NDNTI=\\x07"


def _clean(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text, repr(text[:400])


def test_run_shows_the_judges_reason_escaped(tmp_path: Path) -> None:
    judge = tmp_path / "judge.md"
    judge.write_text(answers(f"FAIL: the output is wrong {EVIL}"), encoding="utf-8")
    proc = run_cli("run", "do it", "--llm", replay(tmp_path, python_answer("print(1)")),
                   "--judge", f"replay:{judge}", "--target", "local", "--yes",
                   "--max-retries", "0", "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    _clean(proc.stderr + proc.stdout)
    assert SHOWN in proc.stderr
    transcript = next((tmp_path / "ws" / "raw_md").glob("*.md")).read_text()
    _clean(transcript)
    assert SHOWN in transcript


def test_recipe_run_prints_names_and_judge_lines_escaped_and_junit_is_xml(
        tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(answers(python_answer("print(1)")), encoding="utf-8")
    (tmp_path / "j.md").write_text(answers(f"FAIL: bad \x01\ufffe {EVIL}"),
                                   encoding="utf-8")
    (tmp_path / "r.toml").write_text(
        'name = "evil \\u001b]0;NAME\\u0007 \\u0001"\nprompt = "p"\nllm = "replay:a.md"\n'
        'judge = "replay:j.md"\nmax_retries = 0\n', encoding="utf-8")
    proc = run_cli("recipe", "run", "r.toml", "--junit", "report.xml", "--workspace",
                   str(tmp_path / "ws"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    _clean(proc.stderr + proc.stdout)
    assert "\\x1b]0;NAME" in proc.stderr and SHOWN in proc.stderr
    root = ET.parse(tmp_path / "report.xml").getroot()  # well-formed whatever the text
    case = root.find("./testsuite/testcase")
    assert case is not None and "\\x1b]0;NAME" in case.get("name", "")


def test_extract_prints_code_and_language_escaped(tmp_path: Path) -> None:
    md = tmp_path / "answer.md"
    md.write_text(f"```python{EVIL}\nprint('{EVIL}')\n```\n", encoding="utf-8")
    proc = run_cli("extract", str(md), "--workspace", str(tmp_path / "ws"), cwd=tmp_path)
    _clean(proc.stdout + proc.stderr)
    assert SHOWN in proc.stdout


def test_doctor_shows_a_servers_model_ids_escaped(tmp_path: Path, api_server) -> None:
    api_server.extra_models.append(f"evil{EVIL}")
    cfg = write_config(tmp_path, llm_table("api", "openai", api_server.url, "no-such"),
                       default_llm="api")
    proc = run_api_cli("doctor", "--config", str(cfg), cwd=tmp_path)
    assert "evil" in proc.stdout, proc.stdout
    _clean(proc.stdout + proc.stderr)
    assert SHOWN in proc.stdout
