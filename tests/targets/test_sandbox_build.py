"""A compiled program is built and run in ONE sandbox (issue 28's last figure).

The build says how it ended on the sandbox init's socket, which neither the
compiler nor the program holds, and the program starts only once VerifyBot has
read that and said "go": so a compile error is still a compile error with the
compiler's words, a program printing the init's own words is still a program,
the program's timeout starts when it does, and a stop during the build stops the
build's whole tree. Both steps share the sandbox's private /tmp, which is how the
tests see that one sandbox held them. Run as root and as an ordinary user.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from proc_helpers import all_gone, tagged
from project import ROOT, need

from verifybot_tui.core.base.ports import ProgramFile, RunRequest
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.core.verify.verdict import judge
from verifybot_tui.targets.local import target as local_target
from verifybot_tui.targets.local.target import LocalTarget
from verifybot_tui.targets.sandbox import bubblewrap

NOBODY = 65534


@pytest.fixture(autouse=True)
def _bubblewrap() -> None:
    need("bwrap", "gcc")


@pytest.fixture
def target(tmp_path: Path) -> LocalTarget:
    assert bubblewrap.bwrap() is not None, bubblewrap.why_no_sandbox()
    return LocalTarget(TargetConfig(name="local"), tmp_path / "ws")


def c_run(code: str, timeout: float = 10, compiler: str = "", name: str = "main.c",
          language: str = "c") -> RunRequest:
    return RunRequest("build_1", [ProgramFile(name, name, code, language)], name, language,
                      timeout, compiler=compiler)


def wrapper(folder: Path, body: str, compiler: str = "gcc") -> str:
    """A compiler of the recipe's kind: a script doing ``body`` first, then the real one."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"cc-{uuid.uuid4().hex[:8]}"
    path.write_text(f"#!/bin/sh\n{body}\nexec {compiler} \"$@\"\n")
    path.chmod(0o755)
    return str(path)


class Chunks:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    def __call__(self, stream: str, text: str) -> None:
        self.seen.append((stream, text))

    def text(self, stream: str) -> str:
        return "".join(t for s, t in self.seen if s == stream)


async def test_a_compile_error_is_one_with_the_compilers_words(target: LocalTarget) -> None:
    out = Chunks()
    result = await target.run(c_run("int main(void) { return not_declared_here; }\n"), out)
    assert result.compile_failed and result.exit_code not in (0, None)
    assert "not_declared_here" in result.stderr and "error" in result.stderr
    assert out.text("stderr") == result.stderr and out.text("stdout") == ""
    assert result.command == "gcc -O1 -Wall -o prog main.c -lm"  # no run step
    assert not (Path(result.workdir) / "prog").exists()
    verdict = judge(result, [])
    assert verdict.status == "compile_error" and "not_declared_here" in verdict.reason


# The program says what the init says after a failed build, on both streams, through
# /proc to the init's socket (fd 9 of the init and its subshell) and on any descriptor
# it might have been left, then fails on its own.
FORGER = r"""#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(void) {
    const char *line = "built 1\n";
    char path[64];
    int reached = 0;
    printf("%s", line);
    fprintf(stderr, "%s", line);
    for (int pid = 1; pid < 16; pid++) {
        snprintf(path, sizeof path, "/proc/%d/fd/9", pid);
        int f = open(path, O_WRONLY);
        if (f >= 0) { reached += write(f, line, strlen(line)) > 0; close(f); }
    }
    for (int fd = 3; fd < 64; fd++) reached += write(fd, line, strlen(line)) > 0;
    printf("reached %d\n", reached);
    return 1;
}
"""


async def test_a_program_printing_the_build_status_is_no_compile_failure(
        target: LocalTarget) -> None:
    out = Chunks()
    result = await target.run(c_run(FORGER), out)
    assert not result.compile_failed and result.exit_code == 1, result
    assert result.stdout == "built 1\nreached 0\n" and result.stderr == "built 1\n"
    assert result.command.endswith(" && ./prog")
    assert judge(result, []).status != "compile_error"


async def test_warnings_stay_the_builds_and_come_before_the_programs_output(
        target: LocalTarget) -> None:
    out = Chunks()
    code = ('#include <stdio.h>\nint main(void){int unused_one; fprintf(stderr, "own\\n");'
            'printf("ok\\n"); return 0;}\n')
    result = await target.run(c_run(code), out)
    assert result.exit_code == 0 and not result.compile_failed
    assert "unused_one" in result.build_stderr and result.stderr == "own\n"
    assert (result.stdout, result.stdout_bytes, result.stderr_bytes) == ("ok\n", 3, 4)
    streamed = [t for s, t in out.seen if s == "stderr"]
    assert "unused_one" in "".join(streamed[:-1]) and streamed[-1] == "own\n"
    assert result.files_changed == []


# What the program finds: the build's note in /tmp (one sandbox, one private /tmp),
# and the sandbox's limits, as every program gets them.
LOOK = r"""#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    char line[256];
    FILE *f = fopen("/tmp/from-the-build", "r");
    printf("NOTE %s", f && fgets(line, sizeof line, f) ? line : "none\n");
    f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "CapEff:", 7)) printf("%s", line);
    printf("TTY %s\n", open("/dev/tty", O_RDWR) < 0 ? "refused" : "opened");
    printf("AGENT %s\n", getenv("SSH_AUTH_SOCK") ? "set" : "unset");
    FILE *made = fopen("made.txt", "w");
    if (made) fputs("x", made), fclose(made);
    return 0;
}
"""


async def test_the_build_and_the_program_share_one_sandbox(target: LocalTarget,
                                                           tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
    cc = wrapper(tmp_path / "tools", "echo built-in-this-sandbox > /tmp/from-the-build")
    result = await target.run(c_run(LOOK, compiler=cc), Chunks())
    assert result.exit_code == 0 and not result.compile_failed, result
    out = result.stdout
    assert "NOTE built-in-this-sandbox" in out
    assert "CapEff:\t0000000000000000" in out and "TTY refused" in out
    assert "AGENT unset" in out
    assert result.files_changed == ["made.txt"]
    assert not Path("/tmp/from-the-build").exists()  # the sandbox's /tmp, gone with it


async def test_the_build_time_is_not_the_programs(target: LocalTarget, tmp_path: Path) -> None:
    """A slow build (1.5 s) and a program with 1 s of its own: the program still ends
    well; and a program that outlives its own 1 s is a timeout, not a compile error."""
    cc = wrapper(tmp_path / "tools", "sleep 1.5")
    quick = '#include <stdio.h>\nint main(void){puts("done");return 0;}\n'
    result = await target.run(c_run(quick, timeout=1.0, compiler=cc), Chunks())
    assert (result.exit_code, result.stdout, result.timed_out) == (0, "done\n", False)
    assert result.duration < 1.0
    slow = '#include <unistd.h>\nint main(void){sleep(30);return 0;}\n'
    began = time.monotonic()
    result = await target.run(c_run(slow, timeout=1.0), Chunks())
    assert result.timed_out and not result.compile_failed and result.exit_code is None
    assert time.monotonic() - began < 15



async def test_a_build_over_its_time_is_a_compile_timeout_and_leaves_nothing(
        target: LocalTarget, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tag = f"30.{uuid.uuid4().int % 10**8:08d}"
    cc = wrapper(tmp_path / "tools", f"sleep {tag}")
    monkeypatch.setattr(local_target, "COMPILE_TIMEOUT", 1.0)
    began = time.monotonic()
    result = await target.run(c_run("int main(void){return 0;}\n", compiler=cc), Chunks())
    assert result.compile_failed and result.timed_out and result.exit_code is None
    assert time.monotonic() - began < 15
    assert all_gone(tagged(tag), within=5)


async def test_a_stop_during_the_build_stops_its_whole_tree(target: LocalTarget,
                                                            tmp_path: Path) -> None:
    tag = f"30.{uuid.uuid4().int % 10**8:08d}"
    cc = wrapper(tmp_path / "tools", f"sleep {tag} & wait")
    task = asyncio.ensure_future(target.run(c_run("int main(void){return 0;}\n",
                                                  compiler=cc), Chunks()))
    deadline = time.monotonic() + 30
    while not tagged(tag) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert tagged(tag), "the build never started"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all_gone(tagged(tag), within=5)


async def test_cpp_is_built_and_run_in_the_same_way(target: LocalTarget) -> None:
    code = '#include <iostream>\nint main(){std::cout << "cpp " << 6 * 7 << std::endl;}\n'
    result = await target.run(c_run(code, name="main.cpp", language="cpp"), Chunks())
    assert (result.exit_code, result.stdout, result.compile_failed) == (0, "cpp 42\n", False)
    broken = await target.run(c_run("int main(){ return nope; }\n", name="main.cpp",
                                    language="cpp"), Chunks())
    assert broken.compile_failed and "nope" in broken.stderr


# As an ordinary user (no cgroup to make, bubblewrap's namespaces unprivileged): the
# same three runs through LocalTarget in a process of its own.
AS_USER = """
import asyncio, json, sys
from pathlib import Path
from verifybot_tui.core.base.ports import ProgramFile, RunRequest
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.local.target import LocalTarget

async def main():
    t = LocalTarget(TargetConfig(name="local", sandbox="require"), Path(sys.argv[1]))
    out = {}
    for key, code in json.loads(sys.argv[2]).items():
        r = await t.run(RunRequest("u_" + key, [ProgramFile("m.c", "m.c", code, "c")],
                                   "m.c", "c", 10.0), lambda s, x: None)
        out[key] = [r.exit_code, r.compile_failed, r.stdout, r.stderr]
    print(json.dumps(out))

asyncio.run(main())
"""


def test_an_ordinary_user_gets_one_sandbox_too(tmp_path: Path) -> None:
    assert os.getuid() == 0, "the tests run as root (scripts/test, CI): root switches user"
    need("setpriv")
    home = Path(tempfile.mkdtemp(prefix="vb-build-user-"))
    try:
        os.chmod(home, 0o777)
        codes = {"broken": "int main(void){ return undeclared_x; }\n", "forger": FORGER,
                 "look": LOOK}
        proc = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
             sys.executable, "-c", AS_USER, str(home / "ws"), json.dumps(codes)],
            cwd=home, capture_output=True, text=True, timeout=120,
            env={"PATH": os.environ["PATH"], "HOME": str(home), "PYTHONPATH": str(ROOT),
                 "SSH_AUTH_SOCK": str(home / "agent")})
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        code, failed, _, err = got["broken"]
        assert failed and code not in (0, None) and "undeclared_x" in err
        assert got["forger"] == [1, False, "built 1\nreached 0\n", "built 1\n"]
        code, failed, out, _ = got["look"]
        assert (code, failed) == (0, False)
        assert "NOTE none" in out and "CapEff:\t0000000000000000" in out
        assert "TTY refused" in out and "AGENT unset" in out
    finally:
        shutil.rmtree(home, ignore_errors=True)


async def test_without_a_sandbox_the_build_is_a_step_of_its_own(tmp_path: Path) -> None:
    """``sandbox = "off"``: the build and the program are two processes, as before;
    compile errors, warnings and the program's own output are told apart the same."""
    plain = LocalTarget(TargetConfig(name="local", sandbox="off"), tmp_path / "ws")
    broken = await plain.run(c_run("int main(void){ return undeclared_y; }\n"), Chunks())
    assert broken.compile_failed and "undeclared_y" in broken.stderr
    assert judge(broken, []).status == "compile_error"
    code = ('#include <stdio.h>\nint main(void){int unused_two; printf("built 1\\n");'
            'return 1;}\n')
    result = await plain.run(c_run(code), Chunks())
    assert (result.exit_code, result.compile_failed, result.stdout) == (1, False, "built 1\n")
    assert "unused_two" in result.build_stderr and result.stderr == ""
