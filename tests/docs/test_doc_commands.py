"""Every command in the README and the docs: run here offline, or named with why it cannot be.

Issue 43: a command a reader types from the docs must work as the docs say, so each one
found by tests/support/doc_commands.py (README.md, docs/**/*.md) is in exactly one of
two lists below: RUN (run for real by the installed ``verifybot`` in a throwaway home and
folder, with the replay LLM or another offline form, its exit code and a fact or two of
its output checked; or run by the test named) and NOT_OFFLINE (with the reason). A
command in neither fails the first test, naming it: a new command in the docs must be
classified. The docs' placeholders (FILE.md, N, DIR, PROMPT, NAME...) are filled here
per command; each RUN entry's arguments are that mapping.

The commands run side by side in a pool started once for the module (they are mostly
waiting on a subprocess), those that read what another made (a session, a comparison)
one after another in a shared folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from cli_runs import C_ANSWER, CLEAN, answers, python_answer
from doc_commands import (
    Elsewhere,
    Folder,
    Run,
    collect,
    normalise,
    page_commands,
    split_chain,
    verifybot_entry,
)
from project import ROOT

from verifybot_tui.cli.entry import COMMANDS

PROMPT = "Print the total number of words in a short text and its 3 most common words"
SLUG = "print_the_total_number_of_words"
NO_TERMINAL = ("needs a terminal", "verifybot run")  # the app, started without one
API = '[llm.local]\nkind = "openai"\nbase_url = "http://localhost:11434/v1"\nmodel = "m"\n'
STM32 = '[targets.stm32]\nkind = "mcu"\nboard = "netduinoplus2"\nbackend = "qemu"\n'
WRAPPED = ('name = "wrap"\nprompt = "hi"\nllm = "replay:a.md"\ntarget = "local"\n'
           'compiler = "gcc"\nmax_retries = 0\ntimeout = 5\n'
           'flags = ["-wrapper", "/bin/sh,-c,echo ran > wrapped"]\n')
RACERS = (("fast.md", answers(python_answer('print("RESULT=42")'))),
          ("wrong.md", answers(python_answer('print("RESULT=41")'))))
RISKY = ("shared.toml", "[run]\nauto_accept = true\n")

# -- the commands that run here ----------------------------------------------------------

WORD_COUNT = Run(
    ("run", PROMPT, "--llm", "replay:examples/word_count.md", "--target", "local", "--yes",
     "--verbose"), place="first",
    says=("TypeError", "the initial prompt as sent", "the feedback prompt as sent", "PASSED"),
    files=(f"programs/{SLUG}_1.py", f"programs/{SLUG}_2.py", f"outputs/{SLUG}_1.txt",
           f"outputs/{SLUG}_2.txt", f"raw_md/*_{SLUG}.md", "context/local.md", "history.db",
           f"runs/{SLUG}_1", ".versions"))
# DIR: the folder this compare writes, which the --report/--resume/history commands read.
COMPARE = Run(
    ("compare", "examples/rocket.toml", "--llm", "replay:examples/rocket.md", "--llm",
     "replay:examples/squares.md", "--repeat", "1", "--parallel", "2", "--out", "cmp",
     "--json"), place="first",
    says=('"recipes"', "VERIFIED", "FAILED"),
    files=("cmp/compare.json", "cmp/compare.md", "cmp/index.html"))
APP = Run(("Print RESULT=42", "--llm", "replay:examples/word_count.md", "--workspace", "ws",
           "--trust", "-v"), code=2, says=NO_TERMINAL)
LOGIN_API = Run(("login", "--llm", "local"), config=API, says=("needs no login",))
DOCTOR = ("llm chatgpt: browser", "needs a display", "target local: ", "sandbox")
RACE = Run(("run", "Print RESULT=42", "--race", "replay:fast.md,replay:wrong.md", "--expect",
            "contains:RESULT=42", "--max-retries", "0"), given=RACERS,
           says=("replay:fast.md wins (VERIFIED)",))
HISTORY_JSON = Run(("history", "--json"), place="world",
                   says=('"success_status": "PASSED"', '"success_attempt": 2'))
HISTORY_COMPARE_JSON = Run(("history", "--compare", "--json"), place="world",
                           says=('"out_dir"', '"rocket-apogee"'))
IMPORT_REFUSED = Run(("config", "import", "shared.toml"), given=(RISKY,), code=2,
                     says=("[RISKY", "nothing was imported", "--trust"))

RUN: dict[str, Run | Elsewhere] = {
    "verifybot": Elsewhere(  # the install line's last command: the app in a terminal
        "tests/e2e/test_tmux.py::test_first_start_with_no_config_and_no_display_opens_ready",
        ("verifybot",)),
    ". .venv/bin/activate": Run(
        shell='. "{venv}/bin/activate" && command -v verifybot && verifybot --version',
        says=("{venv}/bin/verifybot",)),
    "verifybot doctor": Run(("doctor",), says=DOCTOR),
    "verifybot doctor [--trust-new-host]": Run(("doctor", "--trust-new-host"), says=DOCTOR),
    "verifybot selftest --offline": Elsewhere(
        "tests/llm/browser/test_selftest_offline.py::"
        "test_selftest_offline_passes_every_step_and_leaves_nothing", ("selftest", "--offline")),
    "verifybot selftest [--llm NAME] [--offline]": Elsewhere(
        "tests/llm/browser/test_selftest_offline.py::"
        "test_selftest_offline_passes_every_step_and_leaves_nothing", ("selftest", "--offline")),
    # NAME: the test chat site on loopback, through its own [llm.site] table.
    "verifybot selftest [--llm NAME]": Elsewhere(
        "tests/llm/browser/test_browser_probe.py::"
        "test_selftest_runs_every_step_and_names_a_broken_one", ("selftest", "--llm", "site")),
    "verifybot doctor --site [--llm NAME]": Elsewhere(
        "tests/llm/browser/test_browser_probe.py::"
        "test_without_yes_the_probe_asks_before_sending", ("doctor", "--site", "--llm")),
    "verifybot doctor --site [--llm NAME] [--yes]": Elsewhere(
        "tests/llm/browser/test_browser_probe.py::"
        "test_the_probe_finds_a_broken_selector_and_its_evidence_names_the_right_one",
        ("doctor", "--site", "--llm", "site", "--yes")),
    "verifybot doctor --site --llm NAME --repair LLM": Elsewhere(
        "tests/llm/browser/test_browser_repair.py::"
        "test_doctor_site_repair_mends_a_broken_copy_button_on_the_live_hub_page",
        ("--site", "--llm", "site", "--yes", "--repair", "--accept")),
    # FILE.html: a saved page the test writes; LLM: a replay of proposals.
    "verifybot doctor --page FILE.html [--site chatgpt|claude] [--json]": Elsewhere(
        "tests/llm/browser/test_browser_repair.py::"
        "test_a_replayed_llm_proposes_wrong_then_right_and_the_user_accepts",
        ("--page", "--site", "claude", "--json")),
    "verifybot doctor --page FILE.html --site chatgpt|claude|FILE.toml --repair [--llm NAME] "
    "[--accept]": Elsewhere(
        "tests/llm/browser/test_browser_repair.py::"
        "test_a_replayed_llm_proposes_wrong_then_right_and_the_user_accepts",
        ("--page", "--site", "claude", "--repair", "--llm")),
    "verifybot doctor --page FILE.html --site SITE --repair [--llm NAME] [--accept]": Elsewhere(
        "tests/llm/browser/test_browser_repair.py::test_the_loopback_api_server_as_the_llm",
        ("doctor", "--page", "--site", "--repair", "--accept")),
    "verifybot run --show-thinking": Elsewhere(  # an API model's reasoning: the test's API
        "tests/tui/test_thinking_shown.py::"
        "test_run_prints_thinking_dimmed_on_stderr_only_when_asked", ("run", "--show-thinking")),
    "verifybot compare --check DIR": Elsewhere(
        "tests/cli/test_compare_check.py::test_a_wrong_answer_that_verifies_fails_the_check",
        ("compare", "--check")),
    "verifybot compare --check benchmarks/embedded": Elsewhere(
        "tests/cli/test_compare_check.py::test_every_solution_verifies_and_every_wrong_answer_"
        "fails", ("compare", "--check", "--parallel")),
    "verifybot recipe run FILE --trust": Elsewhere(
        "tests/cli/test_files_from_others.py::"
        "test_trust_is_remembered_by_content_and_a_change_is_asked_again",
        ("recipe", "run", "--trust")),
    "verifybot run --trust": Elsewhere(  # a target whose board file sets commands
        "tests/cli/test_files_from_others.py::test_run_yes_does_not_approve_a_board_file",
        ("run", "--target", "evil", "--yes", "--trust")),
    # pi: the suite's sshd on loopback as the Pi.
    "verifybot probe --target pi": Elsewhere(
        "tests/docs/test_doc_commands.py::test_probe_of_the_pi_says_what_the_llm_is_told",
        ("probe", "--target", "pi")),
    "verifybot mcp --http 127.0.0.1:8765": Elsewhere(  # 8765: a free port (HttpServer)
        "tests/mcp_server/test_mcp_http.py::"
        "test_a_request_without_the_token_or_with_another_is_refused", ("mcp", "--http")),
    f'verifybot run "{PROMPT}" --llm replay:examples/word_count.md --target local --yes '
    "--verbose": WORD_COUNT,
    "verifybot history": Run(("history",), place="world",
                             says=("PASSED", "attempt 1: FAILED", "attempt 2: PASSED")),
    "verifybot history [--json]": HISTORY_JSON,
    # N: the session the offline minute made; PROMPT: a follow-up its replay answers.
    "verifybot run --resume N": Run(("run", "--resume", "1"), place="world", code=2,
                                    says=("no answer still being written",)),
    "verifybot run --resume N [PROMPT] [...]": Run(
        ("run", "--resume", "1", "Also print the number of distinct words", "--llm",
         "replay:followup.md", "--yes"), place="world",
        given=(("followup.md", answers("none", "none", python_answer('print("distinct: 11")'))),),
        says=("distinct: 11", "PASSED")),
    # NAME: an API LLM of the user's config: no browser, so no login.
    "verifybot login --llm NAME": LOGIN_API,
    "verifybot login [--llm NAME]": LOGIN_API,
    # PATH: a file in the folder; shared.toml: one that turns on a risky key.
    "verifybot config export [PATH]": Run(
        ("config", "export", "exported.toml"), files=("exported.toml",),
        says=("secrets are not in it",)),
    "verifybot config import PATH": Run(
        ("config", "import", "settings.toml"),
        given=(("settings.toml", "[run]\nmax_retries = 2\n"),),
        says=("run.max_retries: 3 -> 2", "installed settings.toml"),
        files=("{home}/config/verifybot/config.toml",)),
    "verifybot config import shared.toml --trust": Run(
        ("config", "import", "shared.toml", "--trust"), given=(RISKY,),
        says=("[RISKY", "--trust: importing 1 risky key(s)", "installed shared.toml")),
    "verifybot config import PATH [--trust]": IMPORT_REFUSED,
    "verifybot probe [--target NAME]": Run(("probe", "--target", "local"),
                                           says=("# Target: local",), files=("context/local.md",)),
    # The default LLM needs a login: the recorded answers of examples/ answer instead.
    'verifybot run "Write the CRC-15 routine of a CAN driver and self-test it" --target stm32':
        Run(("run", "Write the CRC-15 routine of a CAN driver and self-test it", "--target",
             "stm32", "--llm", "replay:examples/stm32_can.md", "--yes"), config=STM32,
            says=("crc15=0x059E", "PASSED")),
    "verifybot recipe run examples/stm32_can.toml": Run(
        ("recipe", "run", "examples/stm32_can.toml"), says=("1 of 1 verified", "VERIFIED")),
    "verifybot mcp": Elsewhere(  # its --config: the test's folder's config
        "tests/mcp_server/test_mcp_tools.py::test_tools_are_listed_with_schemas_and_descriptions",
        ("mcp",)),
    "verifybot mcp [--http HOST:PORT [--allow-remote]]": Elsewhere(
        "tests/mcp_server/test_mcp_http.py::test_a_non_loopback_address_is_refused_unless_allowed",
        ("mcp", "--http", "0.0.0.0:8765", "--allow-remote")),
    "verifybot [PROMPT] [--target NAME] [--llm NAME] [--config PATH] [--workspace DIR] [--trust] "
    "[-v] [--race A,B[,C]]": APP,
    "verifybot --trust": Run(("--trust",), code=2, says=NO_TERMINAL),
    'verifybot "PROMPT" --race chatgpt,claude': Run(
        ("Print RESULT=42", "--race", "replay:fast.md,replay:wrong.md"), given=RACERS, code=2,
        says=NO_TERMINAL),
    "python -m verifybot_tui": Run(module=True, code=2, says=NO_TERMINAL),
    "verifybot run PROMPT [--target NAME] [--llm NAME] [--max-retries N] [--timeout S] [--yes] "
    "[--install] [--json] [--expect KIND:SPEC]... [--criteria FILE] [--judge MODE] "
    "[--workspace DIR] [--config PATH] [--trust-new-host] [--trust] [--show-thinking] [-v]": Run(
        ("run", PROMPT, "--target", "local", "--llm", "replay:examples/word_count.md",
         "--max-retries", "1", "--timeout", "20", "--yes", "--install", "--json", "--expect",
         "contains:Total words: 17", "--criteria", "criteria.toml", "--judge", "off",
         "--workspace", "ws", "--config", "mine.toml", "--trust-new-host", "--trust",
         "--show-thinking", "-v"),
        given=(("criteria.toml", 'expect = ["contains:the: 4"]\n'), ("mine.toml", "[run]\n")),
        says=('"status": "VERIFIED"', "all 2 success criteria met"), files=("ws/history.db",)),
    "verifybot run": Run(("run",), code=2, says=("the prompt is empty",)),
    "verifybot histroy": Run(("histroy",), code=2, says=("did you mean: verifybot history",)),
    "verifybot -- histroy": Run(("--", "histroy"), code=2, says=NO_TERMINAL,
                                never=("did you mean",)),
    "verifybot COMMAND --help": Run(
        shell='for c in {commands}; do "{exe}" $c --help | grep -q "^usage: verifybot $c" '
              '|| { echo "no help: $c"; exit 1; }; done; "{exe}" run --help | grep -c default',
        never=("no help",)),
    # FILE.md: a replay file (its answers numbered) and the transcript the minute left.
    "verifybot extract FILE.md [--answer N] [--run] [--target NAME] [--yes] [--json]": Run(
        ("extract", "examples/word_count.md", "--answer", "2", "--run", "--target", "local",
         "--yes", "--json"), says=('"status": "PASSED"', "Total words: 17")),
    "verifybot extract": Run(("extract", "{transcript}"), place="world",
                             says=("=== answer 1 of ", "=== answer 2 of ")),
    "verifybot extract --run": Run(("extract", "examples/word_count.md", "--run", "--yes"),
                                   says=("Total words: 17", "PASSED")),
    'verifybot run "Simulate a small rocket launched straight up and print its apogee" --llm '
    "replay:examples/rocket.md --yes --expect 'contains:Apogee' --expect "
    "'range:Apogee: ([0-9.]+) m:100..5000'": Run(
        ("run", "Simulate a small rocket launched straight up and print its apogee", "--llm",
         "replay:examples/rocket.md", "--yes", "--expect", "contains:Apogee", "--expect",
         "range:Apogee: ([0-9.]+) m:100..5000"), says=("Apogee", "VERIFIED")),
    "verifybot recipe run": Run(("recipe", "run", "examples/rocket.toml"),
                                says=("rocket-apogee", "1 of 1 verified")),
    "verifybot recipe run FILE... [--parallel N] [--junit PATH] [--json] [--trust] [--install]":
        Run(("recipe", "run", "examples/rocket.toml", "examples/squares.toml", "--parallel", "2",
             "--junit", "report.xml", "--json", "--trust", "--install"),
            says=('"all_verified": true', "2 of 2 verified"), files=("report.xml",)),
    "verifybot recipe new [SESSION] [-o FILE]": Run(
        ("recipe", "new", "1", "-o", "word_count_recipe.toml"), place="world",
        says=("recipe written to word_count_recipe.toml",), files=("word_count_recipe.toml",)),
    # RECIPE, A, B: an example recipe and two replays (one right, one wrong).
    "verifybot compare RECIPE|DIR... --llm A --llm B [...] [--repeat N] [--parallel N] "
    "[--out DIR] [--json]": COMPARE,
    "verifybot compare --report DIR": Run(("compare", "--report", "cmp"), place="world",
                                          says=("rendered cmp/compare.md and cmp/index.html",)),
    "verifybot compare --resume DIR": Run(("compare", "--resume", "cmp"), place="world",
                                          says=("2 kept from before",)),
    "verifybot history --compare [--json]": HISTORY_COMPARE_JSON,
    "verifybot history --compare": Run(("history", "--compare"), place="world",
                                       says=("1 of 2 verified",)),
    # chatgpt, claude: two replays stand in (the chat sites need logins); the benchmark: its
    # two tasks that need no board, each LLM answering with a task's solution or wrong answer.
    "verifybot compare benchmarks/embedded --llm chatgpt --llm claude --parallel 2": Run(
        ("compare", "benchmarks/embedded", "--llm", "replay:benchmarks/embedded/*/solution.md",
         "--llm", "replay:benchmarks/embedded/*/wrong.md", "--parallel", "2"),
        says=("crc32-local", "modbus-crc16-local", "VERIFIED"), files=("compare/*/compare.json",)),
    "verifybot run PROMPT --race A,B[,C]": RACE,
    "verifybot run PROMPT --race chatgpt,claude": RACE,
    "verifybot compare --trust": Run(
        ("compare", "wrap.toml", "--llm", "replay:a.md", "--trust"),
        given=(("wrap.toml", WRAPPED), ("a.md", answers(C_ANSWER.format(CLEAN)))),
        says=("--trust: running",), never=("not run: a file from others",)),
}

# -- the commands that cannot run here, and why -------------------------------------------

INSTALLS = "installs the project: a package index (network) and a fresh venv"
WINDOWS = "a Windows command (WSL, usbipd-win), and a USB device for usbipd"
LABGRID = ("labgrid's own client, against your farm's coordinator and the exporter beside "
           "the real boards (the loopback farm of tests/targets/mcu/test_labgrid_farm.py "
           "makes its places through labgrid's client session instead)")
SUITE = ("the whole suite (this test is part of it), after installing its tools with "
         "apt-get (root, network) and the Python extras with uv or pip (network)")

NOT_OFFLINE: dict[str, str] = {
    "python3 -m venv .venv": INSTALLS + " (the install line's first step; the suite runs in "
                             "the venv scripts/test makes the same way)",
    ".venv/bin/pip install -e .": INSTALLS,
    "pip install 'verifybot-tui[farm]'": INSTALLS,
    "pip install 'verifybot-tui[mcp]'": INSTALLS,
    "pip install": "named, not typed: what VerifyBot runs outside the sandbox for an approved "
                   "install (needs a package index; tests/cli/test_installs.py uses a local one)",
    "sudo apt install chromium": "apt and sudo: root and Debian's mirrors",
    "apt install bubblewrap": "apt: root and Debian's mirrors",
    "playwright install chromium": "downloads a browser (network)",
    "verifybot login": "a visible browser on the chat site: a display, and a person to log in",
    "verifybot login --llm claude": "a visible browser on claude.ai: a display, and a person "
                                    "to log in",
    'verifybot run "read the temperature from the BME280 on I2C and print it"':
        "the default LLM (chatgpt) needs a login, and the program a BME280 on I2C (a Pi "
        "with the sensor); the same form offline is the rocket and word-count runs",
    "scripts/test": SUITE,
    "scripts/test -k extract -x": SUITE,
    "scripts/test tests/core": SUITE,
    "wsl --install": WINDOWS,
    "usbipd list": WINDOWS,
    "usbipd bind --busid X-Y": WINDOWS,
    "usbipd attach --wsl --busid X-Y": WINDOWS,
    "labgrid-client -p f4-bench-1 create": LABGRID,
    "labgrid-client -p f4-bench-1 add-match 'bench-pc/f4-bench-1/*'": LABGRID,
    "labgrid-client -p f4-bench-1 set-tags board=netduinoplus2": LABGRID,
    "labgrid-client reserve --wait": LABGRID,
    "claude mcp add verifybot -- verifybot mcp": "Claude Code's own command (not installed "
                                                 "here); the server it starts is `verifybot mcp`",
    'claude mcp add --transport http verifybot http://127.0.0.1:8765/mcp --header '
    '"Authorization: Bearer <token>"': "Claude Code's own command (not installed here); the "
                                       "server is `verifybot mcp --http`",
}


# -- the classification -------------------------------------------------------------------


def test_every_command_of_the_docs_is_classified() -> None:
    found: dict[str, list[str]] = {}
    for item in collect(ROOT):
        found.setdefault(item.command, []).append(item.where)
    assert len(found) > 50, "the collector finds the docs' commands"
    unclassified = {cmd: where for cmd, where in found.items()
                    if cmd not in RUN and cmd not in NOT_OFFLINE}
    assert not unclassified, ("commands in the docs in neither RUN nor NOT_OFFLINE (add each to "
                              f"one of them): {json.dumps(unclassified, indent=1)}")
    stale = [cmd for cmd in [*RUN, *NOT_OFFLINE] if cmd not in found]
    assert not stale, f"listed, but no longer in the docs: {stale}"


def test_no_command_is_in_both_lists_and_each_reason_is_given() -> None:
    assert not set(RUN) & set(NOT_OFFLINE)
    assert all(len(reason) > 20 for reason in NOT_OFFLINE.values())


def test_the_collector_reads_fences_chains_spans_and_the_docs_folder(tmp_path: Path) -> None:
    assert split_chain("a 'x && y' && b; c  # note") == ["a 'x && y'", "b", "c"]
    page = ("Intro `verifybot\nhistory` and `verifybot ...`, `apt-get`.\n\n"
            "```sh\n# a comment\n.venv/bin/verifybot run \"x\" \\\n    --yes && scripts/test\n"
            "```\n\n"
            "| a | `verifybot doctor --page F [--site chatgpt\\|claude]` |\n\n"
            "````markdown\n```sh\nverifybot inside\n```\n````\n\n"
            "text ```` ```markdown ```` text `verifybot probe`\n\n"
            "1. In a list:\n\n       ```sh\n       verifybot history --json\n       ```\n\n"
            "    verifybot compare D --llm A\n")
    got = [normalise(cmd) for _, cmd in page_commands(page)]
    assert got == ["verifybot history", 'verifybot run "x" --yes',
                   "scripts/test", "verifybot doctor --page F [--site chatgpt|claude]",
                   "verifybot probe", "verifybot history --json",
                   "verifybot compare D --llm A"], got
    (tmp_path / "README.md").write_text("`verifybot history`\n")
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "keys.md").write_text("```sh\n.venv/bin/verifybot mcp\n```\n")
    assert [(f.command, f.where) for f in collect(tmp_path)] == [
        ("verifybot history", "README.md:1"), ("verifybot mcp", "docs/guide/keys.md:2")]


# -- running them --------------------------------------------------------------------------


class Runs:
    """The module's RUN commands, started at once in a pool: a result per command."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.values = {"venv": str(Path(sys.executable).parent.parent),
                       "exe": " ".join(verifybot_entry()), "commands": " ".join(COMMANDS)}
        self.futures: dict[int, Future] = {}
        self.pool = ThreadPoolExecutor(max_workers=3)
        self.world_pool = ThreadPoolExecutor(max_workers=1)  # one after another
        self.world = self.folder("world")
        runs = list({id(r): r for r in RUN.values() if isinstance(r, Run)}.values())
        for place in ("first", "world", "own"):
            for run in (r for r in runs if r.place == place):
                self.futures[id(run)] = self.submit(run)

    def folder(self, name: str) -> Folder:
        return Folder.make(self.base / name, self.base / "homes" / name, self.base / "cache",
                           ROOT, self.values)

    def submit(self, run: Run) -> Future:
        if run.place == "own":
            name = f"own{len(self.futures)}"
            return self.pool.submit(lambda: (folder := self.folder(name), folder.run(run)))
        return self.world_pool.submit(self.in_world, run)

    def in_world(self, run: Run) -> tuple[Folder, subprocess.CompletedProcess[str]]:
        found = sorted((self.world.path / "raw_md").glob(f"*_{SLUG}.md"))
        if found:
            self.world.values["transcript"] = str(found[0].relative_to(self.world.path))
        return self.world, self.world.run(run)

    def result(self, run: Run) -> tuple[Folder, subprocess.CompletedProcess[str]]:
        return self.futures[id(run)].result(timeout=300)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.world_pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    started = Runs(tmp_path_factory.mktemp("doc-commands"))
    yield started
    started.close()


@pytest.mark.parametrize("command", [c for c, r in RUN.items() if isinstance(r, Run)])
def test_the_command_runs_as_the_docs_say(runs: Runs, command: str) -> None:
    run = RUN[command]
    assert isinstance(run, Run)
    folder, done = runs.result(run)
    problems = folder.problems(run, done)
    assert not problems, (f"{command}\n  ran as: {done.args}\n  " + "\n  ".join(problems)
                          + f"\n--- stdout:\n{done.stdout[-3000:]}\n--- stderr:\n"
                          f"{done.stderr[-3000:]}")


@pytest.mark.parametrize("command", [c for c, r in RUN.items() if isinstance(r, Elsewhere)])
def test_the_command_is_run_by_the_test_named(command: str) -> None:
    where = RUN[command]
    assert isinstance(where, Elsewhere)
    path, name = where.test.split("::")
    module = (ROOT / path).read_text(encoding="utf-8")
    assert re.search(rf"^(async )?def {name}\(", module, flags=re.M), where.test
    helpers = [ROOT / "tests" / "support" / f"{m}.py"
               for m in re.findall(r"^from (\w+) import", module, flags=re.M)]
    source = "".join([module, *(h.read_text(encoding="utf-8") for h in helpers if h.exists())])
    missing = [arg for arg in where.args if f'"{arg}' not in source]
    assert not missing, f"{where.test} does not run {command} ({missing} not in it)"


# -- the two that need more than a folder -------------------------------------------------


@pytest.mark.ssh
def test_probe_of_the_pi_says_what_the_llm_is_told(sshd, remote_dir, tmp_path: Path) -> None:
    """`verifybot probe --target pi`, the suite's sshd on loopback standing in for the Pi
    (its [targets.pi] in the user's config, the host key already known)."""
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "verifybot" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    sshd.write_config_toml(config, remote_dir[0])
    done = subprocess.run([*verifybot_entry(), "probe", "--target", "pi"], cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Target: pi\n"), done.stdout[:300]
    assert (tmp_path / "context" / "pi.md").read_text().startswith("# Target: pi\n")

