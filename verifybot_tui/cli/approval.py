"""The terminal's side of "files from others": show what a file would run, and ask.

A recipe or board file that sets commands is shown key by key the first time;
a yes is remembered by the file's content hash (core.settings.trust). With
``--trust`` the yes is given without asking; with no terminal to ask on, such a
file is refused, naming its keys. ``--yes`` answers none of this.
"""

from __future__ import annotations

import sys

from verifybot_tui.cli.common import Stdin, err
from verifybot_tui.core.settings import trust
from verifybot_tui.core.settings.config import Config


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
        err(f"{f.path} is a file that makes VerifyBot run commands:")
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
