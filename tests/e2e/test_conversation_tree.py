"""A conversation keeps a project tree (issue 37): each follow-up changes the files the
last attempt ran with, the way LLMs really write follow-ups.

Each test replays a multi-turn conversation through the real CLI (`verifybot run
--llm replay:FILE`, the local target, real interpreters and compilers) and checks
every attempt's run folder file by file, then the session's final verdict. Before
issue 37 a follow-up that resent only `util.py` ran in a folder without `main.py`.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from cli_runs import answers, db_rows, the_record
from npm_registry import start_registry, url
from project import verifybot_cmd

pytestmark = pytest.mark.timeout(180)

BUILT = {"prog", "prog.out"}  # what a C build leaves in the run folder


def converse(tmp_path: Path, *bodies: str, retries: int = 3,
             extra: tuple[str, ...] = (), env: dict[str, str] | None = None
             ) -> tuple[subprocess.CompletedProcess[str], Path]:
    replay = tmp_path / "conversation.md"
    replay.write_text(answers(*bodies))
    ws = tmp_path / "ws"
    args = [*verifybot_cmd(), "run", "Write the project", "--llm", f"replay:{replay}",
            "--target", "local", "--yes", "--workspace", str(ws), "--judge", "off",
            "--max-retries", str(retries), *extra]
    r = subprocess.run(args, cwd=tmp_path, input="", capture_output=True, text=True,
                       timeout=170, env={**os.environ, **(env or {})})
    return r, ws


def run_folders(ws: Path) -> list[Path]:
    """Each attempt that ran, in order (runs/<slug>_<version>)."""
    found = [p for p in (ws / "runs").iterdir()
             if p.is_dir() and re.search(r"_\d+$", p.name)]
    return sorted(found, key=lambda p: int(p.name.rsplit("_", 1)[1]))


def folder(run: Path) -> dict[str, str]:
    """The run folder's files as the program saw them (a build's output left out)."""
    return {str(p.relative_to(run)): p.read_text() for p in sorted(run.rglob("*"))
            if p.is_file() and p.name not in BUILT and "node_modules" not in p.parts}


def transcript(ws: Path) -> str:
    (path,) = (ws / "raw_md").glob("*.md")
    return path.read_text()


def section(text: str, title: str) -> str:
    m = re.search(rf"^## {re.escape(title)}\n\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"no section {title!r} in the transcript"
    return m.group(1)


def named(files: dict[str, str], lang: str = "python") -> str:
    return "\n\n".join(f"**{name}**\n\n```{lang}\n{code}```" for name, code in files.items())


# --------------------------------------------------------------------- only changed files

PKG_1 = {
    "pkg/__init__.py": "from pkg.core import mean\n",
    "pkg/core.py": "def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n",
    "main.py": "from pkg import mean\n\nm = mean([2, 4, 6])\n"
               "assert m == 4, f'mean gave {m}'\nprint('mean:', m)\n",
}
CORE_FIXED = "def mean(xs):\n    return sum(xs) / len(xs)\n"


def test_a_python_package_follow_up_that_sends_only_the_changed_file(tmp_path: Path) -> None:
    r, ws = converse(tmp_path, "Here is the package.\n\n" + named(PKG_1),
                     "Only `pkg/core.py` changes:\n\n" + named({"pkg/core.py": CORE_FIXED}))
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    first, second = run_folders(ws)
    assert folder(first) == PKG_1
    assert folder(second) == {**PKG_1, "pkg/core.py": CORE_FIXED}
    assert "mean: 4.0" in r.stdout and the_record(ws)["status"] == "PASSED"
    files = section(transcript(ws), "Files 2")
    assert "- pkg/core.py: whole\n" in files
    assert "- pkg/__init__.py: carried\n" in files and "- main.py: carried (runs)\n" in files
    # History keeps each version: the carried files are saved again as version 2.
    assert (ws / "programs" / "pkg" / "__init___2.py").read_text() == PKG_1["pkg/__init__.py"]
    assert the_record(ws)["attempts"][1]["tree"] == {
        "pkg/__init__.py": "carried", "pkg/core.py": "whole", "main.py": "carried"}


C_1 = {
    "stats.h": "#ifndef STATS_H\n#define STATS_H\nint total(const int *v, int n);\n#endif\n",
    "stats.c": "#include \"stats.h\"\n\nint total(const int *v, int n) {\n    int s = 0;\n"
               "    for (int i = 1; i < n; i++) s += v[i];\n    return s;\n}\n",
    "main.c": "#include <stdio.h>\n#include \"stats.h\"\n\nint main(void) {\n"
              "    int v[] = {1, 2, 3};\n    int t = total(v, 3);\n"
              "    printf(\"total: %d\\n\", t);\n    return t == 6 ? 0 : 1;\n}\n",
}
STATS_FIXED = C_1["stats.c"].replace("int i = 1", "int i = 0")


def test_a_c_program_with_a_header_follow_up_that_sends_only_the_source(
        tmp_path: Path) -> None:
    r, ws = converse(tmp_path, "The program:\n\n" + named(C_1, "c"),
                     "The loop skipped the first element. Only **stats.c** changes:\n\n"
                     f"```c\n{STATS_FIXED}```")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    first, second = run_folders(ws)
    assert folder(first) == C_1
    assert folder(second) == {**C_1, "stats.c": STATS_FIXED}
    assert "total: 6" in r.stdout


# --------------------------------------------------------------------- a full resend

def test_a_full_resend_replaces_every_file(tmp_path: Path) -> None:
    fixed = {**PKG_1, "pkg/core.py": CORE_FIXED,
             "main.py": PKG_1["main.py"].replace("'mean:'", "'the mean:'")}
    r, ws = converse(tmp_path, named(PKG_1), "The whole project again:\n\n" + named(fixed))
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert [folder(p) for p in run_folders(ws)] == [PKG_1, fixed]
    files = section(transcript(ws), "Files 2")
    assert "carried" not in files and files.count(": whole") == 3


# --------------------------------------------------------------------- rename and delete

def test_a_rename_and_a_delete_said_in_words(tmp_path: Path) -> None:
    first = {"helpers.py": "def greet(n):\n    return 'hi ' + n\n",
             "old.py": "raise SystemExit('old.py must not be imported')\n",
             "main.py": "import old\nfrom helpers import greet\n\nprint(greet('bob'))\n"}
    main = "from tools import greet\n\nprint(greet('bob'))\n"
    r, ws = converse(
        tmp_path, named(first),
        "Rename `helpers.py` to `tools.py`, and delete `old.py`: it is not needed.\n\n"
        + named({"main.py": main}))
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    one, two = run_folders(ws)
    assert folder(one) == first
    assert folder(two) == {"tools.py": first["helpers.py"], "main.py": main}
    files = section(transcript(ws), "Files 2")
    assert "- tools.py: renamed from helpers.py\n" in files
    assert "- old.py: removed\n" in files
    assert "hi bob" in r.stdout


# --------------------------------------------------------------------- a silent fragment

def test_a_fragment_that_runs_alone_and_prints_nothing_fails(tmp_path: Path) -> None:
    """The follow-up sends one helper, unnamed, that matches nothing in the program: it
    runs alone, exits 0 and prints nothing, which is FAILED (the rules ask for output),
    never PASSED with a wrong program."""
    r, ws = converse(tmp_path,
                     "```python\nprint('total', sum([1, 2]) + 1)\nraise SystemExit(1)\n```",
                     "```python\ndef total(xs):\n    return sum(xs)\n```", retries=1)
    assert r.returncode != 0
    record = the_record(ws)
    assert record["status"] == "FAILED"
    assert "printed nothing" in record["message"]
    assert record["attempts"][-1]["verdict"] == "silent"


# --------------------------------------------------------------------- edits

MAIN_1 = """\
import json


def parse(text):
    return json.loads(text)


def describe(data):
    return ", ".join(sorted(data))


def main():
    data = parse('{"b": 1, "a": 2}')
    line = describe(data)
    assert line == "a=2, b=1", line
    print(line)


main()
"""
DESCRIBED = MAIN_1.replace('return ", ".join(sorted(data))',
                           'return ", ".join(f"{k}={data[k]}" for k in sorted(data))')
UTIL = "UNIT = 'ms'\n"


def _first(main: str = MAIN_1) -> str:
    return "Two files.\n\n" + named({"util.py": UTIL, "main.py": main})


def _two_runs(r: subprocess.CompletedProcess[str], ws: Path, second: str) -> None:
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    one, two = run_folders(ws)
    assert folder(one) == {"util.py": UTIL, "main.py": MAIN_1}
    assert folder(two) == {"util.py": UTIL, "main.py": second}
    assert "a=2, b=1" in r.stdout and the_record(ws)["status"] == "PASSED"


def test_a_unified_diff(tmp_path: Path) -> None:
    diff = ("```diff\n--- a/main.py\n+++ b/main.py\n@@ -8,2 +8,2 @@\n"
            " def describe(data):\n"
            '-    return ", ".join(sorted(data))\n'
            '+    return ", ".join(f"{k}={data[k]}" for k in sorted(data))\n```')
    r, ws = converse(tmp_path, _first(), "Print the values too:\n\n" + diff)
    _two_runs(r, ws, DESCRIBED)
    assert "- main.py: edited (diff) (runs)\n" in section(transcript(ws), "Files 2")


def test_several_search_replace_blocks_one_needing_whitespace_tolerance(
        tmp_path: Path) -> None:
    second = DESCRIBED.replace("parse('{", "parse(text='{")
    blocks = (
        "main.py\n```python\n<<<<<<< SEARCH\n"
        'def describe(data):\n    return ", ".join(sorted(data))\n=======\n'
        'def describe(data):\n    return ", ".join(f"{k}={data[k]}" for k in sorted(data))\n'
        ">>>>>>> REPLACE\n```\n\n"
        # Indented by two spaces instead of four, as a chat page's copy may leave it.
        "main.py\n```python\n<<<<<<< SEARCH\n"
        "  data = parse('{\"b\": 1, \"a\": 2}')\n=======\n"
        "  data = parse(text='{\"b\": 1, \"a\": 2}')\n>>>>>>> REPLACE\n```")
    r, ws = converse(tmp_path, _first(), "Two edits:\n\n" + blocks)
    _two_runs(r, ws, second)
    assert "- main.py: edited (search-replace) (runs)\n" in section(transcript(ws), "Files 2")


def test_a_python_function_replaced(tmp_path: Path) -> None:
    fn = 'def describe(data):\n    return ", ".join(f"{k}={data[k]}" for k in sorted(data))\n'
    r, ws = converse(tmp_path, _first(),
                     f"Replace `describe()` in `main.py` with:\n\n```python\n{fn}```")
    _two_runs(r, ws, DESCRIBED)
    assert "- main.py: edited (function) (runs)\n" in section(transcript(ws), "Files 2")


def test_a_c_function_replaced(tmp_path: Path) -> None:
    fn = ("int total(const int *v, int n) {\n    int s = 0;\n"
          "    for (int i = 0; i < n; i++) s += v[i];\n    return s;\n}\n")
    r, ws = converse(tmp_path, named(C_1, "c"),
                     f"Replace `total()` in `stats.c` with:\n\n```c\n{fn}```")
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    one, two = run_folders(ws)
    assert folder(one) == C_1
    assert folder(two) == {**C_1, "stats.c": STATS_FIXED}
    assert "- stats.c: edited (function)\n" in section(transcript(ws), "Files 2")


def test_an_elision_merged_by_its_anchors(tmp_path: Path) -> None:
    block = ("```python\n# ... imports and parse() unchanged ...\n\n\n"
             'def describe(data):\n    return ", ".join(f"{k}={data[k]}" for k in sorted(data))\n'
             "\n\ndef main():\n    # ... rest unchanged ...\n```")
    r, ws = converse(tmp_path, _first(), "Update **main.py**:\n\n" + block)
    _two_runs(r, ws, DESCRIBED)
    assert "- main.py: edited (elided) (runs)\n" in section(transcript(ws), "Files 2")


def test_an_edit_that_does_not_apply_asks_for_the_whole_file(tmp_path: Path) -> None:
    """The SEARCH part is not in main.py: nothing runs; one short follow-up asks for the
    whole file, in the same chat, counted as a retry, not a run; the whole file then runs
    with the carried util.py."""
    bad = ("main.py\n```python\n<<<<<<< SEARCH\ndef describe(rows):\n    return rows\n"
           "=======\ndef describe(data):\n    return data\n>>>>>>> REPLACE\n```")
    r, ws = converse(tmp_path, _first(), "Fix:\n\n" + bad,
                     "Here is the complete file.\n\n" + named({"main.py": DESCRIBED}))
    _two_runs(r, ws, DESCRIBED)
    text = transcript(ws)
    asked = section(text, "Prompt 3 (feedback)")
    assert "The edit to main.py did not match the file:" in asked
    assert "Please send the complete main.py." in asked
    assert "main.py: " in section(text, "Attempt 2: edits not applied")
    record = the_record(ws)
    assert record["status"] == "PASSED" and record["prompts"] == 3
    assert [a["n"] for a in record["attempts"]] == [1, 3]  # attempt 2 ran nothing
    assert len(db_rows(ws, "SELECT id FROM attempts")) == 2


# --------------------------------------------------------------------- a Node project

def test_a_node_project_follow_up_that_sends_only_main_js(tmp_path: Path) -> None:
    """package.json names a package (from a loopback registry): it is installed with npm
    before the first run, and the follow-up that sends only main.js runs beside the
    carried package.json and lib/ with it still there."""
    registry = start_registry({"vb-hash": ("1.2.0", {
        "index.js": "module.exports = (s) => '#' + s;\n"})})
    lib = "const hash = require('vb-hash');\nmodule.exports.label = (n) => hash(n);\n"
    first = {"package.json": '{"name": "labels", "dependencies": {"vb-hash": "^1.0.0"}}\n',
             "lib/label.js": lib,
             "main.js": "const { label } = require('./lib/label');\n"
                        "const out = [1, 2].map(label).join(' ');\n"
                        "if (out !== '#1 #2 #3') {\n"
                        "  console.error('got ' + out);\n  process.exit(1);\n}\n"
                        "console.log(out);\n"}
    main = first["main.js"].replace("[1, 2]", "[1, 2, 3]")
    first_answer = "\n\n".join(
        f"**{name}**\n\n```{'json' if name.endswith('json') else 'javascript'}\n{code}```"
        for name, code in first.items())
    try:
        r, ws = converse(tmp_path, first_answer,
                         "Only **main.js** changes:\n\n```javascript\n" + main + "```",
                         extra=("--install",),  # installing is its own consent, not --yes
                         env={"npm_config_registry": url(registry),
                              "npm_config_cache": str(tmp_path / "npm-cache")})
    finally:
        registry.shutdown()
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "installing vb-hash@^1.0.0 with npm" in r.stdout + r.stderr
    assert (ws / "runs" / "node_modules" / "vb-hash" / "index.js").is_file()
    assert not (ws / "runs" / "package.json").exists()
    one, two = run_folders(ws)
    assert folder(one) == first
    assert folder(two) == {**first, "main.js": main}
    assert "#1 #2 #3" in r.stdout


# --------------------------------------------------------------------- a resumed session

def test_a_resumed_session_goes_on_from_the_files_its_last_attempt_ran(
        tmp_path: Path) -> None:
    """`verifybot run --resume N` in another process: the tree is read back from
    programs/, so the follow-up that sends only pkg/core.py runs beside main.py."""
    r, ws = converse(tmp_path, named(PKG_1),
                     "Only `pkg/core.py` changes:\n\n" + named({"pkg/core.py": CORE_FIXED}),
                     retries=0)
    assert r.returncode != 0 and len(run_folders(ws)) == 1
    again = subprocess.run(
        [*verifybot_cmd(), "run", "--resume", "1", "The mean is wrong", "--llm",
         f"replay:{tmp_path / 'conversation.md'}", "--target", "local", "--yes",
         "--workspace", str(ws), "--judge", "off", "--max-retries", "0"],
        cwd=tmp_path, input="", capture_output=True, text=True, timeout=170)
    assert again.returncode == 0, again.stdout + again.stderr[-3000:]
    one, two = run_folders(ws)
    assert folder(two) == {**PKG_1, "pkg/core.py": CORE_FIXED}
    assert "mean: 4.0" in again.stdout


def test_a_module_the_follow_up_deleted_is_not_installed_from_the_index(
        tmp_path: Path) -> None:
    """The follow-up deletes config/__init__.py but main.py still imports config: that is
    the program's bug to report, never the unrelated index package `config` to install."""
    first = {"config/__init__.py": "NAME = 'demo'\n",
             "main.py": "import config\n\nassert config.NAME == 'prod', config.NAME\n"
                        "print(config.NAME)\n"}
    r, ws = converse(tmp_path, named(first),
                     "Delete `config/__init__.py`; the name is set in main.py now.\n\n"
                     + named({"main.py": first["main.py"]
                              .replace("assert config.NAME == 'prod', config.NAME\n", "")}),
                     retries=1, env={"PIP_INDEX_URL": "http://127.0.0.1:9/simple"})
    assert r.returncode != 0
    one, two = run_folders(ws)
    assert sorted(folder(two)) == ["main.py"]
    assert "ModuleNotFoundError: No module named 'config'" in r.stderr + r.stdout
    assert "installing" not in r.stdout + r.stderr
    assert "## Dependencies" not in transcript(ws)
    assert not (ws / "venv").exists()


# --------------------------------------------------------------------- a recipe

def test_a_recipe_run_keeps_the_tree_too(tmp_path: Path) -> None:
    """Recipes run headless through the same loop: the follow-up's one file runs beside
    the carried ones, and the recipe's criterion is met by the fixed package."""
    (tmp_path / "pkg.md").write_text(answers(
        named(PKG_1), "Only `pkg/core.py` changes:\n\n" + named({"pkg/core.py": CORE_FIXED})))
    (tmp_path / "mean.toml").write_text(
        'name = "mean"\nprompt = "Print the mean of 2, 4 and 6"\nllm = "replay:pkg.md"\n'
        'target = "local"\njudge = "off"\ncriteria = ["contains:mean: 4.0"]\n'
        "max_retries = 1\ntimeout = 20\n")
    r = subprocess.run([*verifybot_cmd(), "recipe", "run", "mean.toml", "--workspace",
                        str(tmp_path / "ws")], cwd=tmp_path, input="", capture_output=True,
                       text=True, timeout=170)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert r.stdout.splitlines()[1].split()[:3] == ["mean", "VERIFIED", "2"]
    one, two = run_folders(tmp_path / "ws")
    assert folder(one) == PKG_1
    assert folder(two) == {**PKG_1, "pkg/core.py": CORE_FIXED}


# --------------------------------------------------------------------- compare

def test_a_compare_cell_keeps_the_tree_too(tmp_path: Path) -> None:
    """compare runs each cell through the same loop: verified at attempt 2, whose run
    folder holds the carried main.py beside the sent pkg/core.py."""
    (tmp_path / "pkg.md").write_text(answers(
        named(PKG_1), "Only `pkg/core.py` changes:\n\n" + named({"pkg/core.py": CORE_FIXED})))
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "mean.toml").write_text(
        'name = "mean"\nprompt = "Print the mean of 2, 4 and 6"\ntarget = "local"\n'
        'judge = "off"\ncriteria = ["contains:mean: 4.0"]\nmax_retries = 1\ntimeout = 20\n')
    r = subprocess.run([*verifybot_cmd(), "compare", "recipes", "--llm", "replay:pkg.md",
                        "--workspace", "ws"], cwd=tmp_path, input="", capture_output=True,
                       text=True, timeout=170)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert "| mean | replay:pkg.md | 1 | VERIFIED | 2 | 2 |" in r.stdout
    (cell,) = (tmp_path / "ws" / "compare").glob("*/cells/mean/*")
    one, two = run_folders(cell)
    assert folder(one) == PKG_1
    assert folder(two) == {**PKG_1, "pkg/core.py": CORE_FIXED}
