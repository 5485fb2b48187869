"""compare's numbers as people publish them: attempts are the LLM's answers, the
infrastructure's failures are not the model's, and an interrupted compare finishes.

Stub LLMs on loopback (the API server of tests/support, replays) and real local
programs; each expectation is worked out by hand in its test.
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
from cli_runs import answers, python_answer
from project import ROOT, verifybot_cmd

SCHEMA = json.loads((ROOT / "schemas" / "compare.schema.json").read_text())


def _recipe(folder: Path, name: str, expect: str, *, retries: int = 2,
            timeout: float = 10) -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.toml").write_text(
        f'name = "{name}"\nprompt = "print {expect}"\ntarget = "local"\n'
        f'criteria = ["contains:{expect}"]\njudge = "off"\nmax_retries = {retries}\n'
        f"timeout = {timeout}\n", encoding="utf-8")


@pytest.fixture
def server() -> ApiServer:
    s = ApiServer(key=KEY).start()
    yield s
    s.stop()


def _compare(tmp_path: Path, *args: str, timeout: float = 120
             ) -> tuple[subprocess.CompletedProcess[str], dict]:
    done = subprocess.run([*verifybot_cmd(), "compare", *args, "--out", str(tmp_path / "out"),
                           "--workspace", str(tmp_path / "ws")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, KEY_ENV: KEY})
    path = tmp_path / "out" / "compare.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    if data:
        jsonschema.Draft202012Validator(SCHEMA).validate(data)
    return done, data


@pytest.mark.timeout(180)
def test_wrong_then_the_same_wrong_then_right_is_verified_at_answer_3(tmp_path: Path) -> None:
    """The second answer repeats the first program: it is not run again, but it is an
    answer. Verified at answer 3, pass@1 and pass@2 0%; an always-wrong model (the same
    wrong program three times) shows 3 answers, not 1."""
    _recipe(tmp_path / "recipes", "sum", "SUM=6")
    wrong, right = python_answer('print("SUM=5")'), python_answer('print("SUM=6")')
    (tmp_path / "fixer.md").write_text(answers(wrong, wrong, right))
    (tmp_path / "stuck.md").write_text(answers(wrong, wrong, wrong))
    done, data = _compare(tmp_path, str(tmp_path / "recipes"), "--llm",
                          f"replay:{tmp_path / 'fixer.md'}", "--llm",
                          f"replay:{tmp_path / 'stuck.md'}")
    assert done.returncode == 0, done.stderr
    cells = {c["llm"].rsplit("/", 1)[-1]: c for c in data["cells"]}
    fixer, stuck = cells["fixer.md"], cells["stuck.md"]
    assert (fixer["status"], fixer["attempts"], fixer["verified_at"], fixer["repeated"]) == \
        ("VERIFIED", 3, 3, 1)
    assert (stuck["status"], stuck["attempts"], stuck["verified_at"], stuck["repeated"]) == \
        ("FAILED", 3, None, 2)
    summary = {s["llm"].rsplit("/", 1)[-1]: s for s in data["summary"]}
    assert summary["fixer.md"]["pass_at"] == {"1": 0.0, "2": 0.0, "3": 1.0}
    assert "cell sum x replay:" in done.stderr and "VERIFIED at answer 3" in done.stderr


@pytest.mark.timeout(180)
def test_the_infrastructure_apart_from_the_model(tmp_path: Path, server: ApiServer) -> None:
    """Three API LLMs on one recipe: ``flaky`` answers 500 twice, then right (retried,
    counted as one answer, verified at 1); ``ratelimit`` always answers 429 (retried once,
    then an infrastructure cell: not in pass@k, listed apart); ``coder`` is right with a
    price set in the user's config (tokens and cost summed; the Messages API reports no
    cost, so the price makes it; the OpenAI-style stub reports its own, which wins)."""
    _recipe(tmp_path / "recipes", "sum", "SUM=6")
    server.answers = [python_answer('print("SUM=6")')]
    (tmp_path / "config.toml").write_text(
        '[run]\nmax_retries = 2\n\n'
        + llm_table("flaky", "openai", server.url, "flaky", retry_wait=0.1)
        + llm_table("limited", "openai", server.url, "ratelimit", retries=1)
        + llm_table("priced", "anthropic", server.anthropic_url, "coder", price_in=2.5,
                    price_out=10.0),
        encoding="utf-8")
    done, data = _compare(tmp_path, str(tmp_path / "recipes"), "--llm", "flaky", "--llm",
                          "limited", "--llm", "priced", "--config",
                          str(tmp_path / "config.toml"))
    assert done.returncode == 0, done.stderr
    cells = {c["llm"]: c for c in data["cells"]}
    flaky, limited, priced = cells["flaky"], cells["limited"], cells["priced"]
    assert (flaky["status"], flaky["attempts"], flaky["verified_at"]) == ("VERIFIED", 1, 1)
    assert server.server_errors == 2
    assert "the server answered 500; waiting 0.1 s, then trying again (1 of 3)" in done.stderr
    assert limited["status"] == "LLM_ERROR" and limited["failures"] == ["infrastructure"]
    assert limited["infrastructure"].startswith("HTTP 429")
    assert "tried 2 times" in limited["infrastructure"]
    summary = {s["llm"]: s for s in data["summary"]}
    assert summary["limited"]["pass_at"] == {} and summary["limited"]["cells"] == 0
    assert summary["limited"]["infrastructure_cells"] == 1
    assert summary["flaky"]["pass_at"]["1"] == 1.0
    tokens = priced["tokens"]
    assert tokens["in"] > 0 and tokens["out"] > 0
    assert priced["cost"] == round((tokens["in"] * 2.5 + tokens["out"] * 10.0) / 1e6, 6)
    assert summary["priced"]["tokens"] == tokens and summary["priced"]["cost"] == priced["cost"]
    assert flaky["cost"] == 0.00125  # the server's own figure
    # time to the first answer counts from the prompt's send, start-up apart
    assert priced["startup_seconds"] is not None and priced["first_answer_seconds"] is not None
    assert priced["startup_seconds"] + priced["first_answer_seconds"] <= priced["seconds"]
    assert priced["build_seconds"] is None  # a Python program: nothing built
    md = (tmp_path / "out" / "compare.md").read_text()
    assert "## Failed for the infrastructure (left out of pass@k)" in md
    assert "sum x limited #1: HTTP 429" in md


@pytest.mark.timeout(240)
def test_a_coin_flip_model_with_repeat_8(tmp_path: Path, server: ApiServer) -> None:
    """A model right every other time, one answer a cell (max_retries 0), --repeat 8:
    4 of 8 verified. pass@1 by rounds 50%; over samples the worked example of
    test_matrix: 0.5 in [0.2152, 0.7848]; pass@k of more answers is not asked of a
    cell that may give one."""
    _recipe(tmp_path / "recipes", "sum", "SUM=6", retries=0)
    server.answers = [python_answer('print("SUM=6")'), python_answer('print("SUM=5")')]
    (tmp_path / "config.toml").write_text(
        "[run]\nmax_retries = 0\n\n" + llm_table("coin", "openai", server.url, "coin"),
        encoding="utf-8")
    done, data = _compare(tmp_path, str(tmp_path / "recipes"), "--llm", "coin", "--repeat",
                          "8", "--config", str(tmp_path / "config.toml"), timeout=220)
    assert done.returncode == 0, done.stderr
    assert sorted(c["status"] for c in data["cells"]) == ["FAILED"] * 4 + ["VERIFIED"] * 4
    (row,) = data["summary"]
    assert row["pass_at"] == {"1": 0.5}
    samples = row["pass_at_samples"]
    assert samples["1"] == {"value": 0.5, "low": 0.2152, "high": 0.7848}
    # pass@2 over the 8 samples: 1 - C(4,2)/C(8,2) = 1 - 6/28 (the k a user would pick
    # with a retry); k up to the 8 samples there are
    assert samples["2"]["value"] == 0.7857 and sorted(samples, key=int)[-1] == "8"
    assert samples["5"]["value"] == 1.0  # n - c = 4 < 5: every draw of five holds one
    assert "| coin | 50% [22-78] | 79% [" in (tmp_path / "out" / "compare.md").read_text()


def _sleeping_program(root: Path) -> bool:
    """The slow cell's program runs: a process in a run folder under the report."""
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            cwd = os.readlink(f"/proc/{d}/cwd")
        except OSError:
            continue
        if cwd.startswith(str(root / "out" / "cells" / "slow")):
            return True
    return False


@pytest.mark.timeout(240)
def test_resume_after_ctrl_c_runs_only_what_is_missing(tmp_path: Path) -> None:
    _recipe(tmp_path / "recipes", "quick", "DONE", timeout=120)
    _recipe(tmp_path / "recipes", "slow", "DONE", timeout=120)
    team = tmp_path / "team"
    team.mkdir()
    (team / "quick.md").write_text(answers(python_answer('print("DONE")')))
    (team / "slow.md").write_text(answers(python_answer("import time\ntime.sleep(300)")))
    proc = subprocess.Popen([*verifybot_cmd(), "compare", str(tmp_path / "recipes"), "--llm",
                             f"replay:{team}/", "--parallel", "2", "--out",
                             str(tmp_path / "out"), "--workspace", str(tmp_path / "ws")],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    err: list[str] = []
    threading.Thread(target=lambda: err.extend(iter(proc.stderr.readline, "")),
                     daemon=True).start()
    end = time.monotonic() + 90
    while not ("cell quick" in "".join(err) and _sleeping_program(tmp_path)):
        assert proc.poll() is None and time.monotonic() < end, "".join(err)
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=20) == 130, "".join(err)
    first = json.loads((tmp_path / "out" / "compare.json").read_text())
    assert [c["recipe"] for c in first["cells"]] == ["quick"] and first["interrupted"]
    # The slow answer is fixed in the recording; --resume runs the slow cell alone.
    (team / "slow.md").write_text(answers(python_answer('print("DONE")')))
    done = subprocess.run([*verifybot_cmd(), "compare", "--resume", str(tmp_path / "out"),
                           "--workspace", str(tmp_path / "ws")], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "1 kept from before" in done.stderr
    assert "cell quick" not in done.stderr and "cell slow" in done.stderr
    data = json.loads((tmp_path / "out" / "compare.json").read_text())
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert sorted((c["recipe"], c["status"]) for c in data["cells"]) == \
        [("quick", "VERIFIED"), ("slow", "VERIFIED")]
    assert data["interrupted"] is False and data["started"] == first["started"]
    quick = next(c for c in data["cells"] if c["recipe"] == "quick")
    assert quick == first["cells"][0]  # kept as it was, not run again
    # the interrupted slow cell's folder is kept; the new run has its own
    slow = next(c for c in data["cells"] if c["recipe"] == "slow")
    assert slow["workspace"].endswith("-try2")
    assert (tmp_path / "out" / slow["workspace"].removesuffix("-try2")).is_dir()
