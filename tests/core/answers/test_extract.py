"""Extraction: every fence form and language an LLM answer uses, a realistic answer, and
huge answers (the file names are in test_extract_names, what is not a program and the
directives in test_extract_kinds)."""

from __future__ import annotations

import pytest
from project import ROOT

from verifybot_tui.core.answers import extract as extract_mod
from verifybot_tui.core.answers import hints as hints_mod
from verifybot_tui.core.answers import markdown_walk as walk_mod
from verifybot_tui.core.answers.extract import extract, guess_language

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
