"""Extraction: the blocks that are not programs (transcripts, sample output,
commands, tracebacks), and the answer's TIMEOUT and DEPENDENCIES lines."""

from __future__ import annotations

import pytest

from verifybot_tui.core.answers.extract import extract

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
