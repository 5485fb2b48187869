"""The local probe: real commands on this machine, the markdown layout, the saved file."""

from __future__ import annotations

import platform
import shutil
import subprocess
from collections.abc import Awaitable
from pathlib import Path

from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.installs import venv
from verifybot_tui.targets.local.target import LocalTarget
from verifybot_tui.targets.probe_local import (
    HARDWARE_GLOBS,
    PACKAGE_NAMES_SHOWN,
    ProbeFacts,
    capture,
    probe_local,
    render_probe,
    save_context,
)

HEADINGS = ["# Target: bench", "## System", "## Python", "## Tools", "## Hardware",
            "## Workspace"]


def _section(text: str, heading: str) -> str:
    return text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]


async def test_probe_describes_this_machine_and_saves_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "probe-branch", str(ws)], check=True)
    target = LocalTarget(TargetConfig(name="bench"), ws)
    text = await target.probe()

    assert [line for line in text.splitlines() if line.startswith("#")] == HEADINGS
    assert (ws / "context" / "bench.md").read_text(encoding="utf-8") == text
    assert [p.name for p in (ws / "context").iterdir()] == ["bench.md"]  # no temp file left

    system = _section(text, "## System")
    assert f"- Architecture: {platform.machine()}" in system
    assert f"- Kernel: Linux {platform.release()}" in system
    assert "Memory: " in system and "GiB total" in system

    python = _section(text, "## Python")
    assert f"- Interpreter used for runs: {venv.base_python()}" in python
    assert f"- Version: {platform.python_version()}" in python
    assert "- Installed packages (" in python and "pip" in python

    tools = _section(text, "## Tools")
    for tool in ("gcc", "g++", "node", "bash"):
        line = next(line for line in tools.splitlines() if line.startswith(f"- {tool}: "))
        assert ("not installed" in line) == (shutil.which(tool) is None)
    assert "- bash: GNU bash, version" in tools

    hardware = _section(text, "## Hardware")
    assert [line.split(":")[0] for line in hardware.strip().splitlines()] == [
        f"- {label}" for label in HARDWARE_GLOBS]

    workspace = _section(text, "## Workspace")
    assert f"- Path: {ws}" in workspace
    assert "- Git branch: probe-branch" in workspace
    assert "GiB free of" in workspace


async def test_probe_outside_a_repository_and_with_a_missing_tool(
        tmp_path: Path, monkeypatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "git"):  # node and the compilers are "missing" here
        (bin_dir / tool).symlink_to(shutil.which(tool))
    monkeypatch.setenv("PATH", str(bin_dir))
    target = LocalTarget(TargetConfig(name="bench"), tmp_path / "fresh")
    text = await target.probe()
    assert "- Git branch: not a git repository" in text
    assert "- node: not installed" in text and "- gcc: not installed" in text
    assert "- bash: GNU bash" in text
    assert (tmp_path / "fresh" / "context" / "bench.md").is_file()


def test_render_layout_is_stable_for_the_ssh_target_to_mirror() -> None:
    facts = ProbeFacts(
        name="pi", kind="ssh", probed_at="2026-01-02 03:04:05 UTC",
        system=[("OS", "Raspberry Pi OS"), ("Architecture", "aarch64")],
        python=[("Version", "3.11.2")],
        packages=[f"pkg{i}" for i in range(PACKAGE_NAMES_SHOWN + 5)],
        tools=[("gcc", "gcc 12"), ("node", "not installed")],
        hardware=[("I2C", "/dev/i2c-1")],
        workspace=[],
    )
    text = render_probe(facts)
    assert text.startswith("# Target: pi\n\nKind: ssh. Probed 2026-01-02 03:04:05 UTC")
    assert "- Architecture: aarch64\n" in text
    assert f"- Installed packages ({PACKAGE_NAMES_SHOWN + 5}): pkg0, pkg1," in text
    assert f"pkg{PACKAGE_NAMES_SHOWN - 1}, and 5 more\n" in text
    assert f"pkg{PACKAGE_NAMES_SHOWN}," not in text
    assert "## Workspace\n\n- (nothing found)\n" in text
    assert "- Installed packages: could not be listed" in render_probe(ProbeFacts(name="x"))


def test_save_context_replaces_the_old_file(tmp_path: Path) -> None:
    save_context(tmp_path, "pi", "old")
    path = save_context(tmp_path, "pi", "new")
    assert path == tmp_path / "context" / "pi.md" and path.read_text() == "new"
    assert sorted(p.name for p in path.parent.iterdir()) == ["pi.md"]


async def test_capture_bounds_a_hanging_command() -> None:
    assert await capture(["sleep", "30"], timeout=0.3) == (None, "")
    assert await capture(["/no/such/tool"]) == (None, "")
    code, out = await capture(["bash", "-c", "echo out; echo err >&2; exit 3"])
    assert (code, out) == (3, "out\nerr\n")


# --- the probe's kept answers (probe_cache) -----------------------------------------------


def _counting_python(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A venv without pip (an interpreter with a site-packages folder of its own) whose
    python is a script that logs each start, then runs the venv's real interpreter."""
    env = tmp_path / "env"
    subprocess.run([shutil.which("python3") or "python3", "-m", "venv", "--without-pip",
                    str(env)], check=True)
    log = tmp_path / "starts.log"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\necho start >> "{log}"\nexec "{env}/bin/python" "$@"\n')
    wrapper.chmod(0o755)
    site = next(env.glob("lib/python3*/site-packages"))
    return wrapper, log, site


def _starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


async def test_the_probe_asks_the_interpreter_again_only_when_its_packages_change(
        tmp_path: Path) -> None:
    """Kept between sessions (it is most of the probe's time), asked again when a
    package is installed or removed, and never kept from a failed start."""
    python, log, site = _counting_python(tmp_path)
    ws = tmp_path / "ws"

    def probe() -> Awaitable[str]:
        return probe_local("bench", ws, str(python))

    first = await probe()
    assert _starts(log) == 1 and "demo-pkg" not in first
    again = await probe()
    assert _section(again, "## Python") == _section(first, "## Python")
    assert _starts(log) == 1, "a second session reuses what the first found"

    info = site / "demo_pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n")
    assert "demo-pkg" in _section(await probe(), "## Python") and _starts(log) == 2
    assert "demo-pkg" in _section(await probe(), "## Python") and _starts(log) == 2

    shutil.rmtree(info)
    assert "demo-pkg" not in await probe() and _starts(log) == 3

    python.write_text("#!/bin/sh\nexit 3\n")  # the same path, now broken: asked, not kept
    assert "(does not run)" in await probe()
    assert "(does not run)" in await probe()
