"""The local target: run a program on this machine, stream it, stop its whole tree.

Each run gets a fresh folder ``<workspace>/runs/<run_id>/`` holding the
program's files (``run_folder``). The program starts in its own session with
stdin closed, so an ``input()`` ends at once with EOFError instead of hanging,
and so every process it starts can be found again and stopped with it
(``processes``, ``launch``; ``targets.containment`` catches what escapes the
tree). Where bubblewrap works, it runs in the sandbox (``targets.sandbox``), a
compiled program's build first in the same one (``build_step``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from verifybot_tui.core.answers import languages
from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import (
    OutputCallback,
    ReportsState,
    RunRequest,
    RunResult,
)
from verifybot_tui.core.settings.config import Config, TargetConfig
from verifybot_tui.core.settings.secrets import program_env
from verifybot_tui.targets import live_runs
from verifybot_tui.targets.installs import npm, venv
from verifybot_tui.targets.local.build_step import Build
from verifybot_tui.targets.local.outcome import not_started, ran, result
from verifybot_tui.targets.local.processes import Processes
from verifybot_tui.targets.local.reader import noop
from verifybot_tui.targets.local.run_folder import fresh_workdir, safe_name, snapshot, write_files
from verifybot_tui.targets.probe_local import probe_local
from verifybot_tui.targets.sandbox import limits, view
from verifybot_tui.targets.sandbox.bubblewrap import no_sandbox_message, sandbox_argv

COMPILE_TIMEOUT = 120.0
INSTALL_TIMEOUT = 900.0
CHECK_TIMEOUT = 60.0


class LocalTarget(ReportsState):
    """Runs programs here, in ``<workspace>/runs/<run_id>/``."""

    kind = "local"

    def __init__(self, config: TargetConfig, workspace: Path,
                 settings: Config | None = None) -> None:
        self.config = config
        self.settings = settings  # the whole config: which variables are secrets
        self.name = config.name or "local"
        self.workspace = Path(workspace).absolute()  # runs start in their own folder
        self.state = "connected"
        self.processes = Processes(config, self.workspace)

    async def connect(self) -> None:
        # What a SIGKILLed VerifyBot's local runs left behind dies before anything new runs.
        live_runs.sweep_live(self.workspace)
        self.state = "connected"

    async def close(self) -> None:
        await self.processes.close()

    async def probe(self) -> str:
        return await probe_local(self.name, self.workspace, self.python_for())

    def python_for(self, override: str | None = None) -> str:
        return venv.python_for_runs(self.workspace, override)

    def _env(self, python: str) -> dict[str, str]:
        env = view.scrub_env(program_env(os.environ, self.settings))
        env.pop(self.config.password_env, None)
        for key in ("VIRTUAL_ENV", "PYTHONHOME", "__PYVENV_LAUNCHER__"):
            env.pop(key, None)
        env["PATH"] = venv.clean_path(env.get("PATH", os.defpath))
        ws_venv = venv.venv_dir(self.workspace)
        if Path(python).is_relative_to(ws_venv):
            # A shell script's `python3` then finds what `install` put there.
            env["PATH"] = f"{ws_venv / 'bin'}{os.pathsep}{env['PATH']}"
            env["VIRTUAL_ENV"] = str(ws_venv)
        env["PYTHONUNBUFFERED"] = "1"
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # no __pycache__ among the run's files
        return env

    def program_env(self) -> dict[str, str]:
        """The environment of what an answer brings (here: QEMU for the mcu target):
        no secret variable, no agent socket."""
        return self._env(self.python_for())

    async def command(self, argv: list[str], cwd: Path, on_output: OutputCallback,
                      timeout: float, *, read_only: Sequence[str | Path] = (),
                      writable: Sequence[Path] = (), sandboxed: bool = True) -> RunResult:
        """One command here for another target (a firmware's build step, the answer's own
        ``make``): streamed, its whole tree stopped on a timeout or a cancel, as a program
        is, and in the sandbox with ``cwd`` as its only writable folder and ``read_only``
        and the board cache shown. ``sandboxed=False`` is for VerifyBot's own tools that
        need the host's devices (a flash tool and the serial port). ``writable``: folders
        besides ``cwd`` it may write to (a compiler wrapper's log, kept out of the run)."""
        shown = [*read_only, self.workspace / view.BOARD_CACHE,
                 *view.tool_roots([shutil.which(argv[0]) or argv[0]])]
        box = self._sandbox(cwd, shown, writable) if sandboxed else None
        done = await self.processes.exec(argv, cwd, on_output, timeout,
                                         self._env(self.python_for()), box)
        return result(done, shlex.join(argv), cwd)

    # -- Target protocol ------------------------------------------------------------

    async def run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        workdir = fresh_workdir(self.workspace, request.run_id)
        written = write_files(workdir, request)
        lang = languages.language_named(request.language)
        entry = safe_name(request.entry)
        if lang is None:
            return not_started(f"cannot run {request.language!r} programs: the local "
                               f"target knows {', '.join(_lang_names())}", workdir, on_output)
        python = self.python_for(request.python)
        env = self._env(python)
        exe = "prog" if "prog" not in written else "prog.out"
        tool = python if lang.name == "python" else (
            request.compiler if lang.compile and request.compiler else lang.tool)
        found = tool if os.sep in tool else shutil.which(tool, path=env["PATH"])
        if not found or not os.access(found, os.X_OK):
            return not_started(f"{tool} is not installed on this machine", workdir, on_output)
        sandbox = self._sandbox(workdir, view.tool_roots(
            [found, python, shutil.which(lang.tool, path=env["PATH"]) or ""]))
        sources = [name for name in written if languages.language_for_filename(name) is lang]
        if entry not in sources:
            sources.insert(0, entry)
        argv = languages.build_argv(lang.run, entry=entry, sources=sources, exe=exe,
                                    python=python)
        command, built, stage = "", None, None
        before: dict[str, tuple[int, int]] = {}
        if lang.compile:
            cargv = languages.compile_argv(lang, entry=entry, sources=sources, exe=exe,
                                           compiler=request.compiler, flags=request.flags,
                                           includes=languages.include_dirs(list(written)))
            command = shlex.join(cargv)
            written[exe] = None
        if lang.compile and sandbox is not None:
            # Built and run in one sandbox: the run folder is looked at in between.
            stage = Build(cargv, COMPILE_TIMEOUT, lambda: before.update(snapshot(workdir)))
        elif lang.compile:
            try:
                built = await self.processes.exec(cargv, workdir, on_output,
                                                  COMPILE_TIMEOUT, env)
            except OSError as e:
                return not_started(f"cannot start {lang.tool}: {e}", workdir, on_output)
            if built.timed_out or built.exit_code != 0:
                return result(built, command, workdir, compile_failed=True)
        if stage is None:
            before = snapshot(workdir)
        try:
            done = await self.processes.exec(argv, workdir, on_output, request.timeout, env,
                                             sandbox, stage)
        except OSError as e:
            tool = lang.tool if stage is not None else argv[0]
            return not_started(f"cannot start {tool}: {e}", workdir, on_output)
        if stage is not None:
            if stage.outcome is None:
                return result(done, command, workdir, compile_failed=True)
            built = stage.outcome
        return ran(done, f"{command} && {shlex.join(argv)}" if command else shlex.join(argv),
                   workdir, before, set(written), built)

    async def missing_modules(self, modules: list[str], python: str | None = None) -> list[str]:
        if not modules:
            return []
        interpreter = self.python_for(python)
        argv = venv.isolated_argv(interpreter, venv.FIND_SPECS, *modules)
        try:
            out = await self.processes.exec(argv, Path("/"), noop, CHECK_TIMEOUT,
                                   self._env(interpreter))
        except OSError as e:
            raise TargetError(f"Cannot run {interpreter} to check modules: {e}") from None
        if out.exit_code != 0:
            raise TargetError(f"{interpreter} failed while checking modules "
                              f"(exit {out.exit_code}): {venv.output_tail(out.stderr, 5)}")
        return [line for line in out.stdout.split() if line]

    async def install(self, packages: list[str], on_output: OutputCallback) -> str:
        self.workspace.mkdir(parents=True, exist_ok=True)
        python = venv.venv_python(self.workspace)
        env = self._env(str(python))
        if not python.exists():
            base = venv.base_python()
            argv = venv.create_venv_argv(base, str(venv.venv_dir(self.workspace)))
            on_output("stdout", f"$ {shlex.join(argv)}\n")
            try:
                made = await self.processes.exec(argv, self.workspace, on_output,
                                                 INSTALL_TIMEOUT, env)
            except OSError as e:
                raise TargetError(f"Cannot create the venv with {base}: {e}") from None
            if made.exit_code != 0 or not python.exists():
                raise TargetError(
                    f"Cannot create the workspace venv with {base} (exit {made.exit_code}); "
                    f"on Debian/Raspberry Pi OS install python3-venv. "
                    f"{venv.output_tail(made.stdout + made.stderr, 10)}")
        if not packages:
            return str(python)
        venv.check_index_names(packages)
        argv = venv.pip_install_argv(str(python), packages)
        on_output("stdout", f"$ {shlex.join(argv)}\n")
        # From an empty folder: nothing where pip runs can pass for a package it was named.
        with tempfile.TemporaryDirectory(prefix="verifybot-pip-") as empty:
            done = await self.processes.exec(argv, Path(empty), on_output, INSTALL_TIMEOUT, env)
        if done.exit_code != 0:
            why = "timed out" if done.timed_out else f"failed (exit {done.exit_code})"
            raise venv.InstallError(
                f"pip install {' '.join(packages)} {why}; pip said:\n"
                f"{venv.output_tail(done.stdout + chr(10) + done.stderr)}")
        return str(python)

    async def missing_node_packages(self, names: list[str]) -> list[str]:
        return npm.missing(self.workspace, names)

    async def install_node_packages(self, specs: list[str], on_output: OutputCallback) -> None:
        await npm.install(self.workspace, specs, on_output, self.processes.exec,
                          self._env(self.python_for()), INSTALL_TIMEOUT)

    def _sandbox(self, workdir: Path, read_only: Sequence[str | Path] = (),
                 writable: Sequence[Path] = ()) -> list[str] | None:
        """The bubblewrap prefix for a run in ``workdir`` (None: sandbox off, or none
        here), showing ``read_only`` and the workspace venv; ``sandbox = "require"``
        without a sandbox refuses (TargetError) rather than run unsandboxed."""
        if self.config.sandbox == "off":
            return None
        shown = [*read_only, venv.venv_dir(self.workspace), npm.modules_dir(self.workspace)]
        box = sandbox_argv(workdir, self.config.network, shown, writable,
                                       limited=limits.Limits.of(self.config))
        if box is None and self.config.sandbox == "require":
            raise TargetError(no_sandbox_message(self.name))
        return box


def _lang_names() -> list[str]:
    return [lang.name for lang in languages.LANGUAGES]
