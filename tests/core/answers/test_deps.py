"""Dependency detection on realistic answer code."""

from __future__ import annotations

import pytest

from verifybot_tui.core.answers.deps import (
    imported_modules,
    local_modules,
    needed_packages,
    node_packages,
    pip_name,
    requirements,
    wanted_packages,
)
from verifybot_tui.core.base.ports import ProgramFile

PI_SENSOR = """\
#!/usr/bin/env python3
from __future__ import annotations
import os, sys, time
import json
from datetime import datetime
import RPi.GPIO as GPIO
import board
import adafruit_dht
import numpy as np
from PIL import Image
import cv2
from serial import Serial
from . import sibling
from .helpers import util
import yaml.constructor
import requests

try:
    import ujson as fastjson
except ImportError:
    fastjson = json

def main():
    import smbus2  # imported inside a function still counts
    np.zeros(3)

if __name__ == "__main__":
    main()
"""


def test_imported_modules_of_a_realistic_program() -> None:
    assert imported_modules(PI_SENSOR) == [
        "RPi", "board", "adafruit_dht", "numpy", "PIL", "cv2", "serial", "yaml", "requests",
        "smbus2"]


def test_optional_imports_are_not_demanded() -> None:
    code = ("try:\n    import RPi.GPIO as GPIO\nexcept (ImportError, RuntimeError):\n"
            "    from fake_gpio import GPIO\n"
            "try:\n    import orjson\nexcept Exception:\n    orjson = None\n"
            "try:\n    import must_have\nexcept KeyError:\n    pass\n")
    # The fallback in the handler still counts: it runs when the first import fails.
    assert imported_modules(code) == ["fake_gpio", "must_have"]


def test_dynamic_imports_with_constant_names() -> None:
    code = "import importlib\nm = importlib.import_module('yaml')\nz = __import__('zmq')\n"
    assert imported_modules(code) == ["yaml", "zmq"]


@pytest.mark.parametrize("code", ["def broken(:\n", "print('a'\n", "x = '\x00'\n"])
def test_code_that_does_not_parse_gives_nothing(code: str) -> None:
    assert imported_modules(code) == []


def test_stdlib_only_code_needs_nothing() -> None:
    code = "import asyncio, subprocess, tomllib, sqlite3\nfrom pathlib import Path\n"
    assert imported_modules(code) == []


@pytest.mark.parametrize(("module", "pip"), [
    ("cv2", "opencv-python"), ("PIL", "pillow"), ("yaml", "pyyaml"), ("serial", "pyserial"),
    ("sklearn", "scikit-learn"), ("bs4", "beautifulsoup4"), ("RPi", "RPi.GPIO"),
    ("RPi.GPIO", "RPi.GPIO"), ("smbus", "smbus"), ("smbus2", "smbus2"),
    ("dotenv", "python-dotenv"), ("usb", "pyusb"), ("Adafruit_DHT", "Adafruit_DHT"),
    ("board", "adafruit-blinka"), ("busio", "adafruit-blinka"),
    ("digitalio", "adafruit-blinka"), ("adafruit_dht", "adafruit-circuitpython-dht"),
    ("adafruit_ssd1306", "adafruit-circuitpython-ssd1306"), ("paho", "paho-mqtt"),
    ("requests", "requests"), ("numpy", "numpy"),
])
def test_pip_names(module: str, pip: str) -> None:
    assert pip_name(module) == pip


def test_local_modules() -> None:
    files = ["main.py", "utils.py", "pkg/__init__.py", "pkg/core.py", "src/helpers.py",
             "config.json", "my-script.py"]
    assert local_modules(files) == {"main", "utils", "pkg", "core", "src", "helpers"}


def test_needed_packages_leaves_out_the_answers_own_modules() -> None:
    files = [
        ProgramFile("main.py", "main_1.py",
                    "import requests\nimport utils\nfrom sensors.dht import read\n"
                    "from utils import helper\nimport serial\n", "python"),
        ProgramFile("utils.py", "utils_1.py", "import numpy\nimport requests\n", "python"),
        ProgramFile("sensors/dht.py", "dht_1.py", "import board\n", "python"),
        ProgramFile("run.sh", "run_1.sh", "import notpython\n", "bash"),
    ]
    modules, declared = needed_packages(files, ["requests", "cv2", "time", "utils", "flask"])
    assert modules == ["requests", "serial", "numpy", "board"]
    assert declared == ["requests", "opencv-python", "flask"]


def test_needed_packages_without_python() -> None:
    files = [ProgramFile("main.c", "main_1.c", "#include <stdio.h>\n", "c")]
    assert needed_packages(files, []) == ([], [])


def test_a_module_deleted_by_a_follow_up_is_never_installed() -> None:
    """Attempt 1 had config/__init__.py; a follow-up deleted it. `import config` is then
    a bug in the program to report, not the index package `config` to install."""
    main = ProgramFile("main.py", "main_2.py", "import config\nimport requests\n"
                       "from data import rows\n", "python")
    assert wanted_packages([main], []) == {"config": "config", "requests": "requests",
                                           "data": "data"}
    known = ["main.py", "config/__init__.py", "data/rows.csv"]
    assert wanted_packages([main], ["config"], known) == {"requests": "requests"}


def test_requirements_txt_is_read_like_a_dependencies_line() -> None:
    req = ProgramFile("requirements.txt", "requirements_1.txt",
                      "# web\nFlask>=2.3  # the server\nrequests[socks]==2.31.0\n"
                      "tomli; python_version < '3.11'\n-r other.txt\n"
                      "git+https://example.invalid/x.git\n./local-wheel\n\n", "text")
    names, notes = requirements([req])
    assert names == ["Flask", "requests[socks]", "tomli"]
    assert len(notes) == 3 and all("not a package name" in n for n in notes)
    assert any("'-r other.txt'" in n for n in notes)


def test_package_json_dependencies_are_npm_specs() -> None:
    pkg = ProgramFile("package.json", "package_1.json",
                      '{"name": "app", "dependencies": {"express": "^4.18.2", '
                      '"@types/node": "20.x", "left-pad": "latest", "evil": "file:../x", '
                      '"repo": "user/repo", "Bad Name": "1"}, '
                      '"devDependencies": {"jest": "^29"}}', "json")
    wanted, notes = node_packages([pkg])
    assert wanted == {"express": "express@^4.18.2", "@types/node": "@types/node@20.x",
                      "left-pad": "left-pad@latest"}
    assert len(notes) == 3
    broken = ProgramFile("package.json", "package_2.json", '{"dependencies": {', "json")
    assert node_packages([broken])[0] == {}
    assert "not valid JSON" in node_packages([broken])[1][0]
