"""A firmware answer runs contained too (issue 28, item 1): its build (the answer's own
Makefile) and QEMU with semihosting run in the sandbox, and the board package's
cached objects cannot be changed by an answer.

Fake secrets are planted beside the workspace (where the user's files would be);
the test's own HOME points there too, so a sandbox that let things through would
show it here and nowhere else.
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcu_fixtures import SUM, Recorder, mcu_config, own_project, qemu_pids, request
from proc_helpers import all_gone, tagged
from project import need

from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets import make_target
from verifybot_tui.targets.sandbox.view import BOARD_CACHE

API_KEY = "sk-fake-firmware-0123456789abcdef"


@pytest.fixture(autouse=True)
def _tools() -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm", "bwrap", "make")


class Planted:
    def __init__(self, root: Path) -> None:
        self.home = root / "home"
        self.key = self.home / ".ssh" / "id_ed25519"
        self.key.parent.mkdir(parents=True)
        self.key.write_text("PLANTED-FIRMWARE-KEY\n")
        self.bashrc = self.home / ".bashrc"
        self.bashrc.write_text("# the user's own\n")

    def untouched(self) -> bool:
        return self.bashrc.read_text() == "# the user's own\n"


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Planted:
    p = Planted(tmp_path)
    monkeypatch.setenv("HOME", str(p.home))
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(p.home / "agent.sock"))
    return p


@pytest.fixture
async def make(tmp_path: Path) -> Iterator:
    made = []

    def build(board: str = "netduinoplus2", **extra: object):  # type: ignore[no-untyped-def]
        t = make_target(mcu_config(board, **extra), "board", tmp_path / "ws")
        made.append(t)
        return t

    yield build
    for t in made:
        await t.close()
    assert qemu_pids(tmp_path / "ws") == []


def text_of(r, rec: Recorder | None = None) -> str:  # type: ignore[no-untyped-def]
    """Everything a run said: its result and (``rec``) what it streamed, the build's too."""
    said = "".join(t for _, t in rec.chunks) if rec is not None else ""
    return r.stdout + r.stderr + r.build_stderr + (r.target_error or "") + said


HOSTILE_MAKE = """\
all:
\t-cat {key}
\t-cat $(HOME)/.ssh/id_ed25519
\t-echo MARKER >> {bashrc}
\t-echo MARKER >> $(HOME)/.bashrc
\t-cat /proc/{pid}/environ
\t-env | grep -c sk-fake || true
\t-cat /proc/{pid}/cmdline
\t@echo "HOME IS $(HOME)"
\t$(MAKE) -f real.mk
"""


async def test_a_makefile_reads_no_secret_and_writes_no_home(make, planted: Planted) -> None:
    files = own_project()
    real = files.pop("Makefile")
    files["real.mk"] = real
    files["Makefile"] = HOSTILE_MAKE.format(key=planted.key, bashrc=planted.bashrc,
                                            pid=os.getpid())
    rec = Recorder()
    r = await make("lm3s6965evb").run(request("mk_1", files), rec)
    assert r.exit_code == 0 and "own startup" in r.stdout, text_of(r, rec)
    assert "HOME IS /tmp" in text_of(r, rec)  # the Makefile ran, in the sandbox
    assert "PLANTED" not in text_of(r, rec) and API_KEY not in text_of(r, rec)
    assert planted.untouched()


SEMIHOSTING = r"""
#include <stdio.h>
#include <string.h>

static int semihost(int op, void *args)
{
    register int r0 __asm("r0") = op;
    register void *r1 __asm("r1") = args;
    __asm volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static void open_and_print(const char *path)
{
    unsigned args[3] = {(unsigned)path, 0 /* "r" */, strlen(path)};
    int h = semihost(0x01, args);                      /* SYS_OPEN */
    char buf[64] = {0};
    if (h < 0) {
        printf("OPEN %s refused\n", path);
        return;
    }
    unsigned rd[3] = {(unsigned)h, (unsigned)buf, sizeof buf - 1};
    int left = semihost(0x06, rd);                     /* SYS_READ */
    printf("OPEN %s read %d: %s\n", path, (int)(sizeof buf - 1) - left, buf);
}

int main(void)
{
    open_and_print("__KEY__");
    open_and_print("inside.txt");
    const char *cmd = "__CMD__";
    unsigned sys[2] = {(unsigned)cmd, strlen(cmd)};
    printf("SYSTEM %d\n", semihost(0x12, sys));         /* SYS_SYSTEM */
    printf("PASSED\n");
    return 0;
}
"""


def kill_tagged(tag: str) -> None:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if tag.encode() in Path(f"/proc/{entry.name}/cmdline").read_bytes():
                    os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                pass



@pytest.mark.parametrize("board", ["lm3s6965evb", "netduinoplus2"])
async def test_semihosting_reaches_only_the_sandbox(make, planted: Planted, board: str,
                                                     tmp_path: Path) -> None:
    tag = f"1000.{uuid.uuid4().int % 10**9:09d}"  # sleep's argument, found again in /proc
    cmd = (f"echo MARKER >> {planted.bashrc}; echo ran > ran.txt; env > env.txt; "
           f"setsid sh -c 'echo up > up.txt; exec sleep {tag}' > /dev/null 2>&1 & "
           "while [ ! -s up.txt ]; do :; done")  # returns once the daemon left the session
    code = SEMIHOSTING.replace("__KEY__", str(planted.key)).replace("__CMD__", cmd)
    try:
        r = await make(board).run(request("semi_1", {"main.c": code, "inside.txt":
                                                     "INSIDE-OK\n"}), Recorder())
        assert judge(r, []).ok, text_of(r)
        assert f"OPEN {planted.key} refused" in r.stdout, r.stdout
        assert "OPEN inside.txt read 10: INSIDE-OK" in r.stdout  # semihosting works inside
        assert "PLANTED" not in text_of(r) and planted.untouched()
        assert (Path(r.workdir) / "ran.txt").read_text() == "ran\n"  # SYS_SYSTEM ran, inside
        env = (Path(r.workdir) / "env.txt").read_text()
        assert API_KEY not in env and "SSH_AUTH_SOCK" not in env and "HOME=/tmp\n" in env
        # named in the verdict (as sleep, or as setsid when caught before its exec)
        assert any(re.fullmatch(r"\d+ \((sleep|setsid|sh)\) killed", e) for e in r.escaped), \
            (r.escaped, r.stdout, r.stderr, r.command[-80:])
        assert all_gone(tagged(tag), within=0), "what SYS_SYSTEM started outlived the run"
    finally:
        kill_tagged(tag)


POISON_MAKE = """\
all:
\t@for f in ../.vb_board_cache/*.o; do \\
\t  echo junk > $$f 2>/dev/null && echo "POISONED $$f" || echo "REFUSED $$f"; \\
\t  rm -f $$f 2>/dev/null || echo "NOT REMOVED $$f"; done
\t@ls ../.vb_board_cache/*.o | head -1 > /dev/null && echo "CACHE STILL THERE"
\t$(MAKE) -f real.mk
"""

def digests(cache: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in cache.glob("*.o")}


async def test_a_makefile_cannot_poison_the_board_cache(make, tmp_path: Path) -> None:
    t = make()
    first = await t.run(request("sum_1", {"main.c": SUM}), Recorder())
    assert judge(first, []).ok, text_of(first)
    cache = tmp_path / "ws" / BOARD_CACHE
    before = digests(cache)
    assert before, "the package objects are cached"
    files = own_project()
    files["real.mk"] = files.pop("Makefile")
    files["Makefile"] = POISON_MAKE
    rec = Recorder()
    poison = await make("lm3s6965evb").run(request("poison_1", files), rec)
    said = text_of(poison, rec)
    assert "REFUSED" in said and "NOT REMOVED" in said and "POISONED" not in said, said
    assert "CACHE STILL THERE" in said and judge(poison, []).ok
    assert digests(cache) == before
    again = await t.run(request("sum_2", {"main.c": SUM}), Recorder())
    assert judge(again, []).ok and "sum=55" in again.stdout
    bad = await t.run(request("bad_1", {"main.c": SUM.replace("PASSED", "FAILED")}),
                      Recorder())
    assert not judge(bad, []).ok


async def test_without_the_sandbox_the_makefile_would_have_reached_home(
        make, planted: Planted) -> None:
    """What the tests above would see if the build ran outside (sandbox = "off")."""
    files = own_project()
    files["real.mk"] = files.pop("Makefile")
    files["Makefile"] = HOSTILE_MAKE.format(key=planted.key, bashrc=planted.bashrc,
                                            pid=os.getpid())
    rec = Recorder()
    r = await make("lm3s6965evb", sandbox="off").run(request("mk_off", files), rec)
    assert "PLANTED-FIRMWARE-KEY" in text_of(r, rec), text_of(r, rec)
    assert not planted.untouched()
