"""A farm target fails before the LLM is asked, and without labgrid says the one line.

The LLM is the loopback API server, so "before asking" is what it received: nothing.
The farm is real (tests/support/labgrid_farm.py: coordinator, exporter, ser2net and
QEMU boards on loopback); the dead coordinator is a real one, started and then stopped.
Without the [farm] extra, labgrid is made unimportable for the subprocess (a module of
that name that raises ModuleNotFoundError first on its path, as a missing package does).
"""

from __future__ import annotations

import getpass
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from api_fixtures import KEY, KEY_ENV, llm_table
from apiserver import ApiServer
from labgrid_farm import free_port, loopback_farm
from mcu_fixtures import SUM, c_answer
from project import need, verifybot_cmd

ME = f"{socket.gethostname()}/{getpass.getuser()}"


@pytest.fixture(scope="module")
def farm():
    need("arm-none-eabi-gcc", "qemu-system-arm", "/usr/sbin/ser2net")
    with loopback_farm(("f4-bench-1",)) as f:
        yield f


@pytest.fixture
def server():
    s = ApiServer(key=KEY, answers=[c_answer(SUM)]).start()
    try:
        yield s
    finally:
        s.stop()


def env(tmp: Path, **extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("LG_")}
    return {**e, "XDG_STATE_HOME": str(tmp / "state"), KEY_ENV: KEY, **extra}


def config(tmp: Path, server_url: str, coordinator: str, place: str = "f4-bench-1",
           timeout: float = 0, extra: str = "") -> None:
    (tmp / "config.toml").write_text(
        '[run]\nworkspace = "ws"\ndefault_llm = "api"\n\n'
        + llm_table("api", "openai", server_url, "coder")
        + f'\n[targets.lab]\nkind = "mcu"\nboard = "netduinoplus2"\nbackend = "labgrid"\n'
          f'place = "{place}"\ncoordinator = "{coordinator}"\nacquire_timeout = {timeout}\n'
          f'flash = "true {{elf}}"\n' + extra)


def verifybot(tmp: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), *args, "--config", "config.toml"], cwd=tmp,
                          capture_output=True, text=True, timeout=180, env=env(tmp, **extra))


def run(tmp: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    return verifybot(tmp, "run", "a firmware that sums 1..10", "--target", "lab", "--yes",
                     "--judge", "off", "--max-retries", "0", **extra)


def dead_coordinator(folder: Path) -> str:
    """The address of a real labgrid coordinator that was started, then stopped."""
    address = f"127.0.0.1:{free_port()}"
    proc = subprocess.Popen([str(Path(sys.executable).parent / "labgrid-coordinator"), "-l",
                             address], cwd=folder, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    host, port = address.split(":")
    deadline = time.monotonic() + 20
    while True:
        try:
            socket.create_connection((host, int(port)), 0.5).close()
            break
        except OSError:
            assert time.monotonic() < deadline, "the coordinator never listened"
            time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.wait(10)
    return address


def test_a_dead_coordinator_fails_before_the_prompt(tmp_path, server):
    address = dead_coordinator(tmp_path)
    config(tmp_path, server.url, address)
    r = run(tmp_path)
    assert r.returncode == 4, r.stdout + r.stderr
    assert f"labgrid coordinator {address} cannot be reached" in r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert server.chats() == []  # the LLM was never asked
    assert not (tmp_path / "ws" / "programs").exists() or \
        not list((tmp_path / "ws" / "programs").iterdir())


def test_a_missing_or_busy_place_fails_before_the_prompt(tmp_path, server, farm):
    farm.reset()
    config(tmp_path, server.url, farm.address, place="f4-bench-9")
    r = run(tmp_path)
    assert r.returncode == 4, r.stdout + r.stderr
    assert f"labgrid coordinator {farm.address} has no place f4-bench-9 (its places: " \
           "f4-bench-1)" in r.stdout + r.stderr
    farm.client("-p", "f4-bench-1", "acquire", user="alice")
    try:
        config(tmp_path, server.url, farm.address)
        r = run(tmp_path)
        out = r.stdout + r.stderr
        assert r.returncode == 4, out
        assert "labgrid: place f4-bench-1 is held (f4-bench-1 by " in out and "/alice)" in out
        assert "acquire_timeout = 0 does not wait" in out
    finally:
        farm.reset()
    assert server.chats() == []


def test_the_llm_context_holds_the_board_and_nothing_of_the_farm(tmp_path, server, farm):
    farm.reset()
    config(tmp_path, server.url, farm.address)
    p = verifybot(tmp_path, "probe", "--target", "lab")
    assert p.returncode == 0, p.stderr[-2000:]
    context = (tmp_path / "ws" / "context" / "lab.md").read_text()
    assert "netduinoplus2" in context.lower() or "Netduino" in context
    for farm_fact in (farm.address, "f4-bench", "slot=", "labgrid coordinator"):
        assert farm_fact not in context and farm_fact not in p.stdout, farm_fact


def test_without_labgrid_doctor_probe_and_run_say_one_line(tmp_path, server):
    gone = tmp_path / "no-labgrid"
    gone.mkdir()
    (gone / "labgrid.py").write_text(
        'raise ModuleNotFoundError("No module named \'labgrid\'", name="labgrid")\n')
    config(tmp_path, server.url, "127.0.0.1:9", extra='\n[targets.here]\nkind = "local"\n')
    path = str(gone) + os.pathsep + os.environ.get("PYTHONPATH", "")
    line = "labgrid is not installed here: the farm backend needs it: " \
           "pip install 'verifybot-tui[farm]'"
    d = verifybot(tmp_path, "doctor", PYTHONPATH=path)
    assert f"FAIL target lab: {line}" in d.stdout, d.stdout + d.stderr
    assert "target here: this machine" in d.stdout  # doctor went on to the next check
    assert "Traceback" not in d.stderr and "ModuleNotFoundError" not in d.stdout + d.stderr
    for args in (("probe", "--target", "lab"), ("run", "a firmware", "--target", "lab",
                                                "--yes", "--judge", "off")):
        r = verifybot(tmp_path, *args, PYTHONPATH=path)
        assert r.returncode == 4, r.stdout + r.stderr
        assert line in r.stdout + r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert server.chats() == []
