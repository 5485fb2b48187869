"""Running ``verifybot`` as a user does, and the answers it is fed.

Shared by the CLI's tests, the app's and the targets' (each in its own folder),
so they live here rather than in one test module that the others import.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sqlite3
import subprocess
import textwrap
from pathlib import Path

from project import verifybot_cmd

from verifybot_tui.core.base.ports import ProgramFile, RunRequest, RunResult
from verifybot_tui.core.store.transcript import read_record
from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.core.verify.criterion import Check

UNUSED = "#include <stdio.h>\nint main(void) { int unused; printf(\"hi\\n\"); return 0; }\n"
CLEAN = "#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); return 0; }\n"
C_ANSWER = "Here it is:\n\n```c\n{}```\n"


def run_cli(*args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


def run_here(*args: str, cwd: Path, env: dict[str, str | None] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """``verifybot ARGS`` through the same entry (``main``), in this test process.

    For checks of what a command says and the code it returns, where a process of its
    own proves nothing more: its start (the API clients' import alone is 1.5 s of CPU
    for anthropic's) is paid once per test process instead of once per run. What a
    real process shows (signals, exit by a signal, a terminal) stays with ``run_cli``.
    ``env``: variables set for the call (None: unset). What the entry changes in its
    process is put back after: the working folder, the signal handlers (it sets its
    own), and the environment with the secrets it sealed away (secrets.py moves them
    from the environment into memory, where a later call would still find them).
    """
    from verifybot_tui.cli.entry import main
    from verifybot_tui.core.settings import secrets

    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    handlers = {sig: signal.getsignal(sig) for sig in sigs}
    environ, sealed = dict(os.environ), dict(secrets._SEALED)
    here = os.getcwd()
    out, err = io.StringIO(), io.StringIO()
    try:
        for k, v in (env or {}).items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(environ)
        secrets._SEALED.clear()
        secrets._SEALED.update(sealed)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    return subprocess.CompletedProcess(["verifybot", *args], code, out.getvalue(),
                                       err.getvalue())


def answers(*bodies: str) -> str:
    """A replay transcript: each body becomes '## Answer N' wrapped in a markdown fence."""
    parts = ["# test transcript\n"]
    for i, body in enumerate(bodies, 1):
        parts.append(f"## Answer {i}\n\n````markdown\n{textwrap.dedent(body).strip()}\n````\n")
    return "\n".join(parts)


def python_answer(code: str, prose: str = "Here you go:") -> str:
    return f"{prose}\n\n```python\n{textwrap.dedent(code).strip()}\n```\n"


def db_rows(ws: Path, sql: str) -> list[tuple]:
    con = sqlite3.connect(ws / "history.db")
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def the_record(ws: Path) -> dict:
    files = sorted((ws / "raw_md").glob("*.md"))
    assert len(files) == 1, files
    record = read_record(files[0])
    assert record is not None
    return record


def run_once(tmp_path: Path, code: str, *extra: str, ws: Path | None = None,
             env: dict[str, str] | None = None, prompt: str = "do it",
             **kw: object) -> subprocess.CompletedProcess[str]:
    ws = ws or tmp_path / "ws"
    return run_cli("run", prompt, "--llm", replay(tmp_path, python_answer(code)),
                   "--target", "local", "--yes", "--max-retries", "0", "--workspace", str(ws),
                   *extra, cwd=tmp_path, env=env, **kw)  # type: ignore[arg-type]


def replay(tmp_path: Path, *bodies: str, name: str = "answers.md") -> str:
    path = tmp_path / name
    path.write_text(answers(*bodies), encoding="utf-8")
    return f"replay:{path}"


def c_request(code: str, run_id: str, flags: list[str], compiler: str = "") -> RunRequest:
    return RunRequest(run_id=run_id, files=[ProgramFile("main.c", "main.c", code, "c")],
                      entry="main.c", language="c", timeout=20, compiler=compiler,
                      flags=flags)


def clean(result: RunResult) -> Check:
    (check,) = crit.evaluate([crit.parse("compiles-clean")], result, None)
    return check


NOBODY = 65534


def run_as_nobody(*args: str, cwd: Path, env: dict[str, str], timeout: float = 180
                  ) -> subprocess.CompletedProcess[str]:
    """``verifybot ARGS`` as the unprivileged user nobody (setpriv; the tests run as root),
    stdin closed. ``env`` is the whole environment besides PATH and this clone on
    PYTHONPATH; every file it names must be nobody's (``give_to_nobody``)."""
    from project import ROOT

    assert os.getuid() == 0, "the tests run as root (scripts/test, CI): root switches user"
    return subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         *verifybot_cmd(), *args], cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=timeout,
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT), **env})


def give_to_nobody(root: Path) -> None:
    """``root`` and everything under it owned by nobody (a folder made as root for a run
    as nobody: a clone, a home, a workspace)."""
    for path in [root, *root.rglob("*")]:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
