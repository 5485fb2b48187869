"""Extraction: the file names an answer gives its blocks (prose, info strings,
comments), and the hostile names that are refused with a note."""

from __future__ import annotations

import pytest

from verifybot_tui.core.answers.extract import confine_name, extract

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
