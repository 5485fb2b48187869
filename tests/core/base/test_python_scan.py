"""One chunked parse of a program serves both checks that read its tree (issue 22).

The chunked pass must find what one whole ``ast.parse`` found: the same imports
in the same order, the same long-running signs on the same lines, nothing for a
program that does not parse. Cutting every top-level statement apart (a chunk
size of one byte) is the hardest case for the cutting, so each program is read
that way and compared with a pass that takes it whole.
"""

from __future__ import annotations

import ast

import pytest

from verifybot_tui.core.answers.deps import imported_modules
from verifybot_tui.core.base import python_scan
from verifybot_tui.core.verify.verdict import long_running_signs

PROGRAMS = [
    "import requests\nimport os\nfrom flask import Flask\napp = Flask(__name__)\n"
    "app.run()\n",
    "@decorator\n\ndef f():\n    pass\nimport numpy\nwhile True:\n    x = 1\n",
    's = """\nimport fake_in_string\nwhile True:\n"""\nimport real_one\n',
    "if a:\n    import b1\nelif c:\n    import b2\nelse:\n    import b3\nwhile 1:\n    pass\n",
    "try:\n    import optional_mod\nexcept ImportError:\n    pass\nfinally:\n    x = 2\n"
    "import needed_mod\n",
    "x = (1,\n2)\nimport serial\ny = 1 + \\\n2\nfor i in itertools.count():\n    print(i)\n",
    "import signal\nsignal.pause()\n",
    "from time import sleep\npause()\nimport socket\ns.accept()\n",
    "import socket\nwhile True:\n    c = s.accept()\n",
    "input()\nimport sys\nfor line in sys.stdin:\n    pass\nsys.stdin.read()\n",
    "class A:\n    def m(self):\n        import yaml\n\nimportlib.import_module('cv2')\n"
    "__import__('pandas.io')\n",
    "import gpiozero\npause()\nbutton.wait_for_press()\ntime.sleep(120)\n",
    "return 5\nimport requests\n",  # ast.parse takes a top-level return; compile does not
    "import requests\nx = (\n",  # does not parse: nothing at all
    "import requests\n\0\n",
    "# only a comment\n",
    "",
    # What the lexical cut must not be fooled by: quotes, brackets and # inside strings
    # and comments, raw strings ending in an escaped quote, continuations, decorators.
    "x = ')'  # it's (\nimport a1\ny = \"\"\"\n(\nwhile True:\n'''\n\"\"\"\nimport a2\n",
    "r = r'\\''\nimport b1\ns = r\"\\\"(\"\nimport b2\nt = '#'\nimport b3\n",
    "@decorator(\n    1)\n@other\ndef f():\n    pass\nimport c1\nwhile True:\n    f()\n",
    "total = 1 + \\\n2\nimport d1\nd = {\n'k': [\n1]}\nimport d2\n",
    "name = f\"{x['k']!r}\" + f'{y[\"(\"]}'\nimport e1\ns = '''\nimport no_e\n'''\n",
    "s = '''one\n(\n\"\"\"\nimport no_f\n'''\nimport f1\n",  # the other triple quote inside
    "x = '''never closed\nimport g1\n",  # cut off inside a string: nothing at all
]


@pytest.fixture(autouse=True)
def fresh_results():
    python_scan._RESULTS.clear()
    yield
    python_scan._RESULTS.clear()


def findings(code: str) -> tuple[list[str], list[str]]:
    python_scan._RESULTS.clear()
    return imported_modules(code), long_running_signs(code, "python")


@pytest.mark.parametrize("code", PROGRAMS)
def test_cut_at_every_statement_finds_what_the_whole_program_gives(
        code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(python_scan, "CHUNK", 1 << 40)
    whole = findings(code)
    monkeypatch.setattr(python_scan, "CHUNK", 1)
    assert findings(code) == whole


def test_the_whole_pass_matches_known_findings() -> None:
    assert findings(PROGRAMS[0]) == (["requests", "flask"],
                                     ["runs a web server (`app.run()`, line 5)"])
    assert findings(PROGRAMS[2])[0] == ["real_one"]
    assert findings(PROGRAMS[8])[1] == ["an endless `while True` loop (line 2)",
                                        "accepts connections in a loop (`accept()`, line 3)"]
    assert findings(PROGRAMS[13]) == ([], [])
    assert findings(PROGRAMS[12])[0] == ["requests"]


def test_both_checks_share_one_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[int] = []
    real = ast.parse

    def counting(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(len(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(python_scan.ast, "parse", counting)
    code = "import requests\nwhile True:\n    pass\n"
    assert imported_modules(code) == ["requests"]
    assert long_running_signs(code, "python") == ["an endless `while True` loop (line 2)"]
    assert parsed == [len(code)]


def test_a_big_program_is_parsed_in_bounded_chunks_and_only_where_needed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    trees: list[int] = []
    compiled: list[int] = []
    real_parse, real_compile = ast.parse, compile

    def parse(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        trees.append(len(source))
        return real_parse(source, *args, **kwargs)

    def compile_(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        compiled.append(len(source))
        return real_compile(source, *args, **kwargs)

    monkeypatch.setattr(python_scan.ast, "parse", parse)
    monkeypatch.setattr(python_scan, "compile", compile_, raising=False)
    code = ("import requests\n" + "print('x' * 40)  # a line of code\n" * 60_000
            + "while True:\n    pass\n")  # 2 MB
    assert findings(code) == (["requests"], ["an endless `while True` loop (line 60002)"])
    assert len(trees) == 2, "trees only for the first chunk (import) and the last (while)"
    assert max(trees) < 2 * python_scan.CHUNK
    assert compiled == [], "the chunks between are only lexed, never compiled"


def test_a_big_program_cut_off_in_a_string_gives_nothing() -> None:
    """An answer cut short: the last chunk, which no check reads, leaves a string open."""
    code = "import requests\n" + "print('x' * 40)\n" * 10_000 + "s = '''cut off here\n"
    assert findings(code) == ([], [])


def test_a_grammar_error_only_where_no_check_reads_leaves_the_findings_to_the_rest() -> None:
    """Documented: a chunk without the checks' words is lexed, not parsed; the run itself
    shows its error, and the imports found elsewhere are still asked about."""
    code = ("import requests\n" + "print('x' * 40)\n" * 10_000 + "x = = 1\n"
            + "print('y')\n" * 10_000)
    assert findings(code)[0] == ["requests"]
