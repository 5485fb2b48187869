"""Boards on a labgrid farm: real coordinator, exporter and ser2net on loopback, QEMU boards.

Every run is a real ``verifybot`` process; who holds a place is read from the
coordinator with labgrid's own session (tests/support/labgrid_farm.py).
"""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
from cli_runs import answers
from labgrid_farm import loopback_farm
from mcu_fixtures import ENDLESS, SUM, c_answer
from project import need, verifybot_cmd

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.settings.config import ConfigError, parse_config
from verifybot_tui.targets.mcu.farm import claim as claims
from verifybot_tui.targets.mcu.farm.session import farm_session

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ME = f"{socket.gethostname()}/{getpass.getuser()}"


@pytest.fixture(autouse=True)
def _tools() -> None:
    need("arm-none-eabi-gcc", "qemu-system-arm", "/usr/sbin/ser2net")


@pytest.fixture(scope="module")
def _the_farm():
    """One farm for the module (starting one costs seconds)."""
    need("arm-none-eabi-gcc", "qemu-system-arm", "/usr/sbin/ser2net")
    with loopback_farm(("f4-bench-1", "f4-bench-2")) as f:
        yield f


@pytest.fixture
def farm(_the_farm):
    """The module's farm, as freshly started: places free, boards blank."""
    _the_farm.reset()
    return _the_farm


def env(tmp: Path) -> dict[str, str]:
    """This user, with a state folder of the test's own (the place lock files)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("LG_")}
    return {**e, "XDG_STATE_HOME": str(tmp / "state")}


def write_config(tmp: Path, farm, place: str = '"f4-bench-1"', timeout: float = 60) -> None:
    (tmp / "config.toml").write_text(
        f'[run]\nworkspace = "ws"\n\n[targets.lab]\nkind = "mcu"\nboard = "netduinoplus2"\n'
        f'backend = "labgrid"\nplace = {place}\ncoordinator = "{farm.address}"\n'
        f'acquire_timeout = {timeout}\nflash = "{farm.flash()}"\n')


def start_run(tmp: Path, code: str, name: str, timeout: float = 15,
              config: str = "config.toml") -> subprocess.Popen[str]:
    (tmp / f"{name}.md").write_text(answers(c_answer(code)))
    return subprocess.Popen(
        [*verifybot_cmd(), "run", "a firmware", "--config", config, "--target", "lab",
         "--llm", f"replay:{name}.md", "--yes", "--judge", "off", "--max-retries", "0",
         "--timeout", str(timeout), "--json"],
        cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(tmp),
        start_new_session=True)


def finish(proc: subprocess.Popen[str]) -> tuple[int, dict, str]:
    out, err = proc.communicate(timeout=180)
    return proc.returncode, (json.loads(out) if out.strip() else {}), err


def wait_held(farm, place: str, by: str = ME, within: float = 60) -> None:
    deadline = time.monotonic() + within
    while farm.holders()[place] != by:
        assert time.monotonic() < deadline, f"{place} never held by {by}: {farm.holders()}"
        time.sleep(0.1)


def wait_flashed(farm, place: str, run: subprocess.Popen[str], within: float = 60) -> None:
    """The run's flash step has handed its ELF to the place's board (its firmware runs)."""
    deadline = time.monotonic() + within
    while not (farm.boards[place] / "flash.done").exists():
        assert run.poll() is None, finish(run)
        assert time.monotonic() < deadline, f"{place}'s board was never flashed"
        time.sleep(0.05)


def test_a_firmware_recipe_is_verified_through_the_loopback_farm(farm, tmp_path):
    write_config(tmp_path, farm)
    shutil.copy(EXAMPLES / "stm32_can.md", tmp_path)
    recipe = (EXAMPLES / "stm32_can.toml").read_text()
    (tmp_path / "r.toml").write_text(recipe.replace('board = "netduinoplus2"',
                                                    'target = "lab"'))
    # a recipe that runs its own answers on a farm's board is approved (--trust): nothing
    # sandboxes a real board
    r = subprocess.run([*verifybot_cmd(), "recipe", "run", "r.toml", "--config", "config.toml",
                        "--trust"], cwd=tmp_path, capture_output=True, text=True, timeout=240,
                       env=env(tmp_path))
    assert r.returncode == 0 and "VERIFIED" in r.stdout, r.stdout + r.stderr[-3000:]
    # the firmware ran on that place's board (its flash step took the ELF), not in a local QEMU
    assert list(farm.boards["f4-bench-1"].glob("fw-*.elf"))
    assert not list(farm.boards["f4-bench-2"].glob("fw-*.elf"))
    assert farm.holders() == {"f4-bench-1": "", "f4-bench-2": ""}
    assert "Other threads are currently calling into gRPC" not in r.stderr


def test_two_runs_on_one_place_take_turns(farm, tmp_path):
    write_config(tmp_path, farm)
    first = start_run(tmp_path, ENDLESS, "first", timeout=12)  # holds the board till its timeout
    wait_held(farm, "f4-bench-1")
    second = start_run(tmp_path, SUM, "second")
    code2, rec2, err2 = finish(second)
    code1, _, err1 = finish(first)
    assert code2 == 0 and rec2["status"] == "PASSED", err2[-3000:]
    # waited in labgrid's queue (a reservation), given back once the place was
    assert "labgrid: waiting in labgrid's queue for place f4-bench-1, held (f4-bench-1 by " \
           f"another VerifyBot run of yours ({ME}, pid {first.pid}))" in err2, err2[-3000:]
    assert farm.client("reservations").stdout.strip() == ""
    assert re.search(r"s left\n", err2)
    # the second took the place only after the first gave it back
    assert "labgrid: released place f4-bench-1" in err1, err1[-3000:]
    assert "no end line" in err1
    assert farm.holders() == {"f4-bench-1": "", "f4-bench-2": ""}


def test_two_runs_on_two_matching_places_run_side_by_side(farm, tmp_path):
    write_config(tmp_path, farm, place='{ board = "netduinoplus2" }')
    first = start_run(tmp_path, ENDLESS, "first", timeout=60)
    wait_held(farm, "f4-bench-1")
    second = start_run(tmp_path, SUM, "second")
    code2, rec2, err2 = finish(second)
    assert code2 == 0 and rec2["status"] == "PASSED", err2[-3000:]
    assert "labgrid: acquired place f4-bench-2" in err2 and "labgrid: waiting" not in err2
    # ser2net answered the baud rate, so its port was open (and flushed) before the flash:
    # on a loaded run the settle time alone once lost this board's whole output.
    assert "of place f4-bench-2, its port open\n" in err2, err2[-3000:]
    assert first.poll() is None  # the first still runs on f4-bench-1
    os.kill(first.pid, signal.SIGINT)  # its end is not what this test is about: Ctrl+C
    finish(first)
    assert list(farm.boards["f4-bench-2"].glob("fw-*.elf"))  # flashed where the place says
    assert farm.holders() == {"f4-bench-1": "", "f4-bench-2": ""}


LONG = """\
#include <stdio.h>

volatile unsigned long counter;

int main(void)
{
    printf("counting\\n");
    while (counter < 60000000UL)
        counter++;
    printf("loops done\\n");
    printf("PASSED\\n");
    return 0;
}
"""


def test_recipe_run_parallel_spreads_over_the_free_matching_places(farm, tmp_path):
    """Two recipes at once on a target that names tags: each takes a free place that
    matches, none waits for the other (each holds its place for a firmware's long loop)."""
    write_config(tmp_path, farm, place='{ board = "netduinoplus2" }')
    for name in ("one", "two"):
        (tmp_path / f"{name}.md").write_text(answers(c_answer(LONG)))
        (tmp_path / f"{name}.toml").write_text(
            f'name = "{name}"\nprompt = "count"\nllm = "replay:{name}.md"\ntarget = "lab"\n'
            'criteria = ["contains:loops done"]\njudge = "off"\nmax_retries = 0\n'
            'timeout = 60\n')
    r = subprocess.run([*verifybot_cmd(), "recipe", "run", "one.toml", "two.toml",
                        "--parallel", "2", "--config", "config.toml", "--trust"],
                       cwd=tmp_path, capture_output=True, text=True, env=env(tmp_path),
                       timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert "2 of 2 verified" in r.stdout, r.stdout
    # each run's command names its place (the transcript); the firmware's saved output
    # holds what the board printed, none of VerifyBot's own labgrid lines
    said = "".join(p.read_text() for p in (tmp_path / "ws" / "raw_md").glob("*.md"))
    assert "[labgrid place f4-bench-1," in said and "[labgrid place f4-bench-2," in said, \
        said[-3000:]
    outputs = "".join(p.read_text() for p in (tmp_path / "ws" / "outputs").glob("*.txt"))
    assert "loops done" in outputs and "labgrid" not in outputs, outputs[-3000:]
    for place in ("f4-bench-1", "f4-bench-2"):  # flashed where each place says
        assert list(farm.boards[place].glob("fw-*.elf")), place
    assert farm.holders() == {"f4-bench-1": "", "f4-bench-2": ""}


def test_a_place_held_by_another_user_fails_at_once_naming_the_holder(farm, tmp_path):
    farm.client("-p", "f4-bench-1", "acquire", user="alice")
    write_config(tmp_path, farm, timeout=0)
    code, rec, err = finish(start_run(tmp_path, SUM, "held"))
    assert code == 4, err[-3000:]
    assert "f4-bench-1 by " in err and "/alice" in err, err[-3000:]
    # the wait itself, timed on labgrid's session: well within 2 s
    cfg = parse_config({"targets": {"lab": {
        "kind": "mcu", "board": "netduinoplus2", "backend": "labgrid", "place": "f4-bench-1",
        "coordinator": farm.address, "acquire_timeout": 0, "flash": "x {elf}"}}}).targets["lab"]
    said: list[str] = []

    async def attempt() -> float:
        async with farm_session(farm.address) as session:
            started = time.monotonic()
            with pytest.raises(TargetError, match=r"f4-bench-1 by \S+/alice"):
                await claims.acquire(session, cfg, farm.address, lambda _s, t: said.append(t))
            return time.monotonic() - started

    os.environ["XDG_STATE_HOME"] = str(tmp_path / "state")
    try:
        assert asyncio.run(attempt()) < 2.0
    finally:
        del os.environ["XDG_STATE_HOME"]
    assert farm.holders()["f4-bench-1"].endswith("/alice")  # never taken from them


@pytest.mark.parametrize("how", [signal.SIGINT, signal.SIGHUP, signal.SIGKILL],
                         ids=["ctrl-c", "closed-terminal", "kill-9"])
def test_no_place_stays_acquired_however_verifybot_ends(farm, tmp_path, how):
    write_config(tmp_path, farm, timeout=0)
    run = start_run(tmp_path, ENDLESS, "endless", timeout=60)
    wait_held(farm, "f4-bench-1")
    wait_flashed(farm, "f4-bench-1", run)  # into the firmware's run
    os.kill(run.pid, how)
    finish(run)
    if how != signal.SIGKILL:
        assert farm.holders()["f4-bench-1"] == ""
        return
    assert farm.holders()["f4-bench-1"] == ME  # killed: the coordinator still lists it
    doc = subprocess.run([*verifybot_cmd(), "doctor", "--config", "config.toml"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env=env(tmp_path))
    assert (f"place f4-bench-1 (board netduinoplus2): held by {ME} (left by a VerifyBot of "
            f"yours that ended, pid {run.pid}: the next run releases it)") in doc.stdout, \
        doc.stdout
    code, rec, err = finish(start_run(tmp_path, SUM, "next"))  # the next start
    assert code == 0 and rec["status"] == "PASSED", err[-3000:]
    assert (f"labgrid: place f4-bench-1 was left acquired by a VerifyBot that ended "
            f"(pid {run.pid}): released") in err
    assert farm.holders() == {"f4-bench-1": "", "f4-bench-2": ""}


def test_place_keys_are_checked():
    base = {"kind": "mcu", "board": "netduinoplus2", "backend": "labgrid", "flash": "x {elf}"}
    cfg = parse_config({"targets": {"a": {**base, "place": {"board": "netduinoplus2"}}}})
    assert cfg.targets["a"].place == {"board": "netduinoplus2"}
    for bad, said in (({}, "place' is missing"), ({"place": "p", "acquire_timeout": -1},
                                                  "acquire_timeout")):
        with pytest.raises(ConfigError, match=said):
            parse_config({"targets": {"a": {**base, **bad}}})


def test_doctor_lists_the_places_and_who_holds_them_and_probe_leaves_the_farm_out(farm, tmp_path):
    farm.client("-p", "f4-bench-2", "acquire", user="bob")
    write_config(tmp_path, farm, place='"f4-bench-1"')
    port = unused_port()  # and a target on a coordinator nobody runs, in the same doctor run
    with (tmp_path / "config.toml").open("a") as f:
        f.write(f'\n[targets.gone]\nkind = "mcu"\nboard = "netduinoplus2"\n'
                f'backend = "labgrid"\nplace = "p"\ncoordinator = "127.0.0.1:{port}"\n'
                f'flash = "true {{elf}}"\n')
    r = subprocess.run([*verifybot_cmd(), "doctor", "--config", "config.toml"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, env=env(tmp_path))
    out = r.stdout + r.stderr
    assert f"labgrid coordinator 127.0.0.1:{port} cannot be reached" in out, out
    assert "ERROR:root" not in out and "coordinator is unavailable" not in out, out
    assert f"labgrid coordinator {farm.address}: 2 place(s); place f4-bench-1 matches " \
           "f4-bench-1" in out, out
    assert re.search(r"place f4-bench-1 \(board netduinoplus2\): free; tags board="
                     r"netduinoplus2, slot=0 <- this target", out), out
    assert re.search(r"place f4-bench-2 \(board netduinoplus2\): held by \S+/bob", out), out
    p = subprocess.run([*verifybot_cmd(), "probe", "--config", "config.toml", "--target", "lab"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120,
                       env=env(tmp_path))
    assert p.returncode == 0, p.stderr[-2000:]
    # the LLM's context names the board, nothing of the farm
    assert "netduinoplus2" in p.stdout.lower() and "f4-bench" not in p.stdout, p.stdout


def unused_port() -> int:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_coordinator_is_said_plainly(tmp_path):
    """At a run's start (doctor's line: in the doctor test above)."""
    port = unused_port()
    (tmp_path / "config.toml").write_text(
        f'[run]\nworkspace = "ws"\n\n[targets.lab]\nkind = "mcu"\nboard = "netduinoplus2"\n'
        f'backend = "labgrid"\nplace = "p"\ncoordinator = "127.0.0.1:{port}"\n'
        f'flash = "true {{elf}}"\n')
    code, _, err = finish(start_run(tmp_path, SUM, "nowhere"))
    assert code == 4 and f"127.0.0.1:{port} cannot be reached" in err, err[-2000:]
    assert "ERROR:root" not in err


def test_telnet_commands_are_dropped_from_an_rfc2217_stream():
    from verifybot_tui.targets.mcu.farm.serial_tcp import TelnetFilter

    f = TelnetFilter()
    stream = (b"\xff\xfb\x01\xff\xfd\x2csum=55\n\xff\xfa\x2c\x01\x00\x01\xc2\x00\xff\xf0"
              b"a\xff\xffb\nPAS")
    # split anywhere, the same bytes come out
    assert f.feed(stream[:5]) + f.feed(stream[5:20]) + f.feed(stream[20:]) + \
        f.feed(b"SED\n") == b"sum=55\na\xffb\nPASSED\n"


def test_a_place_given_back_is_taken_again_at_once_even_without_waiting(farm, tmp_path):
    """Released, the place's resources stay marked acquired until the exporter says
    otherwise; an acquire right then (acquire_timeout 0) must not call the place held.
    This is how a kill -9's leftover is taken over at the next start."""
    cfg = parse_config({"targets": {"lab": {
        "kind": "mcu", "board": "netduinoplus2", "backend": "labgrid", "place": "f4-bench-1",
        "coordinator": farm.address, "acquire_timeout": 0, "flash": "x {elf}"}}}).targets["lab"]
    said: list[str] = []

    async def turns() -> None:
        async with farm_session(farm.address) as session:
            for _ in range(5):
                claim = await claims.acquire(session, cfg, farm.address,
                                             lambda _s, t: said.append(t))
                await claims.release(session, claim, lambda _s, t: said.append(t))

    os.environ["XDG_STATE_HOME"] = str(tmp_path / "state")
    try:
        asyncio.run(turns())
    finally:
        del os.environ["XDG_STATE_HOME"]
    assert sum("acquired place f4-bench-1" in t for t in said) == 5, said
    assert farm.holders()["f4-bench-1"] == ""


def test_the_baud_rate_command_escapes_its_iac_bytes():
    from verifybot_tui.targets.mcu.farm.serial_tcp import set_baudrate

    assert set_baudrate(115200) == b"\xff\xfb\x2c\xff\xfa\x2c\x01\x00\x01\xc2\x00\xff\xf0"
    assert set_baudrate(0xFF00) == b"\xff\xfb\x2c\xff\xfa\x2c\x01\x00\x00\xff\xff\x00\xff\xf0"
