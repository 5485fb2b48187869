"""A run's own folder, ``<workspace>/runs/<run_id>/``: made fresh and private, the
answer's files written into it under names confined to it, and looked at before and
after the program (which files it changed).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from verifybot_tui.core.base.ports import RunRequest
from verifybot_tui.core.store.workspace import PRIVATE_DIR, private_dir, write_private
from verifybot_tui.targets.sandbox.view import lstat_each

SNAPSHOT_LIMIT = 5000  # files looked at for files_changed; a run that makes more is cut


def safe_name(name: str) -> str:
    """A relative path inside the run folder (the extractor confines names too)."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts
             if p not in ("", ".", "..", "/")]
    return "/".join(parts) or "main"


def fresh_workdir(workspace: Path, run_id: str) -> Path:
    """The run's folder, empty, readable by us alone."""
    safe = safe_name(run_id).replace("/", "_") or "run"
    workdir = workspace / "runs" / safe
    if workdir.exists():
        shutil.rmtree(workdir)
    private_dir(workdir.parent)
    workdir.mkdir(mode=PRIVATE_DIR)
    os.chmod(workdir, PRIVATE_DIR)  # whatever the umask: only we read the run folder
    return workdir


def write_files(workdir: Path, request: RunRequest) -> dict[str, None]:
    """Names written, in the answer's order (the compiler sees sources in that order)."""
    written: dict[str, None] = {}
    for pf in request.files:
        name = safe_name(pf.name)
        path = workdir / name
        private_dir(path.parent)
        write_private(path, pf.content)
        written[name] = None
    return written


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """relative path -> (mtime_ns, size) of the files in a run folder, bounded."""
    found: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for path, st in lstat_each(dirpath, filenames):
            found[os.path.relpath(path, folder)] = (st.st_mtime_ns, st.st_size)
            if len(found) >= SNAPSHOT_LIMIT:
                return found
    return found
