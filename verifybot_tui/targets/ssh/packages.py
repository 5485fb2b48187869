"""Python packages on the Pi: which modules are missing there, and pip into a venv there.

The workspace venv lives in the remote folder (made with --system-site-packages,
so the Pi's own packages such as RPi.GPIO stay importable); without python3-venv
pip installs for the user instead. Each step is a program run as any other
(process.execute), so a timeout or a stop ends it the same way.
"""

from __future__ import annotations

import posixpath
import shlex

import asyncssh

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.targets.installs.venv import (
    FIND_SPECS,
    VENV_DIR,
    InstallError,
    create_venv_argv,
    output_tail,
    pip_install_argv,
)
from verifybot_tui.targets.ssh.connection import SSHConnection
from verifybot_tui.targets.ssh.outcome import Outcome
from verifybot_tui.targets.ssh.process import execute

INSTALL_TIMEOUT = 900.0


async def missing_modules(link: SSHConnection, modules: list[str],
                          python: str | None = None) -> list[str]:
    """The modules the Python there (``python``, else the workspace's) cannot import."""
    if not modules:
        return []
    conn = await link.connection()
    interpreter = link.python(python)
    cmd = "cd / && " + shlex.join([interpreter, "-c", FIND_SPECS, *modules])
    try:
        r = await conn.run(cmd, timeout=60, encoding="utf-8", errors="replace")
    except (TimeoutError, asyncssh.Error, OSError) as e:
        raise TargetError(f"Could not check Python modules on {link.where}: {e}") from None
    if r.exit_status != 0:
        raise TargetError(f"{interpreter} on {link.where} failed while checking modules "
                          f"(exit {r.exit_status}): {output_tail(str(r.stderr or ''), 5)}")
    return [m for m in str(r.stdout or "").split() if m]


async def _step(link: SSHConnection, argv: list[str], cwd: str,
                on_output: OutputCallback) -> Outcome:
    on_output("stdout", f"$ {shlex.join(argv)}\n")
    done = await execute(link, argv, cwd, INSTALL_TIMEOUT, on_output)
    if done.target_error:
        raise TargetError(done.target_error)
    return done


async def install(link: SSHConnection, packages: list[str], on_output: OutputCallback) -> str:
    """pip install into remote_dir/venv (made with --system-site-packages), else --user.

    The fallback serves a Pi without python3-venv; on Raspberry Pi OS Bookworm
    a --user install also needs --break-system-packages (PEP 668).
    """
    conn = await link.connection()
    home = link.remote_dir
    folder = posixpath.join(home, VENV_DIR)
    venv_py = posixpath.join(folder, "bin", "python")
    try:
        await conn.run(f"mkdir -p {shlex.quote(home)}", timeout=30, check=True)
    except (TimeoutError, asyncssh.Error, OSError) as e:
        raise TargetError(f"Could not create {home} on {link.where}: {e}") from None
    if not link.has_venv:
        made = await _step(link, create_venv_argv("python3", folder), home, on_output)
        link.has_venv = made.exit_code == 0
        if not link.has_venv:
            on_output("stderr", "no venv (is python3-venv installed?): trying pip --user\n")
    if not packages:
        return venv_py if link.has_venv else "python3"
    if link.has_venv:
        python = venv_py
        done = await _step(link, pip_install_argv(venv_py, packages), home, on_output)
    else:
        python = "python3"
        argv = pip_install_argv("python3", packages) + ["--user"]
        done = await _step(link, argv, home, on_output)
        if done.exit_code != 0 and "externally-managed" in done.stderr.text + done.stdout.text:
            done = await _step(link, argv + ["--break-system-packages"], home, on_output)
    if done.exit_code != 0:
        why = "timed out" if done.timed_out else f"failed (exit {done.exit_code})"
        said = output_tail(done.stdout.text + "\n" + done.stderr.text)
        raise InstallError(f"pip install {' '.join(packages)} on {link.where} {why}; pip "
                           f"said:\n{said}")
    return python
