"""Installs run outside the sandbox, so they take the user's own consent (--install, or
[run] install in the user's config), never --yes or a recipe; pip is given index names
only, from an empty folder; the workspace venv's interpreter never runs a `.pth` outside
the sandbox. Through the real CLI, with real pip and real venvs."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest
from cli_runs import answers, give_to_nobody, python_answer, run_as_nobody, run_cli

from verifybot_tui.core.answers.deps import not_an_index_name
from verifybot_tui.targets.installs.venv import base_python


def pth_wheel(folder: Path, marker: Path) -> Path:
    """helper-1.0-py3-none-any.whl: a wheel whose .pth writes ``marker`` at every start of
    the interpreter it is installed in."""
    files = {"helper.pth": f"import os; open({str(marker)!r}, 'a').write('ran\\n')\n",
             "helper-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: helper\n"
                                              "Version: 1.0\n",
             "helper-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
                                           "Root-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{name},sha256={digest.decode()},{len(text.encode())}")
    files["helper-1.0.dist-info/RECORD"] = "\n".join([*record, "helper-1.0.dist-info/RECORD,,"])
    path = folder / "helper-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


def recipe(folder: Path, code: str, deps: str = "") -> Path:
    (folder / "a.md").write_text(answers((f"DEPENDENCIES: {deps}\n\n" if deps else "")
                                         + python_answer(code)))
    path = folder / "r.toml"
    path.write_text('name = "r"\nprompt = "p"\nllm = "replay:a.md"\ntarget = "local"\n'
                    'max_retries = 0\ntimeout = 20\n')
    return path


def test_a_wheel_named_as_a_dependency_is_refused_even_with_install(tmp_path: Path) -> None:
    marker = tmp_path / "pth-ran"
    pth_wheel(tmp_path, marker)
    r = recipe(tmp_path, "import helper\nprint('ran')", "helper-1.0-py3-none-any.whl")
    proc = run_cli("recipe", "run", str(r), "--install", "--workspace", str(tmp_path / "ws"),
                   cwd=tmp_path, stdin="", timeout=300)
    assert "not installing 'helper-1.0-py3-none-any.whl': it looks like a file or an " \
           "archive" in proc.stderr, proc.stderr
    assert not marker.exists()
    assert not list((tmp_path / "ws").glob("venv/lib/python*/site-packages/helper.pth"))


def test_a_headless_run_without_consent_names_the_missing_package_and_goes_on(
        tmp_path: Path) -> None:
    r = recipe(tmp_path, "import vbot_missing_mod_7c\nprint('ran')")
    proc = run_cli("recipe", "run", str(r), "--workspace", str(tmp_path / "ws"),
                   cwd=tmp_path, stdin="", timeout=300)
    assert proc.returncode == 1  # it ran, and failed for want of the module
    line = next(x for x in proc.stderr.splitlines() if "not installed" in x)
    assert "missing vbot" in line and "--install" in line and "[run] install" in line
    (output,) = (tmp_path / "ws" / "outputs").glob("*.txt")
    assert "ModuleNotFoundError" in output.read_text()
    assert not (tmp_path / "ws" / "venv").exists()
    # A recipe cannot consent for the user: no such key.
    r.write_text(r.read_text() + "install = true\n")
    bad = run_cli("recipe", "run", str(r), "--workspace", str(tmp_path / "ws"),
                  cwd=tmp_path, stdin="", timeout=300)
    assert bad.returncode == 2 and "install" in bad.stderr


@pytest.mark.parametrize("user", ["root", "nobody"])
def test_the_venvs_pth_never_runs_outside_the_sandbox(user: str) -> None:
    """The probe and the module check start the workspace venv's interpreter outside the
    sandbox: a .pth an earlier install left there must not run (it did, 4 times a run)."""
    top = Path(tempfile.mkdtemp(prefix="vb-pth-"))
    try:
        ws = top / "ws"
        # nobody cannot run an interpreter under /root (a pyenv there): the system's then.
        python = "/usr/bin/python3" if user == "nobody" else base_python()
        subprocess.run([python, "-m", "venv", "--system-site-packages", str(ws / "venv")],
                       check=True, timeout=120)
        marker = top / "pth-ran"
        (site,) = (ws / "venv").glob("lib/python*/site-packages")
        (site / "planted.pth").write_text(
            f"import os; open({str(marker)!r}, 'a').write('ran\\n')\n")
        # The .pth does run when this interpreter starts normally: the test can fail.
        subprocess.run([str(ws / "venv" / "bin" / "python"), "-c", "pass"], check=True)
        assert marker.exists()
        marker.unlink()
        r = recipe(top, "import json, vbot_missing_mod_7c\nprint('ran')")
        args = ("recipe", "run", str(r), "--workspace", str(ws))
        if user == "nobody":
            give_to_nobody(top)
            xdg = str(top / "xdg")
            proc = run_as_nobody(*args, cwd=top, env={
                "HOME": str(top), "XDG_CONFIG_HOME": xdg, "XDG_STATE_HOME": xdg,
                "XDG_DATA_HOME": xdg, "XDG_CACHE_HOME": xdg}, timeout=300)
        else:
            proc = run_cli(*args, cwd=top, stdin="", timeout=300)
        assert "missing vbot" in proc.stderr, proc.stderr  # the module check ran
        assert "probing local" in proc.stderr or "session 1" in proc.stderr
        assert not marker.exists(), "a .pth ran outside the sandbox"
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_names_that_pip_would_take_for_something_else():
    for name in ("requests", "tomli-w", "RPi.GPIO", "discord.py", "pyserial==3.5",
                 "uvicorn[standard]", "numpy>=1.26"):
        assert not_an_index_name(name) == "", name
    for name, why in (("helper-1.0-py3-none-any.whl", "a file or an archive"),
                      ("pkg-1.0.tar.gz", "a file or an archive"),
                      ("./helper", "a path"), ("/tmp/x", "a path"), ("~/x", "a path"),
                      ("..", "a path"), ("https://example.com/x.zip", "a URL"),
                      ("git+https://example.com/r", "a URL"), ("pkg @ file:///x", "a URL"),
                      ("a b", "not a package name"), ("-e", "not a package name")):
        assert not_an_index_name(name) == why, name


def test_pip_runs_from_an_empty_folder_with_index_names_only(tmp_path: Path) -> None:
    """The target itself refuses a file name, whatever called it; pip never sees it."""
    import asyncio

    from verifybot_tui.core.settings.config import TargetConfig
    from verifybot_tui.targets.installs.venv import InstallError
    from verifybot_tui.targets.local.target import LocalTarget

    marker = tmp_path / "pth-ran"
    pth_wheel(tmp_path, marker)
    target = LocalTarget(TargetConfig(name="local"), tmp_path / "ws")
    here = os.getcwd()
    os.chdir(tmp_path)  # where the wheel lies
    try:
        err = ""
        try:
            asyncio.run(target.install(["helper-1.0-py3-none-any.whl"], lambda s, t: None))
        except InstallError as e:
            err = str(e)
    finally:
        os.chdir(here)
    assert "'helper-1.0-py3-none-any.whl' (a file or an archive)" in err
    assert not marker.exists()


def test_compare_installs_nothing_unasked_either(tmp_path: Path) -> None:
    r = recipe(tmp_path, "import vbot_missing_mod_7c\nprint('ran')")
    proc = run_cli("compare", str(r), "--llm", f"replay:{tmp_path / 'a.md'}", "--out",
                   str(tmp_path / "out"),
                   "--workspace", str(tmp_path / "ws"), cwd=tmp_path, stdin="", timeout=300)
    assert "missing vbot" in proc.stderr and "not installed" in proc.stderr, proc.stderr
    assert not list(tmp_path.rglob("venv"))
