"""``verifybot compare`` as a user runs it: 3 recipes x 3 LLMs on three backends (two
replays with different answers, the loopback API server), ``--parallel 3``, real local
programs. The matrix is checked against numbers worked out by hand below, compare.json
against its schema, index.html in Chromium (its charts drawn), and Ctrl+C mid-compare.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import jsonschema
import pytest
from api_fixtures import KEY, KEY_ENV, llm_table
from apiserver import ApiServer
from cli_runs import answers, db_rows, python_answer
from project import ROOT, verifybot_cmd

SCHEMA = json.loads((ROOT / "schemas" / "compare.schema.json").read_text())
CHROMIUM = "/usr/bin/chromium"


def _recipe(folder: Path, name: str, expect: str, timeout: float = 10) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(f'name = "{name}"\nprompt = "print {expect}"\ntarget = "local"\n'
                    f'criteria = ["contains:{expect}"]\njudge = "off"\nmax_retries = 2\n'
                    f"timeout = {timeout}\n", encoding="utf-8")
    return path


def _py(line: str) -> str:
    return python_answer(line)


C_BROKEN = "Here:\n\n```c\n#include <stdio.h>\nint main(void) { printf(\"COUNT=3\\n\") }\n```\n"


def _setup(tmp_path: Path, server: ApiServer) -> tuple[list[str], Path]:
    """The three recipes, the two replays and the config; returns the CLI args and cwd.

    Worked out by hand (max_retries 2: pass@1..3):
    - api (the same script for every recipe, by turn): answer 1 prints SUM=6 HELLO,
      answer 2 adds COUNT=3. sum@1, greet@1, count@2 -> pass@ 2/3, 1, 1.
    - replay:team_a/ (one file per recipe): sum@1; greet: a crash (fault), a wrong line
      (output), then right @3; count: a C compile error (compile), a sleep past the
      2 s timeout (timeout), a wrong count (output): never -> pass@ 1/3, 1/3, 2/3.
    - replay:b.md (one file for all): answer 1 prints COUNT=3, answer 2 all three:
      sum@2, greet@2, count@1 -> pass@ 1/3, 1, 1.
    """
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    _recipe(recipes, "sum", "SUM=6")
    _recipe(recipes, "greet", "HELLO")
    _recipe(recipes, "count", "COUNT=3", timeout=2)
    team = tmp_path / "team_a"
    team.mkdir()
    (team / "sum.md").write_text(answers(_py('print("SUM=6")')))
    (team / "greet.md").write_text(answers(_py('raise RuntimeError("boom")'),
                                           _py('print("HELO")'), _py('print("HELLO")')))
    (team / "count.md").write_text(answers(C_BROKEN, _py("import time\ntime.sleep(30)"),
                                           _py('print("COUNT=4")')))
    (tmp_path / "b.md").write_text(answers(_py('print("COUNT=3")'),
                                           _py('print("SUM=6 HELLO COUNT=3")')))
    server.answers = [_py('print("SUM=6 HELLO")'), _py('print("SUM=6 HELLO COUNT=3")')]
    (tmp_path / "config.toml").write_text(
        '[run]\ndefault_llm = "api"\nmax_retries = 2\n\n'
        + llm_table("api", "openai", server.url, "coder"), encoding="utf-8")
    args = ["compare", str(recipes), "--llm", "replay:team_a/", "--llm", "replay:b.md",
            "--llm", "api", "--parallel", "3", "--out", str(tmp_path / "out"),
            "--workspace", str(tmp_path / "ws"), "--config", str(tmp_path / "config.toml")]
    return args, tmp_path


def _env() -> dict[str, str]:
    return {**os.environ, KEY_ENV: KEY}


@pytest.fixture
def server() -> ApiServer:
    s = ApiServer(key=KEY).start()
    yield s
    s.stop()


@pytest.fixture
def compared(tmp_path: Path, server: ApiServer) -> tuple[Path, subprocess.CompletedProcess[str]]:
    args, cwd = _setup(tmp_path, server)
    done = subprocess.run([*verifybot_cmd(), *args, "--json"], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=_env())
    return tmp_path, done


EXPECTED = {  # (recipe, llm): (status, attempts, verified_at, failures)
    ("sum", "replay:team_a/"): ("VERIFIED", 1, 1, []),
    ("greet", "replay:team_a/"): ("VERIFIED", 3, 3, ["fault", "output"]),
    ("count", "replay:team_a/"): ("FAILED", 3, None, ["compile", "timeout", "output"]),
    ("sum", "replay:b.md"): ("VERIFIED", 2, 2, ["output"]),
    ("greet", "replay:b.md"): ("VERIFIED", 2, 2, ["output"]),
    ("count", "replay:b.md"): ("VERIFIED", 1, 1, []),
    ("sum", "api"): ("VERIFIED", 1, 1, []),
    ("greet", "api"): ("VERIFIED", 1, 1, []),
    ("count", "api"): ("VERIFIED", 2, 2, ["output"]),
}
PASS_AT = {"replay:team_a/": {"1": 0.3333, "2": 0.3333, "3": 0.6667},
           "replay:b.md": {"1": 0.3333, "2": 1.0, "3": 1.0},
           "api": {"1": 0.6667, "2": 1.0, "3": 1.0}}


@pytest.mark.timeout(300)
def test_three_recipes_by_three_llms_make_the_matrix_worked_out_by_hand(compared) -> None:
    tmp_path, done = compared
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data == json.loads((tmp_path / "out" / "compare.json").read_text())
    assert data["recipes"] == ["count", "greet", "sum"]
    assert data["llms"] == ["replay:team_a/", "replay:b.md", "api"]
    cells = {(c["recipe"], c["llm"]): c for c in data["cells"]}
    assert set(cells) == set(EXPECTED)
    for key, (status, attempts, at, failures) in EXPECTED.items():
        c = cells[key]
        assert (c["status"], c["attempts"], c["verified_at"], c["failures"]) == \
            (status, attempts, at, failures), (key, c)
        assert c["first_answer_seconds"] is not None
        assert 0 < c["first_answer_seconds"] <= c["seconds"]
        assert (tmp_path / "out" / c["workspace"] / "history.db").is_file()
        assert c["session"] == 1  # its own workspace: its own history, first session
        assert c["model"] == ("coder" if key[1] == "api" else "")
    summary = {s["llm"]: s for s in data["summary"]}
    assert {k: s["pass_at"] for k, s in summary.items()} == PASS_AT
    assert summary["replay:team_a/"]["failures"] == {"compile": 1, "fault": 1,
                                                     "timeout": 1, "output": 2, "judge": 0,
                                                     "no_code": 0}
    assert summary["api"]["verified"] == 3 and summary["api"]["models"] == ["coder"]
    by = {(r["recipe"], r["llm"]): r for r in data["by_recipe"]}
    assert by[("greet", "replay:team_a/")]["pass_at"] == {"1": 0.0, "2": 0.0, "3": 1.0}
    assert by[("count", "api")]["mean_attempts_to_verified"] == 2.0
    # The cells ran side by side: the API saw each of its three recipes' chats.
    md = (tmp_path / "out" / "compare.md").read_text()
    assert "| api | 3 | 3 | 67% | 100% | 100% |" in md
    # tokens from the API's usage, summed per LLM; replays have none
    assert summary["api"]["tokens"]["in"] > 0 and summary["api"]["tokens"]["out"] > 0
    assert summary["api"]["tokens"]["in"] == sum(c["tokens"]["in"] for c in data["cells"]
                                                 if c["llm"] == "api")
    assert summary["replay:b.md"]["tokens"] is None
    assert data["version"] and data["check"] is None
    assert "| count | replay:team_a/ | 0/1 | 0% | 0% | 0% |" in md
    # History keeps the comparison over its cells' sessions.
    rows = db_rows(tmp_path / "ws", "SELECT id, cells, verified, llms FROM comparisons")
    assert rows == [(1, 9, 8, json.dumps(data["llms"]))]
    listed = subprocess.run([*verifybot_cmd(), "history", "--compare", "--workspace",
                             str(tmp_path / "ws")], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert "compare 1" in listed.stdout and "8 of 9 verified" in listed.stdout


@pytest.mark.timeout(300)
def test_compare_json_validates_and_report_renders_again(compared) -> None:
    tmp_path, done = compared
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    data = json.loads((out / "compare.json").read_text())
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    broken = {**data, "cells": [{**data["cells"][0], "failures": ["segfault"]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(broken)
    before = (out / "index.html").read_text()
    (out / "index.html").unlink()
    (out / "compare.md").unlink()
    again = subprocess.run([*verifybot_cmd(), "compare", "--report", str(out)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    assert (out / "index.html").read_text() == before
    assert "| sum | api | 1 | VERIFIED |" in (out / "compare.md").read_text()
    _screenshot_shows_the_charts(out / "index.html", tmp_path / "shot.png")


def _screenshot_shows_the_charts(page_file: Path, shot: Path) -> None:
    """index.html in Chromium, offline: three charts drawn with their marks."""
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.on("request", lambda r: outside.append(r.url)
                    if not r.url.startswith("file:") else None)
            page.goto(page_file.as_uri())
            page.screenshot(path=str(shot), full_page=True)
            charts = page.locator("svg.chart")
            assert charts.count() == 3
            for i in range(3):
                box = charts.nth(i).bounding_box()
                assert box is not None and box["width"] > 100 and box["height"] > 100, box
            lines = page.locator('svg[data-chart="pass-at-k"] polyline.series')
            assert lines.count() == 3
            assert all((lines.nth(i).bounding_box() or {}).get("width", 0) > 50
                       for i in range(3))
            bars = page.locator('svg[data-chart="time-per-task"] rect.bar')
            assert bars.count() == 9
            assert any((bars.nth(i).bounding_box() or {}).get("height", 0) > 1
                       for i in range(9))
            kinds = page.locator('svg[data-chart="failure-kinds"] rect.bar')
            heights = [(kinds.nth(i).bounding_box() or {}).get("height", 0)
                       for i in range(kinds.count())]
            assert sum(1 for h in heights if h > 1) == 6  # team_a: 4 kinds; b and api: output
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    assert outside == []


def _ours(root: Path) -> list[int]:
    """Processes (other than the test's) whose command line or folder is under root."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            cmd = Path(f"/proc/{d}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            cwd = os.readlink(f"/proc/{d}/cwd")
        except OSError:
            continue
        if str(root) in cmd or cwd.startswith(str(root / "out")):
            found.append(int(d))
    return found


@pytest.mark.timeout(180)
def test_ctrl_c_mid_compare_keeps_the_finished_cells_and_leaves_no_process(
        tmp_path: Path) -> None:
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    _recipe(recipes, "quick", "DONE", timeout=120)
    _recipe(recipes, "slow", "DONE", timeout=120)
    team = tmp_path / "team"
    team.mkdir()
    (team / "quick.md").write_text(answers(_py('print("DONE")')))
    (team / "slow.md").write_text(answers(_py("import time\ntime.sleep(300)")))
    proc = subprocess.Popen([*verifybot_cmd(), "compare", str(recipes), "--llm",
                             f"replay:{team}/", "--parallel", "2", "--out",
                             str(tmp_path / "out"), "--workspace", str(tmp_path / "ws")],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    err: list[str] = []
    threading.Thread(target=lambda: err.extend(iter(proc.stderr.readline, "")),
                     daemon=True).start()
    end = time.monotonic() + 90
    while not ("cell quick" in "".join(err) and any(
            "sleep" in Path(f"/proc/{p}/cmdline").read_text(errors="replace")
            for p in _ours(tmp_path) if Path(f"/proc/{p}").exists())):
        assert proc.poll() is None and time.monotonic() < end, "".join(err)
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 130, "".join(err)
    deadline = time.monotonic() + 10
    while (left := _ours(tmp_path)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left == [], [Path(f"/proc/{p}/cmdline").read_bytes() for p in left]
    data = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert [(c["recipe"], c["status"]) for c in data["cells"]] == [("quick", "VERIFIED")]
    assert data["interrupted"] is True and data["not_run"] == 1
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert "Interrupted: 1 cell(s)" in (tmp_path / "out" / "compare.md").read_text()


def test_usage_errors_stop_before_any_cell_runs(tmp_path: Path) -> None:
    recipes = tmp_path / "recipes"
    recipes.mkdir()
    _recipe(recipes, "sum", "SUM=6")
    _recipe(recipes, "greet", "HELLO")
    team = tmp_path / "team"
    team.mkdir()
    (team / "sum.md").write_text(answers(_py('print("SUM=6")')))
    ws = str(tmp_path / "ws")

    def compare(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*verifybot_cmd(), "compare", *args, "--workspace", ws],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)

    no_llm = compare(str(recipes))
    assert no_llm.returncode == 2 and "--llm A --llm B" in no_llm.stderr
    missing = compare(str(recipes), "--llm", f"replay:{team}/")
    assert missing.returncode == 2 and "no answers for the recipe 'greet'" in missing.stderr
    assert "greet.md" in missing.stderr
    twice = compare(str(recipes), "--llm", "replay:x.md", "--llm", "replay:x.md")
    assert twice.returncode == 2 and "given twice" in twice.stderr
    nothing = compare(str(tmp_path / "nowhere"), "--llm", f"replay:{team}/")
    assert nothing.returncode == 2 and "no such recipe file or folder" in nothing.stderr
    assert not (tmp_path / "ws" / "compare").exists()  # no report folder for a usage error
