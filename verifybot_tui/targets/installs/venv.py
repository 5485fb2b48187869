"""The workspace virtualenv: where packages a program needs get installed.

Programs never run with the tool's own venv (its packages would hide a missing
dependency that the user's machine or the Pi really lacks). Installs go into
``<workspace>/venv``, made with ``--system-site-packages`` so what the system
already provides (on a Pi: RPi.GPIO, picamera2 from apt) stays importable.
The argv builders here are plain so the SSH target can send the same commands.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from verifybot_tui.core.base.errors import VerifyBotError

VENV_DIR = "venv"


class InstallError(VerifyBotError):
    """pip could not install what the program needs: the program's problem, not the target's.

    The loop can tell the LLM (a wrong package name is a common cause); the
    message carries the tail of pip's output because that is where pip says why.
    """


def base_python() -> str:
    """The interpreter under the tool's own venv, if the tool runs in one.

    ``sys._base_executable`` is the python the venv was made from; where it is
    missing or gone, ``python3`` on PATH stands in.
    """
    candidate = getattr(sys, "_base_executable", "") or ""
    if candidate and os.access(candidate, os.X_OK) and not _inside_tool_venv(candidate):
        return candidate
    found = shutil.which("python3", path=clean_path())
    return found or candidate or sys.executable


def _inside_tool_venv(path: str) -> bool:
    if sys.prefix == sys.base_prefix:
        return False
    return Path(path).absolute().is_relative_to(Path(sys.prefix).absolute())


def clean_path(path: str | None = None) -> str:
    """PATH without the tool's own venv bin folder (a shell script's ``python3``)."""
    path = os.environ.get("PATH", os.defpath) if path is None else path
    if sys.prefix == sys.base_prefix:
        return path
    own_bin = str(Path(sys.prefix) / "bin")
    return os.pathsep.join(p for p in path.split(os.pathsep) if p and p != own_bin)


def venv_dir(workspace: Path) -> Path:
    return workspace / VENV_DIR


def venv_python(workspace: Path) -> Path:
    return venv_dir(workspace) / "bin" / "python"


def has_venv(workspace: Path) -> bool:
    return venv_python(workspace).exists()


def python_for_runs(workspace: Path, override: str | None = None) -> str:
    """The request's interpreter, else the workspace venv's, else the base one."""
    if override:
        return override
    if has_venv(workspace):
        return str(venv_python(workspace))
    return base_python()


def create_venv_argv(python: str, folder: str) -> list[str]:
    return [python, "-I", "-m", "venv", "--system-site-packages", folder]  # -I: not a venv.py here


def pip_install_argv(python: str, packages: list[str]) -> list[str]:
    # "--" is not understood by pip's parser, so reject option-looking names instead.
    bad = [p for p in packages if p.startswith("-") or not p.strip()]
    if bad:
        raise InstallError(f"Refusing to pass {bad!r} to pip: package names cannot start with '-'.")
    # -I: pip reads no PYTHONPATH, no user site, not the folder it runs in.
    return [python, "-I", "-m", "pip", "install", "--disable-pip-version-check",
            "--no-input", *packages]


def check_index_names(packages: list[str]) -> None:
    """Only project names of the package index go to pip: a name that looks like a file,
    an archive, a URL or a path is refused (InstallError naming it and what it looks like)."""
    from verifybot_tui.core.answers.deps import not_an_index_name

    bad = [f"{p!r} ({why})" for p in packages if (why := not_an_index_name(p))]
    if bad:
        raise InstallError(f"not installed: {', '.join(bad)}: only package names from the "
                           "index are installed, never a file, an archive, a URL or a path")


# The interpreter started outside the sandbox runs with -I -S: no PYTHON* variables, no
# user site, not the current folder, and no `site` at start, so no `.pth` file of the
# venv (which an installed package can bring) runs. This puts the site folders of the
# venv (and of the system, where the venv includes them) on sys.path without one.
SITE_WITHOUT_PTH = """import os, site, sys
def _site_dirs():
    prefix = sys.prefix
    cfg = os.path.join(prefix, "pyvenv.cfg")
    if not os.path.exists(cfg):
        up = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
        cfg = os.path.join(up, "pyvenv.cfg")
        prefix = up if os.path.exists(cfg) else prefix
    prefixes = [prefix]
    try:
        with open(cfg, encoding="utf-8") as f:
            text = f.read().replace(" ", "").lower()
        if "include-system-site-packages=true" in text:
            prefixes.append(sys.base_prefix)
    except OSError:
        pass
    for path in site.getsitepackages(list(dict.fromkeys(prefixes))):
        if os.path.isdir(path) and path not in sys.path:
            sys.path.append(path)
_site_dirs()
"""


def isolated_argv(python: str, script: str, *args: str) -> list[str]:
    """``python`` running ``script`` outside the sandbox without running a ``.pth``."""
    return [python, "-I", "-S", "-c", SITE_WITHOUT_PTH + script, *args]


def output_tail(text: str, lines: int = 25) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


# Prints the modules it cannot find; run by the checked interpreter itself (locally
# or on the Pi): its sys.path, its venv, its PYTHONPATH.
# The folder ``-c`` puts first is dropped so a directory there is not taken for
# a namespace package. Run through ``isolated_argv``.
FIND_SPECS = """\
import importlib.util, sys
if sys.path and sys.path[0] == "":
    del sys.path[0]
for name in sys.argv[1:]:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        print(name)
"""
