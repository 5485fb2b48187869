"""The terminal's side of "files from others": show what a file would run, and ask.

A recipe or board file that sets commands (or runs the answers it brings without a
sandbox, or reads files outside its folder) is shown key by key the first time; a
``./config.toml`` that came with the folder is shown with the keys it changes;
a yes is remembered by the file's content hash (core.settings.trust). With
``--trust`` the yes is given without asking; with no terminal to ask on, such a
file is refused, naming its keys. ``--yes`` answers none of this.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from verifybot_tui.cli.terminal import Stdin, err
from verifybot_tui.core.settings import trust
from verifybot_tui.core.settings.config import Config

if TYPE_CHECKING:
    from verifybot_tui.core.settings.folder_config import FolderConfig


def _interactive() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


async def approve_files(files: list[trust.FileToTrust], *, trusted: bool, how: str,
                        stdin: Stdin | None = None) -> None:
    """Approve ``files`` (each one that sets commands nobody approved) or raise
    trust.UntrustedFile naming them and their keys."""
    todo = list({f.digest: f for f in trust.unapproved(files)}.values())  # once per content
    if not todo:
        return
    if trusted:
        for f in todo:
            err(f"--trust: running what {f.describe()}")
            trust.approve(f)
        return
    if not _interactive():
        raise trust.UntrustedFile(todo, how)
    for f in todo:
        err(f"{f.path} is a file that makes VerifyBot run commands (or widens what runs):")
        for finding in f.findings:
            err(f"  {finding}")
    what = "it sets" if len(todo) == 1 else f"these {len(todo)} files set"
    if not await (stdin or Stdin()).confirm(f"Run what {what} (asked once for this content)?"):
        raise trust.UntrustedFile(todo, how)
    for f in todo:
        trust.approve(f)


def board_files(cfg: Config, target_name: str) -> list[trust.FileToTrust]:
    """The board files of an mcu target that set commands nobody approved yet."""
    from verifybot_tui.targets.mcu.boards import target_board_files

    return target_board_files(cfg, target_name)


# -- a config.toml in the current folder ----------------------------------------------


def _ask_now(question: str) -> bool:
    """A yes/no on the terminal before anything else runs (no event loop work yet)."""
    print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        print(file=sys.stderr)
    return line.strip().lower() in ("y", "yes")


def _own_name() -> str:
    from verifybot_tui.core.settings.config import user_config_path

    path = user_config_path()
    return f"your own config, {path}" if path.is_file() else "the defaults (no config of your own)"


_NOT_USED: set[str] = set()  # folder configs this process was told not to use (said once)


def folder_config(trusted: bool) -> Config | None:
    """The folder's ``config.toml`` when the user approved it (asked here, once for this
    content, or ``--trust``); None: there is none, or it is not used (the user's own
    config then is, and one line says so)."""
    from verifybot_tui.core.settings.folder_config import find_folder_config

    found = find_folder_config()
    if found is None:
        return None
    if found.approved():
        return found.use()
    if trusted:
        err(f"--trust: using {found.path} of this folder as the config"
            + (f" ({'; '.join(str(c) for c in found.risky)})" if found.risky else ""))
        trust.approve(found.to_trust())
        return found.use()
    if found.digest in _NOT_USED:
        return None  # asked and answered (or said) once already in this command
    _NOT_USED.add(found.digest)
    use_it = f"--config {found.path}"
    if found.config is None:
        err(f"{found.path} in this folder is not read ({found.problem}); running with "
            f"{_own_name()}")
        return None
    if not _interactive():
        risky = ", ".join(c.key for c in found.risky)
        err(f"{found.path} in this folder is a file from others, not approved: not read; "
            f"running with {_own_name()}"
            + (f". It would set {risky}" if risky else "")
            + f". To use it: answer yes in a terminal, pass --trust, or name it: {use_it}")
        return None
    _show_folder_config(found)
    if _ask_now(f"Use {found.path} for runs in this folder (asked once for this content)?"):
        _NOT_USED.discard(found.digest)
        trust.approve(found.to_trust())
        return found.use()
    err(f"not using {found.path}: running with {_own_name()}")
    return None


def _show_folder_config(found: FolderConfig) -> None:
    err(f"{found.path} in this folder is not your config: it came with the folder "
        f"(a clone, a download?). It changes {len(found.changes)} key(s) of "
        f"{_own_name()}" + (":" if found.changes else "."))
    for change in found.changes:
        err(f"  {change}")
