"""The SSH target: the Target protocol over the kept-open connection (see the package).

A run puts the answer's files and the shell script on one channel (launch),
builds first when the language compiles (a second channel), and runs the
program with its output streamed (process); installs go through packages.
"""

from __future__ import annotations

import posixpath
import shlex

from verifybot_tui.core.answers.languages import (
    build_argv,
    compile_argv,
    include_dirs,
    language_for_filename,
    language_named,
)
from verifybot_tui.core.base.ports import OutputCallback, RunRequest, RunResult
from verifybot_tui.targets import probe_ssh
from verifybot_tui.targets.probe_local import save_context
from verifybot_tui.targets.ssh import packages as remote_packages
from verifybot_tui.targets.ssh.connection import SSHConnection
from verifybot_tui.targets.ssh.launch import payload
from verifybot_tui.targets.ssh.outcome import EXIT_NOT_FOUND, run_result, safe_rel
from verifybot_tui.targets.ssh.process import execute


class SSHTarget(SSHConnection):
    """A machine reached over SSH (a Raspberry Pi, usually); see the package's docstring."""

    kind = "ssh"
    compile_timeout = 120.0

    def stop(self) -> None:
        """Stop whatever runs now; its run() returns with ``cancelled`` set."""
        for event in list(self.stops):
            event.set()

    async def probe(self) -> str:
        conn = await self.connection()
        facts = await probe_ssh.gather_facts(conn, shlex.quote(self.remote_dir), self.python())
        markdown = probe_ssh.render(self.name, self.where, self.remote_dir, facts)
        save_context(self.workspace, self.name, markdown)
        return markdown

    async def missing_modules(self, modules: list[str], python: str | None = None) -> list[str]:
        return await remote_packages.missing_modules(self, modules, python)

    async def install(self, packages: list[str], on_output: OutputCallback) -> str:
        """pip install there (see packages.install); the Python to run the program with."""
        return await remote_packages.install(self, packages, on_output)

    async def run(self, request: RunRequest, on_output: OutputCallback) -> RunResult:
        await self.connection()
        run_dir = posixpath.join(self.remote_dir, "runs", safe_rel(request.run_id))
        lang = language_named(request.language) or language_for_filename(request.entry)
        if lang is None or not lang.run:
            text = f"cannot run {request.language!r} programs on the SSH target\n"
            on_output("stderr", text)
            return RunResult(exit_code=EXIT_NOT_FOUND, stdout="", stderr=text, duration=0.0,
                             workdir=run_dir, stderr_bytes=len(text.encode()))
        files, before = payload(request)
        python = self.python(request.python)
        entry = safe_rel(request.entry)
        names = {safe_rel(f.name) for f in request.files}
        exe = "prog" if "prog" not in names else "prog.out"
        sources = [n for n in sorted(names) if language_for_filename(n) is lang]
        if entry not in sources:
            sources.insert(0, entry)
        if lang.compile:
            argv = compile_argv(lang, entry=entry, sources=sources, exe=exe,
                                compiler=request.compiler, flags=request.flags,
                                includes=include_dirs(names))
            built = await execute(self, argv, run_dir,
                                  max(request.timeout, self.compile_timeout), on_output,
                                  files=files)
            if built.exit_code != 0 or built.target_error:
                return run_result(built, shlex.join(argv), run_dir, compile_failed=True)
            command = shlex.join(argv) + " && "
            files, before = None, None  # the build's folder: its own snapshot, after the build
        else:
            command = ""
        argv = build_argv(lang.run, entry=entry, sources=sources, exe=exe, python=python)
        outcome = await execute(self, argv, run_dir, request.timeout, on_output,
                                snapshot=True, files=files, before=before)
        result = run_result(outcome, command + shlex.join(argv), run_dir)
        if lang.compile:
            result.build_stderr = built.stderr.text  # the warnings of a build that passed
        return result
