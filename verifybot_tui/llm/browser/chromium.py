"""Finding a Chromium, launching it on a login profile, and the profile's lock files.

A login profile may be used by one browser at a time; Chromium enforces that
with `Singleton*` files whose SingletonLock symlink points to "<host>-<pid>".
A crash or a hard kill leaves them behind, and the next launch then fails as if
another browser held the profile: we tell the two cases apart by the pid.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.base.liveness import pid_alive
from verifybot_tui.core.settings.config import LLMConfig, user_data_dir

# Keep Chromium quiet on a closed network: no update checks, sync, QUIC probes.
QUIET_ARGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
)
SYSTEM_CANDIDATES = (
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
    "/usr/bin/google-chrome-stable",
    "/snap/bin/chromium",
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)
WHICH_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
LOCK_FILES = ("SingletonLock", "SingletonCookie", "SingletonSocket")
INSTALL_HINT = ("install one with `sudo apt install chromium` (Debian, Ubuntu, Raspberry Pi OS) "
                "or `playwright install chromium`, or set browser_path in {table}")


def _table(config: LLMConfig) -> str:
    """The config table a message tells the user to edit, by its real name."""
    return f"[llm.{config.name}]" if config.name else "the [llm.*] table of this site"


def profile_dir(config: LLMConfig) -> Path:
    """The login profile: [llm.NAME] profile_dir, else one folder per site."""
    if config.profile_dir:
        return Path(config.profile_dir).expanduser()
    site = Path(config.site).stem if config.site else (config.name or "default")
    return user_data_dir() / "profiles" / site


def find_browser(config: LLMConfig, playwright_executable: str | None = None) -> str | None:
    """The executable to launch; None means Playwright's own Chromium.

    Raises LLMError when nothing usable exists, naming the install command.
    """
    if config.browser_path:
        path = Path(config.browser_path).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        raise LLMError(f"browser_path {config.browser_path!r} in [llm.{config.name}] is not an "
                       f"executable file: fix the path, or leave it empty to find a browser "
                       f"automatically")
    for cand in SYSTEM_CANDIDATES:
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    for name in WHICH_NAMES:
        found = shutil.which(name)
        if found:
            return found
    if playwright_executable and os.path.isfile(playwright_executable):
        return None
    raise LLMError(f"No Chromium or Chrome found: {INSTALL_HINT.format(table=_table(config))}")


def launch_args() -> list[str]:
    args = list(QUIET_ARGS)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium refuses to start as root with its sandbox
    return args


@dataclass
class LockOwner:
    host: str
    pid: int


def read_lock(profile: Path) -> LockOwner | None:
    """Who the SingletonLock says holds the profile (None: no lock)."""
    try:
        target = os.readlink(profile / "SingletonLock")
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        # Not a symlink (Windows writes a plain file): assume a holder we cannot name.
        return LockOwner(host="", pid=-1) if (profile / "SingletonLock").exists() else None
    host, _, pid = target.rpartition("-")
    try:
        return LockOwner(host=host, pid=int(pid))
    except ValueError:
        return LockOwner(host=host, pid=-1)


def _is_browser_process(pid: int) -> bool:
    if not pid_alive(pid):
        return False
    proc = Path(f"/proc/{pid}")
    if not proc.exists():
        return True  # no /proc (macOS): a live pid is all we can know
    try:
        status = (proc / "status").read_text()
        if "\nState:\tZ" in status:
            return False
        cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").lower()
    except OSError:
        return False
    # A reused pid that is not a browser does not hold the profile.
    return any(n in cmd for n in (b"chrom", b"chrome", b"headless_shell"))


def check_profile(profile: Path) -> None:
    """Refuse a profile held by a live browser; remove a crashed run's stale locks."""
    owner = read_lock(profile)
    if owner is None:
        return
    if owner.host == socket.gethostname() and _is_browser_process(owner.pid):
        raise LLMError(f"The browser profile {profile} is in use by another browser "
                       f"(pid {owner.pid}). Close that browser window (or finish "
                       f"`verifybot login`), then try again.")
    if owner.pid == -1 and sys.platform == "win32":
        return  # Windows releases its lock with the process; nothing to clean
    remove_stale_locks(profile)


def remove_stale_locks(profile: Path) -> list[str]:
    removed = []
    for name in LOCK_FILES:
        p = profile / name
        if p.is_symlink() or p.exists():
            try:
                p.unlink()
                removed.append(name)
            except OSError:
                pass
    return removed


def is_profile_in_use_error(message: str) -> bool:
    text = message.lower()
    return "processsingleton" in text or "profile appears to be in use" in text or (
        "singletonlock" in text)


def make_private_dir(folder: Path) -> None:
    """The profile holds the site's login cookies: only its owner may read it (0700)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)


async def launch_context(playwright: Any, config: LLMConfig, *, headless: bool) -> Any:
    """A persistent context on the site's login profile (Playwright BrowserContext)."""
    profile = profile_dir(config)
    make_private_dir(profile)
    check_profile(profile)
    own = getattr(playwright.chromium, "executable_path", None)
    executable = find_browser(config, own)
    kwargs: dict[str, Any] = {"headless": headless, "args": launch_args()}
    if executable:
        kwargs["executable_path"] = executable
    if not headless:
        kwargs["no_viewport"] = True  # let the visible window be resized by the user
    try:
        return await playwright.chromium.launch_persistent_context(str(profile), **kwargs)
    except Exception as e:  # playwright.async_api.Error, but keep the module import-light
        msg = str(e)
        if is_profile_in_use_error(msg):
            raise LLMError(f"The browser profile {profile} is in use by another browser. "
                           f"Close that browser window, then try again.") from None
        if "Executable doesn't exist" in msg or "ENOENT" in msg:
            raise LLMError(f"Cannot start the browser ({executable or 'Playwright Chromium'}): "
                           f"{INSTALL_HINT.format(table=_table(config))}") from None
        if not headless and ("display" in msg.lower() or "x server" in msg.lower()):
            raise LLMError("Cannot open a visible browser window (no display). Run where a "
                           "desktop is available, or set headless = true in "
                           f"{_table(config)}") from None
        first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
        raise LLMError(f"Cannot start the browser ({executable or 'Playwright Chromium'}): "
                       f"{first}") from None
