"""The place's NetworkSerialPort: a TCP connection to ser2net, fed to the UART contract.

labgrid exports a board's serial port as host, port and protocol ("raw", or
"rfc2217": telnet, whose option negotiation is dropped here: VerifyBot only reads,
at the speed the exporter set). The bytes go, decoded, into the same UartReader
the emulator and the probe backends use, so the end line means the same here.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
from dataclasses import dataclass
from typing import Any

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.targets.mcu.uart import UartReader

IAC, SB, SE, WILL = 0xFF, 0xFA, 0xF0, 0xFB
COM_PORT_OPTION, SET_BAUDRATE = 44, 1  # RFC 2217; the server answers a command with +100
# Seconds after connecting: ser2net opens (and flushes) the port after the accept, and
# a board reset before that loses its first bytes. 0.3 s lost them once in a loaded CI
# run (a recipe's second attempt read nothing): a busy exporter host needs longer.
SETTLE = 1.0
# Seconds to wait for the server's answer to the baud rate: ser2net reads a client's
# commands once the device is open, so the answer says the open (and its flush) is done.
# A loaded CI run lost a board's whole output with the settle time alone.
OPEN_WITHIN = 10.0


@dataclass
class NetworkSerial:
    host: str
    port: int
    protocol: str
    speed: int

    def url(self) -> str:
        return f"{self.protocol}://{self.host}:{self.port}"


async def network_serial(session: Any, place_name: str, within: float = 10.0) -> NetworkSerial:
    """The NetworkSerialPort the acquired place holds (its first, by name), once its exporter
    has published its port (an exporter starts ser2net when the place is acquired)."""
    place = session.places[place_name]
    deadline = asyncio.get_running_loop().time() + within
    while True:
        found = [res.args for (_, cls), res in sorted(session.get_target_resources(place).items(),
                                                       key=lambda kv: kv[0])
                 if cls == "NetworkSerialPort"]
        if found and found[0].get("port") and found[0].get("host"):
            args = found[0]
            return NetworkSerial(str(args["host"]), int(args["port"]),
                                 str(args.get("protocol", "rfc2217")),
                                 int(args.get("speed", 115200)))
        if not found or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.1)
        await session.sync_with_coordinator()
    raise TargetError(f"labgrid place {place_name} holds no usable NetworkSerialPort "
                      "(its resources: "
                      f"{', '.join(sorted(c for _, c in session.get_target_resources(place)))}"
                      " or none): the exporter must export the board's serial port")


class TelnetFilter:
    """Drops telnet commands from an rfc2217 stream, keeps the data bytes."""

    def __init__(self) -> None:
        self.state = 0  # 0 data, 1 after IAC, 2 option byte, 3 in SB, 4 IAC in SB

    def feed(self, data: bytes) -> bytes:
        out = bytearray()
        for b in data:
            if self.state == 0:
                if b == IAC:
                    self.state = 1
                else:
                    out.append(b)
            elif self.state == 1:
                if b == IAC:
                    out.append(b)
                    self.state = 0
                else:
                    self.state = 3 if b == SB else 2 if 0xFB <= b <= 0xFE else 0
            elif self.state == 2:
                self.state = 0
            elif self.state == 3:
                self.state = 4 if b == IAC else 3
            else:
                self.state = 0 if b == SE else 3
        return bytes(out)


def set_baudrate(speed: int) -> bytes:
    """WILL COM-PORT-OPTION, then SET-BAUDRATE ``speed``: the server's answer to it is
    the sign that the port is open."""
    return (bytes([IAC, WILL, COM_PORT_OPTION, IAC, SB, COM_PORT_OPTION, SET_BAUDRATE])
            + speed.to_bytes(4, "big").replace(b"\xff", b"\xff\xff") + bytes([IAC, SE]))


async def port_answer(reader: asyncio.StreamReader, within: float) -> tuple[bytes, bool]:
    """What came before the server answered SET-BAUDRATE, and whether it did in time."""
    answer = bytes([IAC, SB, COM_PORT_OPTION, SET_BAUDRATE + 100])
    got = b""
    deadline = asyncio.get_running_loop().time() + within
    while answer not in got:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return got, False
        try:
            data = await asyncio.wait_for(reader.read(4096), left)
        except TimeoutError:
            return got, False
        if not data:
            return got, False
        got += data
    return got, True


async def open_reader(serial: NetworkSerial, uart: UartReader
                      ) -> tuple[asyncio.Task[None], bool]:
    """Connect now (before the flash resets the board, so no first byte is lost) and feed
    the UART reader until the connection ends or the task is cancelled; with rfc2217,
    whether the server said its port is open (else only the settle time was waited)."""
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(serial.host, serial.port), 10)
    except (OSError, TimeoutError) as e:
        raise TargetError(f"the place's serial port {serial.url()} cannot be reached: "
                          f"{e or 'no answer within 10 s'}") from e

    decode = codecs.getincrementaldecoder("utf-8")("replace").decode
    telnet = TelnetFilter() if serial.protocol == "rfc2217" else None
    # ser2net opens the device once a client is connected, and the open flushes what the
    # board said before it: the flash (the board's reset) waits until the port is open
    first, opened = b"", False
    if telnet is not None and serial.speed > 0:
        writer.write(set_baudrate(serial.speed))
        with contextlib.suppress(OSError):
            await writer.drain()
        first, opened = await port_answer(reader, OPEN_WITHIN)
    elif telnet is not None:  # its option negotiation comes once the connection is set up
        with contextlib.suppress(TimeoutError):
            first = await asyncio.wait_for(reader.read(4096), 2.0)
    await asyncio.sleep(SETTLE)

    async def pump() -> None:
        try:
            if first:
                uart.feed(decode(telnet.feed(first) if telnet else first))
            while data := await reader.read(4096):
                if telnet is not None:
                    data = telnet.feed(data)
                uart.feed(decode(data))
        finally:
            writer.close()

    return asyncio.ensure_future(pump()), opened
