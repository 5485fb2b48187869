"""Running VerifyBot as another user, on folders someone else prepared.

The findings about files from others are tried twice: as root (where a planted link
or pid reaches anything) and as an ordinary user (``setpriv`` to nobody), the way the
sandbox tests do. The folder a test works in must be enterable by that user.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from project import ROOT, need, verifybot_cmd

NOBODY = 65534
USERS = [0, NOBODY]
USER_IDS = ["root", "user"]


@contextmanager
def open_folder() -> Iterator[Path]:
    """A fresh folder every user may enter (the clone must be enterable too)."""
    need("setpriv")
    root = Path(tempfile.mkdtemp(prefix="vb-others-"))
    os.chmod(root, 0o755)
    closed = [d for d in [ROOT, *ROOT.parents] if not d.stat().st_mode & 0o001]
    assert not closed, f"other users cannot enter {closed[0]}, so nobody cannot run this clone"
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def give(uid: int, *paths: Path) -> None:
    """Make ``paths`` (and what is under folders among them) belong to ``uid``."""
    for path in paths:
        for p in [path, *(path.rglob("*") if path.is_dir() and not path.is_symlink() else [])]:
            os.lchown(p, uid, uid)


def verifybot_as(uid: int, *args: str, cwd: Path, timeout: float = 120,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``verifybot ARGS`` run by ``uid`` (0: root itself), HOME in ``cwd``."""
    switch = [] if uid == 0 else ["setpriv", f"--reuid={uid}", f"--regid={uid}",
                                  "--clear-groups"]
    base = {"PATH": os.environ["PATH"], "HOME": str(cwd), "PYTHONPATH": str(ROOT),
            "XDG_CONFIG_HOME": str(cwd / ".config"), "XDG_DATA_HOME": str(cwd / ".data"),
            "XDG_STATE_HOME": str(cwd / ".state")}
    return subprocess.run([*switch, *verifybot_cmd(), *args], cwd=cwd,
                          env={**base, **(env or {})}, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)
