"""A labgrid farm on loopback for the labgrid backend's tests: real coordinator, exporter,
ser2net, and boards that are QEMU behind a pty.

Each place's board is mcu_pty_board.py's server (a pty; "flashing" it starts QEMU
with the ELF, its UART copied into the pty). The exporter exports the pty as a
RawSerialPort, so labgrid itself starts Debian's ser2net for it when a place is
acquired and publishes it as the place's NetworkSerialPort, as on a real farm.
Everything listens on 127.0.0.1 on free ports; every process is stopped by its pid.

Starting a farm costs seconds (a coordinator, an exporter, a ser2net; its places are
made on one labgrid session), so a test module keeps one and ``Farm.reset`` puts it back as
it was started before each test: every place released (whoever held it) with its
resources reported free again, every board blanked (no emulator, no firmware file,
nothing unread on its serial port).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import mcu_pty_board
from labgrid.remote.generated import labgrid_coordinator_pb2  # type: ignore[import-untyped]

from verifybot_tui.targets.mcu.farm.session import farm_session, list_places

BIN = Path(sys.executable).parent
BOARD = Path(__file__).resolve().parent / "mcu_pty_board.py"
QEMU = ["qemu-system-arm", "-M", "netduinoplus2", "-display", "none", "-monitor", "none",
        "-serial", "stdio", "-kernel"]
SER2NET = "/usr/sbin/ser2net"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, ok, within: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while not ok():
        if time.monotonic() > deadline:
            raise AssertionError(f"the farm: {what} did not happen within {within:g} s")
        time.sleep(0.05)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (the exporter's ser2net)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@dataclass
class Farm:
    address: str
    folder: Path
    places: list[str]
    boards: dict[str, Path] = field(default_factory=dict)  # place -> its board's folder
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def flash(self) -> str:
        """The flash command template that loads an ELF into the board of the place a run
        got (its folder is named for the place: the backend fills in {place})."""
        return f"{sys.executable} {BOARD} flash {self.folder}/{{place}} {{elf}}"

    def client(self, *args: str, user: str | None = None,
               check: bool = True) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "LG_COORDINATOR": self.address}
        if user:
            env["LG_USERNAME"] = user
        return subprocess.run([str(BIN / "labgrid-client"), *args], capture_output=True,
                              text=True, timeout=60, env=env, check=check)

    def holders(self) -> dict[str, str]:
        """place -> "host/user" holding it, "" when free (labgrid's own session)."""
        return {p.name: p.holder for p in asyncio.run(list_places(self.address))}

    def reset(self) -> None:
        """Every place free (its resources too, as the exporter reports them), every board
        blank: the farm as _up left it, for the next test."""
        asyncio.run(_free_everything(self.address))
        for folder in self.boards.values():
            mcu_pty_board.blank(folder)

    def ser2nets(self) -> list[int]:
        return [c for p in self.procs for c in children(p.pid)]


async def _free_everything(address: str, within: float = 30.0) -> None:
    async with farm_session(address) as session:
        for name, place in session.places.items():
            if place.acquired:  # whoever holds it (labgrid-client's --kick does the same)
                await session.stub.ReleasePlace(
                    labgrid_coordinator_pb2.ReleasePlaceRequest(placename=name))
        deadline = time.monotonic() + within
        while True:
            await session.sync_with_coordinator()
            held = [name for name, place in session.places.items() if place.acquired]
            busy = [name for groups in session.resources.values() for group in groups.values()
                    for name, entry in group.items() if entry.acquired]
            if not held and not busy:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"the farm: still held after {within:g} s: places {held}, "
                                     f"resources {busy}")
            await asyncio.sleep(0.05)


def _start(argv: list[str], folder: Path, log: str) -> subprocess.Popen[bytes]:
    out = (folder / log).open("wb")
    return subprocess.Popen(argv, cwd=folder, stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)


@contextmanager
def loopback_farm(places: tuple[str, ...] = ("f4-bench-1",),
                  board: str = "netduinoplus2") -> Iterator[Farm]:
    folder = Path(tempfile.mkdtemp(prefix="vb-farm-"))
    farm = Farm(f"127.0.0.1:{free_port()}", folder, list(places))
    try:
        _up(farm, places, board)
        yield farm
    finally:
        _down(farm)
        shutil.rmtree(folder, ignore_errors=True)


def _up(farm: Farm, places: tuple[str, ...], board: str) -> None:
    folder = farm.folder
    exported = {}
    for i, place in enumerate(places):
        bfolder = folder / place
        bfolder.mkdir()
        farm.boards[place] = bfolder
        farm.procs.append(_start([sys.executable, str(BOARD), "serve", str(bfolder),
                                  json.dumps(QEMU)], folder, f"board{i}.log"))
        wait_for(f"board {i} ready", (bfolder / "ready").exists)
        exported[f"board{i}"] = {"RawSerialPort": {"port": os.path.realpath(bfolder / "tty"),
                                                   "speed": 115200}}
    (folder / "exporter.yaml").write_text(json.dumps(exported))  # JSON is YAML
    host, port = farm.address.split(":")
    farm.procs.append(_start([str(BIN / "labgrid-coordinator"), "-l", farm.address], folder,
                             "coordinator.log"))

    def listening() -> bool:
        try:
            socket.create_connection((host, int(port)), 0.5).close()
            return True
        except OSError:
            return False

    wait_for("the coordinator listens", listening)
    farm.procs.append(_start([str(BIN / "labgrid-exporter"), "-c", farm.address, "-n", "vbexp",
                              "--hostname", "127.0.0.1", "exporter.yaml"], folder,
                             "exporter.log"))
    asyncio.run(_make_places(farm.address, places, board))


async def _make_places(address: str, places: tuple[str, ...], board: str,
                       within: float = 20.0) -> None:
    """labgrid-client's create, add-match and set-tags for each place, once the exporter's
    resources are there, on one session (seven labgrid-client runs cost seconds)."""
    async with farm_session(address) as session:
        deadline = time.monotonic() + within
        while not all(any(entry.cls == "NetworkSerialPort" for entry in
                          session.resources.get("vbexp", {}).get(f"board{i}", {}).values())
                      for i in range(len(places))):
            if time.monotonic() > deadline:
                raise AssertionError(f"the farm: the exporter's resources did not appear "
                                     f"within {within:g} s")
            await asyncio.sleep(0.05)
            await session.sync_with_coordinator()
        for i, place in enumerate(places):
            await session.stub.AddPlace(labgrid_coordinator_pb2.AddPlaceRequest(name=place))
            await session.stub.AddPlaceMatch(labgrid_coordinator_pb2.AddPlaceMatchRequest(
                placename=place, pattern=f"vbexp/board{i}/NetworkSerialPort"))
            await session.stub.SetPlaceTags(labgrid_coordinator_pb2.SetPlaceTagsRequest(
                placename=place, tags={"board": board, "slot": str(i)}))
        await session.sync_with_coordinator()


def _down(farm: Farm) -> None:
    leftovers = farm.ser2nets()
    boards = [int((b / "qemu.pid").read_text()) for b in farm.boards.values()
              if (b / "qemu.pid").exists()]
    for proc in reversed(farm.procs):
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pid in leftovers + boards:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
