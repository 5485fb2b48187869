"""An Arduino sketch made C++ as the Arduino tools do: ``#include <Arduino.h>``, prototypes.

A sketch (``.ino``, or C++ with ``setup()`` and ``loop()`` and no ``main()``) may call
a function defined further down without declaring it: the Arduino builder adds a
prototype for every function the sketch defines, before the first definition, and
``#include <Arduino.h>`` at the top, with ``#line`` directives so that compiler
messages name the sketch's own file and line. Several ``.ino`` files are one
sketch, joined in order. Pure text: the build (``arduino.py``) writes the result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LITERAL_OR_COMMENT = re.compile(
    r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
_HEAD = re.compile(
    r"(?P<type>(?:[A-Za-z_][\w:<>,]*[\s*&]+)+?)(?P<name>[A-Za-z_]\w*)\s*"
    r"\((?P<params>[^(){};]*(?:\([^(){};]*\)[^(){};]*)*)\)\s*(?:const\s*)?$", re.S)
_NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "else", "do", "sizeof"}
_NOT_TYPES = ("struct", "class", "enum", "union", "namespace", "typedef", "template")
_MAIN = re.compile(r"\bint\s+main\s*\(")
_SETUP_LOOP = (re.compile(r"\bvoid\s+setup\s*\(\s*(?:void)?\s*\)\s*\{"),
               re.compile(r"\bvoid\s+loop\s*\(\s*(?:void)?\s*\)\s*\{"))


def blank(text: str) -> str:
    """Comments and string literals blanked (their newlines kept): what code is left."""
    def keep_lines(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))

    return _LITERAL_OR_COMMENT.sub(keep_lines, text)


def is_sketch_code(text: str) -> bool:
    """C++ written as a sketch: setup() and loop() defined, no main()."""
    code = blank(text)
    return all(p.search(code) for p in _SETUP_LOOP) and not _MAIN.search(code)


@dataclass
class Definition:
    line: int  # 1-based line of the definition's head
    prototype: str  # "void blink(int times);"


def definitions(text: str) -> list[Definition]:
    """The functions a sketch defines at file level, in order (methods and templates left
    out: the Arduino builder does not declare those either)."""
    code = blank(text)
    found: list[Definition] = []
    depth = 0
    start = 0  # where the current file-level statement began
    for i, ch in enumerate(code):
        if ch == "{":
            if depth == 0:
                head = code[start:i]
                found += _definition(code, head, start)
            depth += 1
        elif ch == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            start = i + 1
        elif ch == "\n" and depth == 0 and code[start:i].lstrip().startswith("#"):
            start = i + 1  # a preprocessor line ends at its newline
    return found


def _definition(code: str, head: str, start: int) -> list[Definition]:
    lines = [ln for ln in head.split("\n") if not ln.lstrip().startswith("#")]
    text = " ".join(" ".join(lines).split())
    m = _HEAD.search(text)
    if not m or m.start() != 0 or m.group("name") in _NOT_FUNCTIONS:
        return []
    kind = m.group("type").strip()
    if kind.split()[0] in _NOT_TYPES or "::" in m.group("name") or "::" in kind.split()[-1] \
            or "=" in m.group("params") or "operator" in text:
        return []
    offset = start + len(head) - len(head.lstrip())
    line = code.count("\n", 0, offset) + 1
    return [Definition(line, f"{text.rstrip()};")]


def to_cpp(files: list[tuple[str, str]]) -> str:
    """The sketch's files (name, text), first the main one, as one C++ translation unit."""
    prototypes: list[str] = []
    for _name, text in files:
        for d in definitions(text):
            # declared again even if the sketch declares it (later, or in another file):
            # a repeated declaration is legal C++, a missing one is an error
            called = re.search(r"(\w+)\s*\(", d.prototype)
            if called and called.group(1) not in ("setup", "loop") and \
                    d.prototype not in prototypes:
                prototypes.append(d.prototype)
    out = ["#include <Arduino.h>"]
    for n, (name, text) in enumerate(files):
        lines = text.split("\n")
        first = definitions(text)
        at = first[0].line if n == 0 and first else len(lines) + 1
        out.append(f'#line 1 "{name}"')
        out += lines[:at - 1]
        if n == 0:
            out += prototypes
            out.append(f'#line {at} "{name}"')
            out += lines[at - 1:]
    return "\n".join(out) + "\n"
