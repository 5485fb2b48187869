"""Every sandboxed run has limits ([targets.local] max_processes, max_memory_mb, tmp_mb,
max_file_mb, max_disk_mb): a program that goes past one fails, and the verdict says
which. Without them, 1,500 processes, 1.5 GiB of memory and 2 x 1 GiB on disk all
went through. Real ``verifybot run`` as root and as an ordinary user; each program
first shows it works within the limit, so a test cannot pass by a run failing for
another reason.
"""

from __future__ import annotations

import pytest
from cli_runs import python_answer, replay
from other_users import USER_IDS, USERS, give, open_folder, verifybot_as

FORKS = r'''
import os, sys, time
kids = []
try:
    for i in range(int(sys.argv[1]) if len(sys.argv) > 1 else __N__):
        pid = os.fork()
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        kids.append(pid)
    print("forked", len(kids))
finally:
    for pid in kids:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
'''
MEMORY = r'''
block = bytearray(__N__ * 1024 * 1024)
block[::4096] = b"x" * len(block[::4096])
print("allocated", len(block) // 2**20, "MB")
'''
TMP = r'''
with open("/tmp/fill", "wb") as f:
    for _ in range(__N__):
        f.write(b"\0" * 2**20)
print("wrote /tmp")
'''
FILE = r'''
with open("big.bin", "wb") as f:
    for _ in range(__N__):
        f.write(b"\0" * 2**20)
print("wrote big.bin")
'''
DISK = r'''
import time
for i in range(__N__):
    with open(f"part{i}.bin", "wb") as f:
        f.write(b"\1" * 2**20 * 10)
    time.sleep(0.1)
print("wrote all parts")
'''
CASES = {  # name: (program, the limit's key, its value, within, past, the verdict's words)
    "processes": (FORKS, "max_processes", 40, 10, 80, "the process limit (40, max_processes)"),
    "memory": (MEMORY, "max_memory_mb", 200, 100, 400, "the memory limit (200 MB, max_memory_mb)"),
    "tmp": (TMP, "tmp_mb", 32, 16, 64, "the size limit of /tmp (32 MB, tmp_mb)"),
    "file": (FILE, "max_file_mb", 32, 16, 64, "the file size limit (32 MB, max_file_mb)"),
    "disk": (DISK, "max_disk_mb", 60, 3, 40,
             "the run folder's size limit (60 MB, max_disk_mb)"),
}


def _run(user: int, home, name: str, code: str, config: str):
    llm = replay(home, python_answer(code), name=f"{name}.md")
    (home / f"{name}.toml").write_text(config)
    give(user, home)
    return verifybot_as(user, "run", name, "--llm", llm, "--target", "local", "--yes",
                        "--max-retries", "0", "--workspace", str(home / f"ws-{name}"),
                        "--config", str(home / f"{name}.toml"), cwd=home, timeout=180)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("user", USERS, ids=USER_IDS)
def test_a_run_past_a_limit_fails_and_names_it(user, case) -> None:
    code, key, value, within, past, words = CASES[case]
    config = f'[targets.local]\nsandbox = "require"\n{key} = {value}\n'
    with open_folder() as home:
        ok = _run(user, home, "within", code.replace("__N__", str(within)), config)
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert "the run hit" not in ok.stdout + ok.stderr
        over = _run(user, home, "past", code.replace("__N__", str(past)), config)
        out = over.stdout + over.stderr
        assert over.returncode == 1, out
        assert f"FAILED: still failing after 1 attempt: the run hit {words}" in out, out


def test_the_defaults_hold_without_any_key() -> None:
    """No key set: 1,500 processes do not all start (the default is 256)."""
    with open_folder() as home:
        done = _run(0, home, "many", FORKS.replace("__N__", "1500"),
                    '[targets.local]\nsandbox = "require"\n')
        assert done.returncode == 1, done.stdout + done.stderr
        assert "the run hit the process limit (256, max_processes)" in done.stderr
