"""What starts a run on the Pi: its files as one tar, and the shell script sent with them.

Pure text: the script unpacks the files into a fresh run folder, starts the
watcher (see ssh_scripts) and execs the program as its process group's leader,
so one channel carries the files in, the program and the watcher's report out.
"""

from __future__ import annotations

import posixpath
import shlex
import time
from typing import TYPE_CHECKING

from verifybot_tui.core.base.ports import RunRequest
from verifybot_tui.targets import ssh_scripts as scripts
from verifybot_tui.targets.containment.markers import MARKER
from verifybot_tui.targets.installs.venv import VENV_DIR
from verifybot_tui.targets.ssh.outcome import safe_rel

if TYPE_CHECKING:
    from verifybot_tui.targets.ssh.connection import SSHConnection


def payload(request: RunRequest) -> tuple[bytes, dict[str, tuple[int, float]]]:
    """The files as one tar (the saved version and the run folder's copy), and the run
    folder as it will be before the program starts (what find would show)."""
    mtime = int(time.time()) - 1
    rel_run = posixpath.join("runs", safe_rel(request.run_id))
    entries: list[tuple[str, bytes]] = []
    before: dict[str, tuple[int, float]] = {}
    for f in request.files:
        data = f.content.encode("utf-8")
        name = safe_rel(f.name)
        entries += [(safe_rel(f.saved_name), data), (posixpath.join(rel_run, name), data)]
        before[name] = (len(data), float(mtime))
    return scripts.tar_of(entries, mtime), before


def _files_sh(link: SSHConnection, run_dir: str, archive: bytes) -> str:
    """A fresh run folder (no file of an older run is mistaken for new) from the tar."""
    home, rel = shlex.quote(link.remote_dir), shlex.quote(
        posixpath.relpath(run_dir, link.remote_dir))
    return (f"cd {home} 2>/dev/null || {{ mkdir -p {home} && cd {home}; }} || exit 127; "
            f"[ ! -e {rel} ] || rm -rf {rel}; {scripts.files_sh(archive)}")


def launch_script(link: SSHConnection, argv: list[str], run_dir: str, snapshot: bool,
                  token: str = "", files: bytes = b"", before_file: bool = True) -> str:
    """Files in, the watcher started, then the program exec'd as its group's leader.

    sshd already makes the command's shell a session (and group) leader, so
    ``exec`` keeps that group and its id is ``$$``; on a server that does
    not, ``setsid`` makes one. See ssh_scripts for the watcher.
    """
    cmd = shlex.join(argv)
    if token and link.scopes:
        cmd = scripts.scope_prefix(token) + cmd
    unpack = _files_sh(link, run_dir, files) if files else ""
    before = f"{scripts.SNAPSHOT} > .vb_before; " if snapshot and before_file else ""
    env = "export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1; "
    watch = ""
    if token:
        env += f"printf '%s\\n' {shlex.quote(token)} > .vb_run; "
        check = scripts.check_sh(link.stop_grace, link.scopes, snapshot, before_file)
        watcher = shlex.quote(scripts.watcher_sh(check, run_dir))
        watch = (f"exec 3<&0; vbw={watcher}; {scripts.START_APART}"
                 f"export {MARKER}={shlex.quote(token)}; ")
    if link.has_venv:
        # A shell script's `python3` then finds what `install` put there.
        venv = shlex.quote(posixpath.join(link.remote_dir, VENV_DIR))
        env += f'export VIRTUAL_ENV={venv} PATH={venv}/bin:"$PATH"; '
    first = scripts.READ_REPORT_TOKEN if token else ""
    return (f"{first}{unpack}cd {shlex.quote(run_dir)} || exit 127; {env}{before}"
            "read -r _ _ _ _ vbpg _ < /proc/$$/stat 2>/dev/null; "
            f'if [ "$vbpg" = "$$" ]; then echo $$ > .vb_pgid; {watch}'
            f"exec {cmd} </dev/null 3<&-; "
            f"else {watch}exec setsid sh -c 'echo $$ > .vb_pgid; exec \"$@\" </dev/null' "
            f"sh {cmd} 3<&-; fi")
