"""Node packages a program's ``package.json`` names, installed with npm for local runs.

They go into ``<workspace>/runs/node_modules``: every run folder is
``<workspace>/runs/<run_id>``, and Node looks for a package in the ``node_modules`` of
each folder above the program (for ``require`` and ``import`` alike), so each run
finds them without a copy, and the sandbox shows that one folder read-only. Like pip
installs (DESIGN.md, "What a program can see and reach"), the install runs outside
the sandbox only with the user's consent, takes registry names with version ranges
only (``core.answers.deps.node_packages`` checks them), starts from an empty folder,
and runs no package's install scripts.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.targets.installs.venv import InstallError, output_tail

Exec = Callable[[list[str], Path, OutputCallback, float, dict[str, str]], Awaitable[Any]]


def modules_dir(workspace: Path) -> Path:
    return workspace / "runs" / "node_modules"


def missing(workspace: Path, names: list[str]) -> list[str]:
    """The packages not yet in the workspace's node_modules (by their package.json)."""
    root = modules_dir(workspace)
    return [n for n in names if not (root / n / "package.json").is_file()]


def install_argv(npm: str, prefix: Path, specs: list[str]) -> list[str]:
    bad = [s for s in specs if s.startswith("-") or not s.strip()]
    if bad:
        raise InstallError(f"Refusing to pass {bad!r} to npm: package names cannot start "
                           "with '-'.")
    return [npm, "install", "--prefix", str(prefix), "--no-save", "--no-package-lock",
            "--ignore-scripts", "--no-audit", "--no-fund", "--", *specs]


async def install(workspace: Path, specs: list[str], on_output: OutputCallback,
                  run: Exec, env: dict[str, str], timeout: float) -> None:
    """npm install the specs (``express@^4.18.2``) where every run of this workspace
    finds them; an InstallError that says what to do when npm is missing or fails."""
    npm = shutil.which("npm", path=env.get("PATH"))
    if npm is None:
        raise InstallError("npm is not installed on this machine, so the packages of "
                           f"package.json ({', '.join(specs)}) cannot be installed: install "
                           "Node.js with npm (e.g. `sudo apt install npm`), or install them "
                           f"yourself into {modules_dir(workspace)}")
    prefix = modules_dir(workspace).parent
    prefix.mkdir(parents=True, exist_ok=True)
    argv = install_argv(npm, prefix, specs)
    on_output("stdout", f"$ {' '.join(argv)}\n")
    with tempfile.TemporaryDirectory(prefix="verifybot-npm-") as empty:
        done = await run(argv, Path(empty), on_output, timeout, env)
    if done.exit_code != 0:
        why = "timed out" if done.timed_out else f"failed (exit {done.exit_code})"
        raise InstallError(f"npm install {' '.join(specs)} {why}; npm said:\n"
                           f"{output_tail(done.stdout + chr(10) + done.stderr)}")
