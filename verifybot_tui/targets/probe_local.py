"""The probe: what the LLM should know about the machine its program will run on.

The facts go into the prompt, so they are the ones that change what code is
right: OS and architecture, the Python that will run it and what it has
installed, compilers, hardware buses (a Pi's I2C/SPI/GPIO), space and memory.
``ProbeFacts`` and ``render_probe`` hold the layout so the SSH target gathers
its facts its own way and writes the same markdown; ``TOOL_VERSION_ARGV``,
``HARDWARE_GLOBS`` and ``PYTHON_FACTS_SCRIPT`` are the commands it can reuse.
"""

from __future__ import annotations

import asyncio
import glob
import json
import os
import platform
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from verifybot_tui.core.store.workspace import atomic_write
from verifybot_tui.targets import probe_cache
from verifybot_tui.targets.containment.subreaper import OWN_PIDS
from verifybot_tui.targets.installs import venv

COMMAND_TIMEOUT = 10.0
PACKAGE_NAMES_SHOWN = 120

TOOL_VERSION_ARGV: dict[str, tuple[str, ...]] = {
    "gcc": ("gcc", "--version"),
    "g++": ("g++", "--version"),
    "node": ("node", "--version"),
    "bash": ("bash", "--version"),
}

HARDWARE_GLOBS: dict[str, tuple[str, ...]] = {
    "I2C": ("/dev/i2c-*",),
    "SPI": ("/dev/spidev*",),
    "Serial": ("/dev/ttyUSB*", "/dev/ttyACM*", "/dev/ttyAMA*"),
    "GPIO": ("/dev/gpiochip*",),
}

# Run by the probed interpreter: prints one JSON object about itself. Its "stamps" are
# the folders its packages come from as they were before they were read (probe_cache).
PYTHON_FACTS_SCRIPT = """\
import json, os, site, sys
def stamp(p):
    try:
        st = os.stat(p)
    except OSError:
        return [p, None]
    return [p, st.st_mtime_ns, st.st_size, st.st_ino]
seen = [p for p in sys.path if p] + [os.path.join(sys.prefix, "pyvenv.cfg")]
try:
    seen.append(site.getusersitepackages())
except Exception:
    pass
stamps = [stamp(p) for p in dict.fromkeys(seen)]
try:
    from importlib import metadata
    names = sorted({(d.metadata["Name"] or "").strip() for d in metadata.distributions()} - {""},
                   key=str.lower)
except Exception:
    names = []
print(json.dumps({"version": sys.version.split()[0], "executable": sys.executable,
                  "prefix": sys.prefix, "packages": names, "stamps": stamps}))
"""
# What else decides an interpreter's sys.path, and so its packages.
PATH_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONUSERBASE")

Facts = list[tuple[str, str]]


@dataclass
class ProbeFacts:
    """One probe's findings, section by section, as (label, value) lines."""

    name: str
    kind: str = "local"
    system: Facts = field(default_factory=list)
    python: Facts = field(default_factory=list)
    packages: list[str] | None = None  # None: could not be listed
    tools: Facts = field(default_factory=list)
    hardware: Facts = field(default_factory=list)
    workspace: Facts = field(default_factory=list)
    probed_at: str = ""


def render_probe(facts: ProbeFacts) -> str:
    def lines(items: Facts) -> list[str]:
        return [f"- {label}: {value}" for label, value in items] or ["- (nothing found)"]

    python = lines(facts.python)
    if facts.packages is None:
        python.append("- Installed packages: could not be listed")
    else:
        shown = facts.packages[:PACKAGE_NAMES_SHOWN]
        more = len(facts.packages) - len(shown)
        names = ", ".join(shown) + (f", and {more} more" if more > 0 else "")
        python.append(f"- Installed packages ({len(facts.packages)}): {names or 'none'}")
    out = [
        f"# Target: {facts.name}",
        "",
        f"Kind: {facts.kind}. Probed {facts.probed_at or 'just now'}; generated, not edited.",
        "",
        "## System", "", *lines(facts.system), "",
        "## Python", "", *python, "",
        "## Tools", "", *lines(facts.tools), "",
        "## Hardware", "", *lines(facts.hardware), "",
        "## Workspace", "", *lines(facts.workspace), "",
    ]
    return "\n".join(out)


def save_context(workspace: Path, name: str, text: str) -> Path:
    """Write ``context/<name>.md`` atomically: a reader never sees half a probe."""
    path = workspace / "context" / f"{name}.md"
    atomic_write(path, text)
    return path


def first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


async def capture(argv: list[str] | tuple[str, ...], timeout: float = COMMAND_TIMEOUT,
                  cwd: Path | None = None) -> tuple[int | None, str]:
    """Run a short command; (exit code or None if missing/timed out, stdout+stderr)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True)
    except OSError:
        return None, ""
    OWN_PIDS.add(proc.pid)  # never taken for a run's adopted orphan
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except BaseException as e:  # the timeout, or our caller cancelled
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            await asyncio.wait_for(proc.wait(), 2.0)
        except TimeoutError:
            pass
        if isinstance(e, TimeoutError):
            return None, ""
        raise
    finally:
        OWN_PIDS.discard(proc.pid)
    return proc.returncode, out.decode("utf-8", "replace")


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text(encoding="utf-8").splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return ""


def _memory() -> str:
    info: dict[str, int] = {}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            info[key] = int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return "unknown"
    if "MemTotal" not in info:
        return "unknown"
    avail = info.get("MemAvailable")
    return gib(info["MemTotal"]) + (f" total, {gib(avail)} available" if avail else " total")


def _hardware() -> Facts:
    found: Facts = []
    for label, patterns in HARDWARE_GLOBS.items():
        paths = sorted(p for pattern in patterns for p in glob.glob(pattern))
        found.append((label, ", ".join(paths) if paths else "none"))
    return found


async def _tool_version(name: str) -> tuple[str, str]:
    found = shutil.which(name, path=venv.clean_path())
    if found is None:
        return name, "not installed"
    key = json.dumps([name, found, os.environ.get("PATH", "")])
    kept = probe_cache.load("tool", key)
    if isinstance(kept, str):
        return name, kept
    before = [probe_cache.stamp(found)]
    code, out = await capture(TOOL_VERSION_ARGV[name])
    if code != 0:
        return name, "installed, version unknown"
    probe_cache.store("tool", key, first_line(out), before)
    return name, first_line(out)


async def _python_facts(python: str) -> dict | None:
    exe = shutil.which(python) or python
    key = json.dumps([python, exe, *(os.environ.get(v) for v in PATH_ENV)])
    kept = probe_cache.load("python", key)
    if isinstance(kept, dict):
        return kept
    before = probe_cache.stamp(exe)
    # Outside the sandbox: -I -S, so no .pth file of a workspace venv runs here.
    code, out = await capture(venv.isolated_argv(python, PYTHON_FACTS_SCRIPT), cwd=Path("/"))
    if code != 0:
        return None
    try:
        facts = json.loads(first_line(out))
    except ValueError:
        return None
    stamps = facts.pop("stamps", None) if isinstance(facts, dict) else None
    if isinstance(stamps, list) and stamps:
        probe_cache.store("python", key, facts, [before, *stamps])
    return facts


async def _git_branch(workspace: Path) -> str:
    if shutil.which("git") is None:
        return "unknown (git not installed)"
    # symbolic-ref also names the branch of a repository with no commit yet.
    code, out = await capture(["git", "-C", str(workspace), "symbolic-ref", "--short", "HEAD"])
    if code == 0:
        return first_line(out)
    code, sha = await capture(["git", "-C", str(workspace), "rev-parse", "--short", "HEAD"])
    if code == 0:
        return f"detached HEAD at {first_line(sha)}"
    if "not a git repository" in out.lower():
        return "not a git repository"
    return f"unknown ({first_line(out) or 'git failed'})"


async def gather_local_facts(name: str, workspace: Path, python: str) -> ProbeFacts:
    """Everything at once: the slow commands run side by side, each bounded."""
    tools, py, branch = await asyncio.gather(
        asyncio.gather(*(_tool_version(t) for t in TOOL_VERSION_ARGV)),
        _python_facts(python),
        _git_branch(workspace),
    )
    uname = platform.uname()
    facts = ProbeFacts(name=name, kind="local",
                       probed_at=time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    facts.system = [
        ("OS", _os_release() or uname.system),
        ("Platform", platform.platform()),
        ("Kernel", f"{uname.system} {uname.release}"),
        ("Architecture", uname.machine),
        ("CPU cores", str(os.cpu_count() or "unknown")),
        ("Memory", _memory()),
    ]
    if py is None:
        facts.python = [("Interpreter used for runs", f"{python} (does not run)")]
    else:
        facts.python = [("Version", py["version"]), ("Interpreter used for runs", python)]
        facts.packages = list(py["packages"])
    ws_venv = venv.venv_dir(workspace)
    facts.python.append(("Workspace venv", f"{ws_venv} (packages get installed there)"
                         if venv.has_venv(workspace) else
                         f"none yet ({ws_venv} is made on the first install)"))
    facts.tools = [(tool, version) for tool, version in tools]
    facts.hardware = _hardware()
    try:
        usage = shutil.disk_usage(workspace if workspace.exists() else workspace.anchor or "/")
        disk = f"{gib(usage.free)} free of {gib(usage.total)}"
    except OSError:
        disk = "unknown"
    facts.workspace = [("Path", str(workspace)), ("Git branch", branch),
                       ("Disk", disk), ("Runs folder", str(workspace / "runs"))]
    return facts


async def probe_local(name: str, workspace: Path, python: str) -> str:
    """Probe this machine, save ``context/<name>.md`` and return the markdown."""
    workspace.mkdir(parents=True, exist_ok=True)
    text = render_probe(await gather_local_facts(name, workspace, python))
    save_context(workspace, name, text)
    return text
