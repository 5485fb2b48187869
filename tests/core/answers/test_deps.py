"""Dependency detection on realistic answer code."""

from __future__ import annotations

import pytest

from verifybot_tui.core.answers.deps import (
    imported_modules,
    local_modules,
    needed_packages,
    pip_name,
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
