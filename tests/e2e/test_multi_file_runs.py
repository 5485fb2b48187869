"""Multi-file answers run as written, on the local target and over SSH (issue 29).

A Python package with a subpackage, a CLI and its tests; a C project with include/
and src/; a set of JavaScript modules. Each is one answer, its files named in bold
the way answers name them; `verifybot run` (the real CLI, the replay LLM, the loopback
sshd for the SSH target) must lay every file out in the run folder as written and
run the entry there. Before issue 29, files sharing a folder clashed and
**pkg/__init__.py** was saved as init.py: only one file of each landed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_runs import answers
from project import verifybot_cmd

pytestmark = pytest.mark.timeout(180)

PYTHON_PACKAGE = {
    "pkg/__init__.py": '"""Counting words."""\nfrom pkg.core import count_words\n\n'
                       '__all__ = ["count_words"]\n',
    "pkg/core.py": "from collections import Counter\n\n\ndef count_words(text):\n"
                   "    return Counter(text.split())\n",
    "pkg/sub/__init__.py": "",
    "pkg/sub/x.py": "def shout(word):\n    return word.upper() + \"!\"\n",
    "main.py": "import argparse\n\nfrom pkg import count_words\nfrom pkg.sub.x import shout\n\n"
               "parser = argparse.ArgumentParser(description=\"the most common word\")\n"
               "parser.add_argument(\"text\", nargs=\"?\", default=\"the cat and the dog and "
               "the end\")\nargs = parser.parse_args()\n"
               "word, n = count_words(args.text).most_common(1)[0]\n"
               "print(f\"most common: {shout(word)} x{n}\")\n",
    "tests/test_core.py": "from pkg.core import count_words\n\n\ndef test_counts():\n"
                          "    assert count_words(\"a b a\")[\"a\"] == 2\n",
}
C_PROJECT = {
    "include/stats.h": "#ifndef STATS_H\n#define STATS_H\nint sum_squares(const int *v, int n);"
                       "\n#endif\n",
    "src/stats.c": "#include \"stats.h\"\n\nint sum_squares(const int *v, int n) {\n"
                   "    int s = 0;\n    for (int i = 0; i < n; i++) s += v[i] * v[i];\n"
                   "    return s;\n}\n",
    "src/main.c": "#include <stdio.h>\n#include \"stats.h\"\n\nint main(void) {\n"
                  "    int v[] = {1, 2, 3, 4};\n"
                  "    printf(\"sum of squares: %d\\n\", sum_squares(v, 4));\n    return 0;\n}\n",
}
JS_MODULES = {
    "lib/math.js": "module.exports = { square: (x) => x * x };\n",
    "lib/format/line.js": "const { square } = require(\"../math\");\n\n"
                          "module.exports.line = (n) => `${n}^2 = ${square(n)}`;\n",
    "main.js": "const { line } = require(\"./lib/format/line\");\n\n"
               "[1, 2, 3].forEach((n) => console.log(line(n)));\n",
}
LANGS = {".py": "python", ".c": "c", ".h": "c", ".js": "javascript"}
CASES = {
    "python_package": (PYTHON_PACKAGE, "most common: THE! x3"),
    "c_project": (C_PROJECT, "sum of squares: 30"),
    "js_modules": (JS_MODULES, "3^2 = 9"),
}


def _answer(files: dict[str, str]) -> str:
    """One answer, each file under its name in bold, the way answers are written."""
    parts = ["Here is the project, file by file."]
    for name, code in files.items():
        parts.append(f"**{name}**\n\n```{LANGS[Path(name).suffix]}\n{code}```")
    return "\n\n".join(parts) + "\n"


def _run(tmp_path: Path, files: dict[str, str], target: str, config: Path | None
         ) -> subprocess.CompletedProcess[str]:
    replay = tmp_path / "answer.md"
    replay.write_text(answers(_answer(files)))
    args = [*verifybot_cmd(), "run", "Write the project", "--llm", f"replay:{replay}",
            "--target", target, "--yes", "--workspace", str(tmp_path / "ws"),
            "--judge", "off"]
    if config is not None:
        args += ["--config", str(config)]
    return subprocess.run(args, cwd=tmp_path, input="", capture_output=True, text=True,
                          timeout=150, env=dict(os.environ))


def _laid_out(run_dir: Path, files: dict[str, str]) -> None:
    for name, code in files.items():
        assert (run_dir / name).read_text() == code, name


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_multi_file_answer_runs_as_written_on_the_local_target(tmp_path: Path,
                                                                  case: str) -> None:
    files, expected = CASES[case]
    r = _run(tmp_path, files, "local", None)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert expected in r.stdout
    assert "left out" not in r.stdout + r.stderr
    runs = [p for p in (tmp_path / "ws" / "runs").iterdir() if not p.name.startswith(".")]
    assert len(runs) == 1
    _laid_out(runs[0], files)
    programs = tmp_path / "ws" / "programs"
    for name in files:  # every file saved, versioned, in its folder
        p = Path(name)
        assert (programs / p.parent / f"{p.stem}_1{p.suffix}").read_text() == files[name]


@pytest.mark.ssh
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_multi_file_answer_runs_as_written_on_the_ssh_target(sshd, remote_dir,  # type: ignore[no-untyped-def]
                                                                tmp_path: Path, case: str) -> None:
    files, expected = CASES[case]
    cfg = sshd.write_config_toml(tmp_path / "config.toml", remote_dir[0])
    r = _run(tmp_path, files, "pi", cfg)
    assert r.returncode == 0, r.stdout + r.stderr[-3000:]
    assert expected in r.stdout
    assert "left out" not in r.stdout + r.stderr
    runs = [p for p in Path(remote_dir[1], "runs").iterdir() if not p.name.startswith(".")]
    assert len(runs) == 1
    _laid_out(runs[0], files)
