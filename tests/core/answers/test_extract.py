"""Extraction: every fence and hint form an LLM answer uses, and hostile names."""

from __future__ import annotations

import pytest
from project import ROOT

from verifybot_tui.core.answers import extract as extract_mod
from verifybot_tui.core.answers import hints as hints_mod
from verifybot_tui.core.answers import markdown_walk as walk_mod
from verifybot_tui.core.answers.extract import confine_name, extract, guess_language

# --------------------------------------------------------------------------- fences


def test_backtick_and_tilde_fences_with_language_and_line() -> None:
    md = "Intro\n\n```python\nprint(1)\n```\n\ntext\n\n~~~c\nint main(void){return 0;}\n~~~\n"
    ex = extract(md)
    assert [(b.language, b.line, b.runnable) for b in ex.blocks] == [
        ("python", 3, True), ("c", 9, True)]
    assert ex.blocks[0].code == "print(1)\n"
    assert ex.blocks[1].info == "c"


def test_code_ends_with_exactly_one_newline() -> None:
    ex = extract("```python\n\nx = 1\n\n\n\n```\n")
    assert ex.blocks[0].code == "\nx = 1\n"


def test_longer_fences_keep_shorter_ones_inside() -> None:
    md = ("`````python\n"
          "README = '''\n"
          "````bash\n"
          "```\n"
          "echo inner\n"
          "```\n"
          "````\n"
          "'''\n"
          "print(README)\n"
          "`````\n")
    ex = extract(md)
    assert len(ex.blocks) == 1
    block = ex.blocks[0]
    assert block.language == "python" and block.runnable
    assert "````bash\n```\necho inner\n```\n````\n" in block.code
    assert block.code.endswith("print(README)\n")


def test_fences_inside_lists_and_quotes() -> None:
    md = ("1. Install:\n\n"
          "   ```bash\n"
          "   pip install requests\n"
          "   ```\n\n"
          "2. Save **app.py**:\n\n"
          "   ```python\n"
          "   import requests\n"
          "   if True:\n"
          "       print(requests.__version__)\n"
          "   ```\n\n"
          "> ```js\n"
          "> console.log('quoted')\n"
          "> ```\n")
    ex = extract(md)
    assert [b.language for b in ex.blocks] == ["bash", "python", "javascript"]
    app = ex.blocks[1]
    assert app.filename == "app.py" and app.line == 9
    assert app.code == "import requests\nif True:\n    print(requests.__version__)\n"
    assert ex.blocks[2].code == "console.log('quoted')\n"


def test_fence_indented_too_far_in_a_list_is_still_found() -> None:
    # Eight spaces inside a list item make CommonMark see indented code.
    md = "- step one\n\n        ```python\n        print('deep')\n        ```\n"
    ex = extract(md)
    assert len(ex.blocks) == 1
    assert ex.blocks[0].language == "python"
    assert ex.blocks[0].code == "print('deep')\n"
    assert ex.blocks[0].line == 3


def test_crlf_and_stray_cr_are_removed() -> None:
    md = "**main.py**\r\n\r\n```python\r\nprint('a')\r\nprint('b')\r\n```\r\nTIMEOUT: 45\r\n"
    ex = extract(md)
    block = ex.blocks[0]
    assert block.code == "print('a')\nprint('b')\n"
    assert "\r" not in block.code
    assert block.filename == "main.py"
    assert ex.timeout == 45


def test_unclosed_fence_is_kept_with_a_note() -> None:
    ex = extract("Here:\n\n```python\nprint('cut off mid-answer')\n")
    assert ex.blocks[0].code == "print('cut off mid-answer')\n"
    assert any("not closed" in n for n in ex.notes)
    assert not any("not closed" in n for n in extract("```python\nx=1\n```\n").notes)


def test_web_copy_spaces_are_repaired() -> None:
    ex = extract("```python\nif True:\n\u00a0\u00a0\u00a0\u00a0print(1)\u200b\n```\n")
    assert ex.blocks[0].code == "if True:\n    print(1)\n"
    assert any("non-breaking" in n for n in ex.notes)


def test_empty_block_is_not_a_program() -> None:
    ex = extract("```python\n```\n")
    assert ex.blocks[0].code == ""
    assert not ex.blocks[0].runnable and "empty" in ex.blocks[0].reason
    assert ex.programs == []


# --------------------------------------------------------------------------- languages


@pytest.mark.parametrize(("info", "language"), [
    ("python", "python"), ("Python3", "python"), ("py", "python"), ("sh", "bash"),
    ("shell", "bash"), ("c++", "cpp"), ("cpp", "cpp"), ("js", "javascript"),
    ("node", "javascript"), ("language-python", "python"), ("{.python}", "python"),
])
def test_info_string_languages(info: str, language: str) -> None:
    code = {"python": "print(1)", "bash": "echo 1", "cpp": "int main(){}",
            "javascript": "console.log(1)"}[language]
    ex = extract(f"```{info}\n{code}\n```\n")
    assert ex.blocks[0].language == language
    assert ex.blocks[0].runnable


@pytest.mark.parametrize(("info", "filename"), [
    ('python title="sensor.py"', "sensor.py"),
    ("python:main.py", "main.py"),
    ("python main.py", "main.py"),
    ("python filename=src/app.py", "src/app.py"),
    ("main.py", "main.py"),
])
def test_info_string_carries_a_filename(info: str, filename: str) -> None:
    ex = extract(f"```{info}\nprint('x')\n```\n")
    assert ex.blocks[0].language == "python"
    assert ex.blocks[0].filename == filename
    assert ex.blocks[0].info == info


def test_a_title_that_is_not_a_filename_names_nothing() -> None:
    ex = extract('```python title="Blink the LED"\nprint(1)\n```\n')
    assert ex.blocks[0].filename is None


def test_data_languages_are_kept_but_not_run() -> None:
    ex = extract('Save as `config.json`:\n\n```json\n{"pin": 17}\n```\n\n'
                 "```yaml\na: 1\n```\n")
    assert [(b.language, b.runnable) for b in ex.blocks] == [("json", False), ("yaml", False)]
    assert "json" in ex.blocks[0].reason
    assert ex.blocks[0].filename == "config.json"


def test_shebang_decides_the_language_first() -> None:
    ex = extract("```\n#!/usr/bin/env python3\nprint('hi')\n```\n\n"
                 "```\n#!/bin/bash\necho hi\n```\n")
    assert [b.language for b in ex.blocks] == ["python", "bash"]
    assert all(b.runnable for b in ex.blocks)


@pytest.mark.parametrize(("shebang", "language"), [
    ("#!/usr/bin/python3.11", "python"), ("#!/usr/bin/env -S python3 -u", "python"),
    ("#!/bin/sh", "bash"), ("#!/usr/bin/env node", "javascript"), ("#!/usr/bin/perl", ""),
])
def test_shebang_forms(shebang: str, language: str) -> None:
    from verifybot_tui.core.answers.guess import shebang_language
    assert shebang_language(f"{shebang}\nx\n") == language


def test_shell_commands_tagged_python_are_read_as_commands() -> None:
    md = "```python\npip install requests\n```\n\n```python\nimport requests\n```\n"
    ex = extract(md)
    assert ex.blocks[0].language == "bash" and not ex.blocks[0].runnable
    assert ex.dependencies == ["requests"]
    assert any("tagged python" in n for n in ex.notes)


@pytest.mark.parametrize(("code", "language"), [
    ("import time\nfor i in range(3):\n    print(i)\n    time.sleep(1)\n", "python"),
    ("def f(x):\n    return x * 2\n\nprint(f(3))\n", "python"),
    ('#include <stdio.h>\nint main(void) {\n    printf("hi\\n");\n    return 0;\n}\n', "c"),
    ('#include <iostream>\nint main() {\n    std::cout << "hi" << std::endl;\n}\n', "cpp"),
    ("function f(a) {\n  return a + 1;\n}\nconsole.log(f(2));\n", "javascript"),
    ('for f in *.txt; do\n  echo "$f"\ndone\n', "bash"),
])
def test_untagged_blocks_are_guessed(code: str, language: str) -> None:
    assert guess_language(code) == language
    ex = extract(f"```\n{code}```\n")
    assert ex.blocks[0].language == language
    assert ex.blocks[0].runnable
    assert any("guessed" in n for n in ex.notes)


def test_untagged_prose_is_not_guessed_into_a_program() -> None:
    ex = extract("```\nThe quick brown fox jumps over the lazy dog.\n```\n")
    block = ex.blocks[0]
    assert block.language == "" and not block.runnable
    assert "no language" in block.reason


def test_untagged_block_takes_its_language_from_the_name_before_it() -> None:
    ex = extract("### helpers.py\n\n```\nx = 1\n```\n")
    assert ex.blocks[0].language == "python"
    assert ex.blocks[0].filename == "helpers.py"


# --------------------------------------------------------------------------- filename hints


@pytest.mark.parametrize("prose", [
    "Save this as **blink.py**:",
    "Save this as `blink.py`:",
    "### blink.py",
    "#### `blink.py`",
    "## 2. blink.py",
    "# blink.py (updated)",
    "File: blink.py",
    "**File:** `blink.py`",
    "Filename: blink.py",
    "*blink.py*",
])
def test_prose_hint_forms(prose: str) -> None:
    ex = extract(f"Intro.\n\n{prose}\n\n```python\nprint('on')\n```\n")
    assert ex.blocks[0].filename == "blink.py"


@pytest.mark.parametrize("first_line", [
    "# file: blink.py", "# filename: blink.py", "# blink.py", "# File: blink.py",
])
def test_first_line_comment_hint_is_kept_in_the_code(first_line: str) -> None:
    ex = extract(f"```python\n{first_line}\nprint('on')\n```\n")
    assert ex.blocks[0].filename == "blink.py"
    assert ex.blocks[0].code == f"{first_line}\nprint('on')\n"


def test_comment_hints_in_other_languages_and_after_a_shebang() -> None:
    ex = extract("```c\n// file: src/main.c\nint main(void){return 0;}\n```\n\n"
                 "```bash\n#!/bin/bash\n# run.sh\necho hi\n```\n\n"
                 "```js\n/* server.js */\nconsole.log(1)\n```\n")
    assert [b.filename for b in ex.blocks] == ["src/main.c", "run.sh", "server.js"]


def test_a_hint_never_names_a_block_of_another_language() -> None:
    md = ("Here is `utils.py`; first install the library:\n\n"
          "```bash\nsudo apt install -y python3-smbus\n```\n\n"
          "```python\ndef helper():\n    return 1\n```\n")
    ex = extract(md)
    bash, py = ex.blocks
    assert bash.filename is None
    assert py.filename == "utils.py"


def test_two_announced_files_then_two_blocks() -> None:
    md = ("Create two files, `app.py` and `util.py`.\n\n"
          "```python\nimport util\nprint(util.x)\n```\n\n"
          "```python\nx = 1\n```\n")
    ex = extract(md)
    assert [b.filename for b in ex.blocks] == ["app.py", "util.py"]


def test_hints_do_not_leak_past_prose_that_has_its_own_hint() -> None:
    md = ("Mentioned `old.py` and `spare.py`.\n\n```python\nprint(1)\n```\n\n"
          "Now `notes.txt` matters.\n\n```python\nprint(2)\n```\n")
    ex = extract(md)
    assert ex.blocks[0].filename == "old.py"
    assert ex.blocks[1].filename is None


def test_same_name_twice_the_later_block_counts() -> None:
    md = ("**main.py**\n\n```python\nprint('v1')\n```\n\nBetter:\n\n"
          "**main.py**\n\n```python\nprint('v2')\n```\n")
    ex = extract(md)
    assert [b.filename for b in ex.blocks] == [None, "main.py"]
    assert [b.code for b in ex.programs] == ["print('v2')\n"]
    assert "replaced" in ex.blocks[0].reason


@pytest.mark.parametrize(("md", "filename"), [
    pytest.param("**main.py**\n\n```python\n# file: other.py\nprint(1)\n```\n", "other.py",
                 id="comment-hint-beats-the-prose-hint"),
    pytest.param("Call `time.sleep` and `GPIO.setup` here:\n\n```python\nprint(1)\n```\n", None,
                 id="ordinary-inline-code-is-not-a-filename"),
    pytest.param("Put `config.json` next to `main.py`:\n\n```python\nprint(1)\n```\n", "main.py",
                 id="the-next-unused-fitting-hint-is-taken"),
    pytest.param("**util.h**\n\n```c\nint f(void);\n```\n", "util.h",
                 id="c-header-hint-fits-a-c-block"),
    pytest.param("**src/pkg/app.py**\n\n```python\nprint(1)\n```\n", "src/pkg/app.py",
                 id="subfolders-are-allowed"),
    pytest.param("Install **Node.js** first, then:\n\n```js\nconsole.log(1)\n```\n", None,
                 id="product-names-are-not-file-names"),
    pytest.param("**main.py:**\n\n```python\nprint(1)\n```\n", "main.py",
                 id="bold-name-with-a-trailing-colon"),
])
def test_the_first_blocks_filename(md: str, filename: str | None) -> None:
    assert extract(md).blocks[0].filename == filename


# --------------------------------------------------------------------------- hostile names


@pytest.mark.parametrize(("name", "why"), [
    ("/etc/passwd", "absolute"),
    ("../../etc/x", "leaves programs/"),
    ("a/../../b.py", "leaves programs/"),
    ("C:\\Windows\\evil.py", "drive"),
    ("c:evil.py", "drive"),
    ("..\\..\\evil.py", "leaves programs/"),
    ("\\\\server\\share\\x.py", "absolute"),
    ("bad\x00name.py", "control"),
    ("bad\nname.py", "control"),
    ("bad\x1b[31mname.py", "control"),
    ("CON.txt", "reserved"),
    ("con", "reserved"),
    ("sub/LPT1.py", "reserved"),
    ("nul.tar.gz", "reserved"),
    ("COM9", "reserved"),
    ("~/x.py", "home"),
    ("~root/x.py", "home"),
    ("", "empty"),
    ("   ", "empty"),
    ("...", "not a file name"),
    ("./.", "names no file"),
    ("a" * 256 + ".py", "255 bytes"),
    ("é" * 128 + ".py", "255 bytes"),  # 259 bytes in UTF-8, 131 characters
    ("x.py:stream", "not allowed"),
    ("what?.py", "not allowed"),
])
def test_confine_name_rejects(name: str, why: str) -> None:
    safe, reason = confine_name(name)
    assert safe is None
    assert why in reason


@pytest.mark.parametrize(("name", "safe"), [
    ("main.py", "main.py"),
    ("./main.py", "main.py"),
    ("src//app.py", "src/app.py"),
    ("src\\app.py", "src/app.py"),
    (".env", ".env"),
    ("console.py", "console.py"),  # "console" is not CON
    ("COM10.py", "COM10.py"),
    ("my file.py", "my file.py"),
    ("a" * 255, "a" * 255),
])
def test_confine_name_accepts(name: str, safe: str) -> None:
    assert confine_name(name) == (safe, "")


@pytest.mark.parametrize(("prose", "shown"), [
    ("File: ../../etc/x", "../../etc/x"),
    ("**/etc/cron.d/evil.sh**", "/etc/cron.d/evil.sh"),
    ("`C:\\Users\\x\\evil.sh`", "C:\\Users\\x\\evil.sh"),
    ("### CON.sh", "CON.sh"),
    ("`~/.bashrc.sh`", "~/.bashrc.sh"),
])
def test_hostile_hints_are_rejected_with_a_note(prose: str, shown: str) -> None:
    ex = extract(f"{prose}\n\n```bash\necho pwned\n```\n")
    block = ex.blocks[0]
    assert block.filename is None
    assert block.runnable  # the code is still offered, under a generated name
    assert f"filename '{shown}' rejected:" in "\n".join(ex.notes)
    assert any(n.endswith("saved under a generated name") for n in ex.notes)


def test_hostile_comment_hint_and_info_name() -> None:
    ex = extract("```python\n# file: ../../../root/.profile.py\nprint(1)\n```\n\n"
                 '```python title="/tmp/x.py"\nprint(2)\n```\n')
    assert [b.filename for b in ex.blocks] == [None, None]
    notes = "\n".join(ex.notes)
    assert "filename '../../../root/.profile.py' rejected: it leaves programs/" in notes
    assert "filename '/tmp/x.py' rejected: it is an absolute path" in notes


def test_control_characters_are_escaped_in_notes() -> None:
    ex = extract("```python\n# file: a\x1b[2Jb.py\nprint(1)\n```\n")
    assert ex.blocks[0].filename is None
    assert "\x1b" not in "\n".join(ex.notes)
    assert "a\\x1b[2Jb.py" in "\n".join(ex.notes)


def test_very_long_hint_is_rejected() -> None:
    name = "x" * 300 + ".py"
    ex = extract(f"**{name}**\n\n```python\nprint(1)\n```\n")
    assert ex.blocks[0].filename is None
    assert any("longer than 255 bytes" in n for n in ex.notes)


# --------------------------------------------------------------------------- not programs


@pytest.mark.parametrize("info", ["text", "console", "output", "plaintext", "log", "pycon"])
def test_text_and_console_fences_are_not_programs(info: str) -> None:
    ex = extract(f"```{info}\nhello\n```\n")
    assert not ex.blocks[0].runnable
    assert info in ex.blocks[0].reason


@pytest.mark.parametrize("code", [
    "$ python3 blink.py\nLED on\nLED off\n",
    "$ ls\n$ cd x\n",
    ">>> import math\n>>> math.pi\n3.141592653589793\n",
    "pi@raspberrypi:~ $ python3 t.py\n21.5\n",
    "# a comment\n$ make\n",
])
def test_console_transcripts_are_kept_but_not_run(code: str) -> None:
    for info in ("bash", "python", ""):
        ex = extract(f"```{info}\n{code}```\n")
        block = ex.blocks[0]
        assert not block.runnable, (info, code)
        assert "transcript" in block.reason
        assert block.code == code


def test_python_ellipsis_bodies_are_not_a_transcript() -> None:
    code = "class A:\n    def f(self):\n        ...\n    def g(self):\n        ...\nprint(A)\n"
    assert extract(f"```python\n{code}```\n").blocks[0].runnable


@pytest.mark.parametrize("prose", [
    "Expected output:", "You should see something like:", "Sample output", "It should print:",
    "The output will look like this:", "Output:",
])
def test_sample_output_after_a_paragraph_saying_so(prose: str) -> None:
    md = (f"```python\nprint('LED on')\n```\n\n{prose}\n\n```\nLED on\n```\n\n"
          f"{prose}\n\n```bash\nLED on\nLED off\n```\n")
    ex = extract(md)
    assert [b.runnable for b in ex.blocks] == [True, False, False]
    assert "sample output" in ex.blocks[1].reason
    assert "sample output" in ex.blocks[2].reason


def test_output_heading_marks_sample_output() -> None:
    ex = extract("```python\nprint(2)\n```\n\n### Output\n\n```bash\n2\n```\n")
    assert [b.runnable for b in ex.blocks] == [True, False]


def test_a_quoted_traceback_is_not_a_program() -> None:
    md = ("You got:\n\n```python\nTraceback (most recent call last):\n"
          '  File "main.py", line 1, in <module>\nNameError: x\n```\n')
    block = extract(md).blocks[0]
    assert not block.runnable and "traceback" in block.reason


def test_blocks_that_are_not_files_take_no_name() -> None:
    md = ("The error in `main.py`:\n\n```python\nTraceback (most recent call last):\n"
          "NameError: x\n```\n\nRunning `demo.py` shows:\n\n```python\n$ python3 demo.py\n"
          "hi\n```\n\nCreate `requirements.txt`:\n\n```text\nrequests==2.32.0\n```\n")
    ex = extract(md)
    assert [b.filename for b in ex.blocks] == [None, None, "requirements.txt"]
    assert not any(b.runnable for b in ex.blocks)


def test_partial_code_is_an_elided_block_with_a_note() -> None:
    md = "```python\nimport time\n# ... rest of the code unchanged\nprint(1)\n```\n"
    ex = extract(md)
    block = ex.blocks[0]
    assert (block.how, block.content) == ("elided", block.code)  # nothing to merge it with
    assert any("leaves parts of its file out" in n for n in ex.notes)
    plain = extract("```python\n# the rest prints\n```\n")
    assert plain.blocks[0].how == "whole"
    assert not any("parts" in n or "partial" in n for n in plain.notes)


def test_code_after_an_output_paragraph_is_still_code() -> None:
    md = "This script reads the sensor output:\n\n```python\nimport sys\nprint(sys.argv)\n```\n"
    assert extract(md).blocks[0].runnable


def test_install_and_run_commands_are_not_the_program() -> None:
    md = ("Install the libraries:\n\n```bash\npip install requests 'numpy>=1.2' -r req.txt\n"
          "sudo apt-get install -y python3-dev\n```\n\n"
          "```python\nimport requests\nprint(requests.get)\n```\n\n"
          "Run it:\n\n```bash\npython3 fetch.py\n```\n")
    ex = extract(md)
    install, program, run = ex.blocks
    assert not install.runnable and "commands" in install.reason
    assert not run.runnable
    assert [b.code for b in ex.programs] == [program.code]
    assert program.filename == "fetch.py"  # from `python3 fetch.py`
    assert ex.dependencies == ["requests", "numpy"]
    assert any("pip install" in n for n in ex.notes)


def test_a_run_command_after_you_should_see_is_still_a_command() -> None:
    md = ("```python\nprint('blink')\n```\n\nRun it and you should see the LED blink:\n\n"
          "```bash\npython3 blink.py\n```\n")
    ex = extract(md)
    assert "commands" in ex.blocks[1].reason
    assert ex.blocks[0].filename == "blink.py"


@pytest.mark.parametrize("code", [
    "pip install requests", "yarn dev", "npm install\nnpm run dev",
    "$ python3 main.py", "// Create the app.\nnpx create-react-app x"])
def test_a_command_block_is_never_a_program(code: str) -> None:
    """Issue 29: `yarn dev` alone became the program; commands are no program, ever."""
    for text in (f"```bash\n{code}\n```\n", f"```\n{code}\n```\n", f"```sh\n{code}\n```\n"):
        ex = extract(text)
        assert not ex.blocks[0].runnable and ex.blocks[0].filename is None, text


def test_declared_dependencies_win_over_pip_install_lines() -> None:
    md = ("```bash\npip install flask\n```\n\n```python\nimport flask\n```\n\n"
          "DEPENDENCIES: none\n")
    assert extract(md).dependencies == []


# --------------------------------------------------------------------------- TIMEOUT / DEPENDENCIES


@pytest.mark.parametrize(("line", "seconds"), [
    ("TIMEOUT: 120", 120.0),
    ("**TIMEOUT:** 90", 90.0),
    ("- TIMEOUT: 2.5", 2.5),
    ("TIMEOUT: 3 minutes", 180.0),
    ("TIMEOUT: 45s", 45.0),
    ("`TIMEOUT: 15`", 15.0),
])
def test_timeout_in_prose(line: str, seconds: float) -> None:
    ex = extract(f"Here you go.\n\n{line}\n\n```python\nprint(1)\n```\n")
    assert ex.timeout == seconds


def test_timeout_and_dependencies_in_code_comments() -> None:
    md = ("```python\n# TIMEOUT: 120\n# DEPENDENCIES: requests, pyserial\nimport requests\n```\n"
          "\n```c\n// TIMEOUT: 200\nint main(void){return 0;}\n```\n")
    ex = extract(md)
    assert ex.timeout == 200
    assert ex.dependencies == ["requests", "pyserial"]
    assert ex.blocks[0].code.startswith("# TIMEOUT: 120\n")  # the code is not touched


def test_timeout_is_not_read_from_code_constants() -> None:
    md = '```python\nTIMEOUT = 5\nconfig = {"TIMEOUT": 9}\nprint(TIMEOUT)\n```\n'
    assert extract(md).timeout is None


@pytest.mark.parametrize(("line", "deps"), [
    ("DEPENDENCIES: requests, numpy", ["requests", "numpy"]),
    ("DEPENDENCIES: none", []),
    ("DEPENDENCIES: None (standard library only)", []),
    ("**DEPENDENCIES:** `RPi.GPIO`, `smbus2`", ["RPi.GPIO", "smbus2"]),
    ("DEPENDENCIES: pip install flask requests", ["flask", "requests"]),
    ("DEPENDENCIES: numpy>=1.24, opencv-python==4.8.0.74", ["numpy", "opencv-python"]),
    ("DEPENDENCIES: requests and pyyaml", ["requests", "pyyaml"]),
])
def test_dependencies_lines(line: str, deps: list[str]) -> None:
    assert extract(f"{line}\n\n```python\nprint(1)\n```\n").dependencies == deps


def test_dependency_injection_attempts_are_dropped_with_a_note() -> None:
    md = "DEPENDENCIES: requests, --index-url=http://evil.example, git+https://x/y.git\n"
    ex = extract(md)
    assert ex.dependencies == ["requests"]
    notes = "\n".join(ex.notes)
    assert "--index-url" in notes and "git+https" in notes


def test_no_directives_means_no_timeout_and_no_dependencies() -> None:
    ex = extract("```python\nprint(1)\n```\n")
    assert ex.timeout is None and ex.dependencies == [] and ex.notes == []


# --------------------------------------------------------------------------- a realistic answer


def test_realistic_chatgpt_answer() -> None:
    md = """Here's a complete solution for reading the DHT22 sensor on your Raspberry Pi.

### 1. Install the library

```bash
pip3 install adafruit-circuitpython-dht
sudo apt-get install -y libgpiod2
```

### 2. `dht_reader.py`

```python
#!/usr/bin/env python3
import time
import board
import adafruit_dht

sensor = adafruit_dht.DHT22(board.D4)
for _ in range(5):
    try:
        print(f"{sensor.temperature:.1f} C")
    except RuntimeError as e:
        print("retry:", e)
    time.sleep(2)
```

### 3. Run it

```bash
python3 dht_reader.py
```

Expected output:

```
22.4 C
22.5 C
```

TIMEOUT: 30
DEPENDENCIES: adafruit-circuitpython-dht
"""
    ex = extract(md)
    assert len(ex.blocks) == 4
    [program] = ex.programs
    assert program.filename == "dht_reader.py"
    assert program.language == "python"
    assert program.line == 12
    assert program.code.startswith("#!/usr/bin/env python3\nimport time\n")
    assert ex.timeout == 30
    assert ex.dependencies == ["adafruit-circuitpython-dht"]
    assert [b.runnable for b in ex.blocks] == [False, True, False, False]


# -- huge answers: fence bodies (issue 11, item 9) and inert prose (issue 22) cut out before
# markdown-it -------------------------------------------------------------------------------

_TRICKY = [
    "```\nunclosed\ncode", "```\nunclosed\n", "x\n```py\na\n\nb\n```\nafter\n\n```\n",
    "```\n```\n\n~~~~\n~~~\nin\n~~~~\ntail", "para\n```python\nprint(1)\n```",
    "- item\n```\ncode\n```\n- two\n\n    ```\n    indented\n    ```\n",
    "```a`b\nnot fence\n```\nx\n```\n", "> q\n```\nc\n```\n", "```\n\0nul\n```\n",
    "````\n```\ninner\n```\n````\n", "**main.py**\n```\nprint(1)\n```\n   ```\n",
    "TIMEOUT: 5\n```python\n# file: a.py\nprint(1)\n  ```  \nDEPENDENCIES: requests\n",
]


# Runs of paragraphs that name no file: cut to one line but their last (issue 22).
_INERT = "A plain paragraph with words only\nand a second line\n\n"
_PROSE = [
    "Save `main.py` and `util.py`.\n\n" + _INERT * 4 + "```python\nprint(1)\n```\n"
    + _INERT * 3 + "```python\nprint(2)\n```\n",
    "- item one\n- item two\n\n" + _INERT * 3 + "Expected output:\n\n```\n42\n```\n",
    "> quoted\nlazy line\n\n" + _INERT * 3 + "Title\n===\n\n" + _INERT * 2 + "Words\n---\n",
    "<!--\n\n" + _INERT * 3 + "-->\n\n" + _INERT * 2 + "```\nprint(3)\n```\n",
    "File: Makefile\n\n" + _INERT * 3 + "```\nall:\n\techo hi\n```\n",
    _INERT * 3 + "Run it with `python3 blink.py`\n\n" + _INERT * 2 + "```python\nprint(4)\n```\n",
    _INERT * 2 + "See &#46;env\n\n" + _INERT * 2 + "1. step\n\n" + _INERT * 2 + "```sh\nls\n```",
    "    indented code\n\n" + _INERT * 3 + "**config.json**\n\n" + _INERT * 2 + "```\n{}\n```\n",
]


@pytest.mark.parametrize("text", _TRICKY + _PROSE + [p.read_text() for p in
                                             sorted((ROOT / "examples").glob("*.md"))])
def test_cutting_fence_bodies_and_inert_prose_out_changes_nothing(text: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    whole = extract(text)
    monkeypatch.setattr(walk_mod, "COLLAPSE_ABOVE", -1)  # cut even small answers
    assert repr(extract(text)) == repr(whole)


def test_a_huge_answer_keeps_its_blocks_lines_and_directives(
        monkeypatch: pytest.MonkeyPatch) -> None:
    code = "print('x' * 40)  # a line of code\n" * 60_000  # 2 MB: above COLLAPSE_ABOVE
    text = (f"TIMEOUT: 7\n\n**main.py**\n\n```python\n{code}```\n\nThen:\n\n"
            f"```bash\npython3 main.py\n```\n\nDEPENDENCIES: requests\n")
    assert len(text) > extract_mod.COLLAPSE_ABOVE
    ex = extract(text)
    assert [b.language for b in ex.blocks] == ["python", "bash"]
    assert ex.blocks[0].code == code and ex.blocks[0].line == 5
    assert ex.blocks[1].line == 5 + 60_000 + 5  # body, closing, blank, "Then:", blank
    assert ex.timeout == 7 and ex.dependencies == ["requests"]
    monkeypatch.setattr(walk_mod, "COLLAPSE_ABOVE", 1 << 40)  # markdown-it on it all
    assert repr(extract(text)) == repr(ex)


def test_inert_prose_is_cut_to_one_line_but_its_last() -> None:
    text = "Intro naming `main.py`\n\n" + _INERT * 3 + "```python\nprint(1)\n```\n"
    cut, cuts = extract_mod.collapse_prose(text)
    assert cut == "Intro naming `main.py`\n\nx\n\n" + _INERT + "```python\nprint(1)\n```\n"
    assert cuts == {2: 4}  # "x" stands for two paragraphs and the blank between: 5 lines


def test_fifty_megabytes_of_prose_parse_no_paragraph_inline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the paragraph nearest the block is parsed (its text: sample output?)."""
    parsed: list[str] = []
    real = hints_mod._prose_hints

    def counting(inline, line, heading):  # type: ignore[no-untyped-def]
        parsed.append(inline.content)
        return real(inline, line, heading)

    monkeypatch.setattr(hints_mod, "_prose_hints", counting)
    para = "Some prose with `inline` code and **bold** text. " * 20 + "\n\n"
    text = para * 2000 + "```python\nprint('hi')\n```\n"
    assert len(text) > extract_mod.COLLAPSE_ABOVE
    ex = extract(text)
    assert [b.line for b in ex.blocks] == [4001] and ex.blocks[0].runnable
    assert len(parsed) == 1
