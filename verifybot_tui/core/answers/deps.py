"""Which third-party Python packages an answer's code needs.

Only the target knows what is installed, so this module lists candidates and
the loop asks the target (``Target.missing_modules``) which ones are missing.
Imports guarded by ``try/except ImportError`` are optional fallbacks (a Pi
program that also runs on a laptop), so they are never demanded.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from collections.abc import Iterable
from pathlib import PurePosixPath

from verifybot_tui.core.base import python_scan
from verifybot_tui.core.base.ports import ProgramFile

# Import name -> pip name, where they differ (or where the obvious pip name is
# a different, wrong project: "serial" and "yaml" on PyPI are not what code means).
_PIP_NAMES: dict[str, str] = {
    "cv2": "opencv-python",
    "PIL": "pillow",
    "yaml": "pyyaml",
    "serial": "pyserial",
    "serial_asyncio": "pyserial-asyncio",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "bs4": "beautifulsoup4",
    "RPi": "RPi.GPIO",
    "smbus": "smbus",
    "dotenv": "python-dotenv",
    "usb": "pyusb",
    "Adafruit_DHT": "Adafruit_DHT",
    "board": "adafruit-blinka",
    "busio": "adafruit-blinka",
    "digitalio": "adafruit-blinka",
    "analogio": "adafruit-blinka",
    "pwmio": "adafruit-blinka",
    "microcontroller": "adafruit-blinka",
    "neopixel": "adafruit-circuitpython-neopixel",
    "dateutil": "python-dateutil",
    "attr": "attrs",
    "jwt": "PyJWT",
    "Crypto": "pycryptodome",
    "OpenSSL": "pyOpenSSL",
    "git": "GitPython",
    "magic": "python-magic",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "telegram": "python-telegram-bot",
    "discord": "discord.py",
    "bluetooth": "pybluez",
    "paho": "paho-mqtt",
    "zmq": "pyzmq",
    "MySQLdb": "mysqlclient",
    "psycopg2": "psycopg2-binary",
    "fitz": "PyMuPDF",
    "win32api": "pywin32",
    "win32con": "pywin32",
    "websocket": "websocket-client",
    "socketio": "python-socketio",
    "engineio": "python-engineio",
    "Levenshtein": "python-Levenshtein",
    "pyaudio": "PyAudio",
    "alsaaudio": "pyalsaaudio",
    "dns": "dnspython",
    "nmap": "python-nmap",
    "ldap": "python-ldap",
    "jose": "python-jose",
    "multipart": "python-multipart",
    "slugify": "python-slugify",
    "w1thermsensor": "w1thermsensor",
    "mpu6050": "mpu6050-raspberrypi",
    "gi": "PyGObject",
    "cairo": "pycairo",
    "wx": "wxPython",
    "Bio": "biopython",
    "markdown": "Markdown",
    "sounddevice": "sounddevice",
    "kivy": "Kivy",
    "tflite_runtime": "tflite-runtime",
    "picamera2": "picamera2",
    "smbus2": "smbus2",
    "spidev": "spidev",
    "pigpio": "pigpio",
    "gpiozero": "gpiozero",
    "lgpio": "lgpio",
    "can": "python-can",
    "evdev": "evdev",
    "pynput": "pynput",
    "mfrc522": "mfrc522",
    "ultralytics": "ultralytics",
}

_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__", "__main__"}
_OPTIONAL_HANDLERS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


def pip_name(module: str) -> str:
    """The pip project that provides a top-level import name."""
    top = module.split(".")[0]
    if top in _PIP_NAMES:
        return _PIP_NAMES[top]
    if top.startswith("adafruit_"):
        return "adafruit-circuitpython-" + top[len("adafruit_"):].replace("_", "-")
    return top


def _guarded(handlers: list[ast.ExceptHandler]) -> bool:
    for h in handlers:
        if h.type is None:
            return True
        names = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
        if any(isinstance(n, ast.Name) and n.id in _OPTIONAL_HANDLERS for n in names):
            return True
    return False


class _Imports(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: list[str] = []
        self._optional = 0

    def visit_Try(self, node: ast.Try) -> None:
        optional = _guarded(node.handlers)
        self._optional += optional
        for stmt in node.body:
            self.visit(stmt)
        self._optional -= optional
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_Import(self, node: ast.Import) -> None:
        if not self._optional:
            self.found.extend(a.name.split(".")[0] for a in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not self._optional and not node.level and node.module:
            self.found.append(node.module.split(".")[0])

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else (
            func.id if isinstance(func, ast.Name) else "")
        if (name in ("import_module", "__import__") and node.args and not self._optional
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
                and not node.args[0].value.startswith(".")):
            self.found.append(node.args[0].value.split(".")[0])
        self.generic_visit(node)


class _ImportCollector:
    """_Imports over a program's chunks, in order (core.base.python_scan): one parse of
    the program serves this and the verdict's long-running signs."""

    words: tuple[str, ...] = ("import",)  # import, from x import, import_module, __import__

    def __init__(self) -> None:
        self.visitor = _Imports()

    def visit(self, tree: ast.Module, first_line: int) -> None:
        self.visitor.visit(tree)

    def result(self) -> list[str]:
        return list(self.visitor.found)


python_scan.register("imported_modules", _ImportCollector)


def imported_modules(code: str) -> list[str]:
    """Third-party top-level modules the code imports, in order of first import.

    Standard-library, relative and ``try/except ImportError`` imports are left
    out; code that does not parse gives ``[]`` (the run will show the error).
    """
    found = python_scan.collected(code, "imported_modules")
    if not isinstance(found, list):
        return []
    return [m for m in dict.fromkeys(found) if m and m not in _STDLIB]


def local_modules(files: Iterable[str]) -> set[str]:
    """Module names the project's own files provide (``utils.py``, ``pkg/__init__.py``).

    The file's stem (imported from the entry's folder) and every folder of a path
    (a package, or a namespace package without ``__init__.py``) count.
    """
    names: set[str] = set()
    for f in files:
        path = PurePosixPath(f.replace("\\", "/"))
        if path.suffix in (".py", ".so", ".pyd") or path.name == "__init__.py":
            if path.stem != "__init__":
                names.add(path.stem.split(".")[0])
        names.update(path.parts[:-1])
    return {n for n in names if re.match(r"^[A-Za-z_]\w*$", n)}


def needed_packages(files: list[ProgramFile], declared: list[str],
                    known: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(modules to check on the target, declared pip names).

    Declared names that are really import names (``cv2``, ``serial``) are
    mapped to their pip project; standard-library names are dropped, since
    ``pip install time`` installs something else or nothing. A name that is a
    file or folder of the project, now or in ``known`` (every path the conversation's
    tree held: a module a follow-up deleted), is never a package to install.
    """
    local = local_modules([*(f.name for f in files), *known])
    modules: list[str] = []
    for f in files:
        if f.language == "python" or f.name.endswith(".py"):
            modules += [m for m in imported_modules(f.content) if m not in local]
    pips: list[str] = []
    for name in declared:
        if name in _STDLIB or name in local:
            continue
        mapped = name in _PIP_NAMES or name.startswith("adafruit_")
        pips.append(pip_name(name) if mapped else name)
    return list(dict.fromkeys(modules)), list(dict.fromkeys(pips))


def wanted_packages(files: list[ProgramFile], declared: list[str],
                    known: Iterable[str] = ()) -> dict[str, str]:
    """Pip package to install -> the module whose import proves it is there.

    One entry per project (PEP 503 names: 'Tomli_W' and 'tomli-w' are one), a
    declared name winning over the name guessed from an import.
    """
    modules, pips = needed_packages(files, declared, known)
    wanted = {_canonical(p): (p, _module_guess(p)) for p in pips}
    for m in modules:
        pkg = pip_name(m)
        wanted[_canonical(pkg)] = (wanted.get(_canonical(pkg), (pkg, m))[0], m)
    return dict(wanted.values())


def _canonical(package: str) -> str:
    return re.sub(r"[-_.]+", "-", package.split("[")[0].strip()).lower()


def _module_guess(package: str) -> str:
    return package.split("[")[0].strip().lower().replace("-", "_")


# A project name on the package index (PEP 508: letters, digits, . _ -), optional extras
# and one version clause. pip reads anything else as a file, an archive, a URL or a path
# (a `helper-1.0-py3-none-any.whl` in the working folder is installed from there).
_INDEX_NAME = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
    r"(?:\[[A-Za-z0-9][A-Za-z0-9._-]*(?:,[A-Za-z0-9][A-Za-z0-9._-]*)*\])?"
    r"(?:(?:==|>=|<=|~=|!=|<|>)[A-Za-z0-9][A-Za-z0-9.*+!]*)?$")
_ARCHIVE = re.compile(r"\.(?:whl|zip|tar|tgz|tbz2?|txz|gz|bz2|xz|egg|egg-info|exe|pyz)$",
                      re.IGNORECASE)


def not_an_index_name(name: str) -> str:
    """Why pip must not be given ``name`` ("" when it is a plain index project name)."""
    if "://" in name or name.startswith(("git+", "hg+", "svn+", "bzr+")) or "@" in name:
        return "a URL"
    if any(c in name for c in "/\\~") or name.startswith("."):
        return "a path"
    if _ARCHIVE.search(name.split("[")[0]):
        return "a file or an archive"
    if not _INDEX_NAME.match(name):
        return "not a package name"
    return ""


_REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[A-Za-z0-9,._ -]*\])?\s*"
                          r"(?:[<>=!~;].*)?$")


def requirements(files: list[ProgramFile]) -> tuple[list[str], list[str]]:
    """The project names a ``requirements.txt`` of the project lists (read like a
    DEPENDENCIES line), and a note for each line that is no index project name (an
    option, a URL, a path: nothing but names is ever installed)."""
    names: list[str] = []
    notes: list[str] = []
    for f in files:
        if PurePosixPath(f.name).name.lower() != "requirements.txt":
            continue
        for raw in f.content.splitlines():
            line = raw.split(" #")[0].strip()
            if not line or line.startswith("#"):
                continue
            m = _REQUIREMENT.match(line)
            if m is None or "://" in line or "/" in line.split(";")[0]:
                notes.append(f"{f.name}: {line!r} is not a package name, so it is not "
                             "installed (only names from the package index are)")
                continue
            names.append(m.group(1) + (m.group(2) or "").replace(" ", ""))
    return list(dict.fromkeys(names)), notes


# npm's rules for a package name (lower case, an optional @scope/), and the version
# ranges installed as written: semver ranges and dist-tags, never a URL, path or repo.
_NPM_NAME = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$")
_NPM_RANGE = re.compile(r"^(?:[\^~<>=*xX0-9.|\s-]*|[a-z][a-z0-9._-]*)$")


def node_packages(files: list[ProgramFile]) -> tuple[dict[str, str], list[str]]:
    """What a ``package.json`` of the project lists under ``dependencies``: npm name ->
    the spec to install (``express@^4.18.2``), and a note for each entry that is not
    an index package with a version range (``file:``, a URL, a git repo: not installed)."""
    wanted: dict[str, str] = {}
    notes: list[str] = []
    for f in files:
        if PurePosixPath(f.name).name != "package.json":
            continue
        try:
            data = json.loads(f.content)
        except ValueError as e:
            notes.append(f"{f.name} is not valid JSON ({e}), so its dependencies are not read")
            continue
        deps = data.get("dependencies") if isinstance(data, dict) else None
        if not isinstance(deps, dict):
            continue
        for name, spec in deps.items():
            spec = spec.strip() if isinstance(spec, str) else ""
            if not _NPM_NAME.match(name) or not _NPM_RANGE.match(spec):
                notes.append(f"{f.name}: {name!r}: {spec!r} is not a package of the npm "
                             "registry with a version range, so it is not installed")
                continue
            wanted.setdefault(name, f"{name}@{spec}" if spec else name)
    return wanted, notes
