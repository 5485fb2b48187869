"""A small client of QEMU's GDB stub: how a fault or a hang is seen from outside the firmware.

The firmware may bring its own start-up code and fault handler (or none): what
VerifyBot can rely on is the vector table in the ELF and the CPU itself. QEMU
starts paused with its GDB stub on a Unix socket; this client sets breakpoints
on the fault vectors, lets the CPU run, and when a breakpoint hits (or the
timeout comes and the CPU is interrupted) reads registers and memory. Only the
handful of Remote Serial Protocol packets that needs is spoken here.
"""

from __future__ import annotations

import asyncio
import struct


class GdbError(Exception):
    """The stub did not answer as expected (QEMU gone, a refused packet)."""


def _checksum(payload: bytes) -> bytes:
    return b"%02x" % (sum(payload) & 0xFF)


class GdbStub:
    """One connection to a stub; every call waits for its reply."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, path: str, timeout: float = 5.0,
                      ended: asyncio.Future[None] | None = None) -> GdbStub:
        """Connect to the stub's socket, retrying while QEMU is still creating it
        (and not after ``ended``: QEMU exited, a bad option say)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                reader, writer = await asyncio.open_unix_connection(path)
                return cls(reader, writer)
            except (FileNotFoundError, ConnectionRefusedError):
                if ended is not None and ended.done():
                    raise GdbError("the emulator ended before its GDB stub was up") from None
                if loop.time() > deadline:
                    raise GdbError(f"no GDB stub at {path} within {timeout:g} s") from None
                await asyncio.sleep(0.01)

    async def _send(self, payload: bytes) -> None:
        self.writer.write(b"$" + payload + b"#" + _checksum(payload))
        await self.writer.drain()

    async def _packet(self) -> bytes:
        """The next packet's payload (acks and notification noise skipped); acked."""
        while True:
            ch = await self.reader.read(1)
            if not ch:
                raise GdbError("the GDB stub closed the connection (the emulator ended)")
            if ch == b"$":
                break
        body = await self.reader.readuntil(b"#")
        await self.reader.readexactly(2)
        self.writer.write(b"+")
        return body[:-1]

    async def command(self, payload: str, timeout: float = 5.0) -> str:
        await self._send(payload.encode())
        return (await asyncio.wait_for(self._packet(), timeout)).decode("latin-1")

    async def start(self) -> None:
        """The opening exchange; the CPU stays stopped (QEMU was started with -S)."""
        await self.command("qSupported:swbreak+")
        await self.command("?")

    async def breakpoint(self, address: int, kind: int) -> bool:
        return await self.command(f"Z0,{address:x},{kind}") == "OK"

    async def cont(self) -> None:
        """Let the CPU run; the stop reply comes with ``wait_stop``."""
        await self._send(b"c")

    async def wait_stop(self) -> str:
        """Wait for the CPU to stop (a breakpoint); the stop reply."""
        return (await self._packet()).decode("latin-1")

    async def interrupt(self, timeout: float = 2.0) -> str:
        """Stop a running CPU (Ctrl+C on the wire); the stop reply."""
        self.writer.write(b"\x03")
        await self.writer.drain()
        return (await asyncio.wait_for(self._packet(), timeout)).decode("latin-1")

    async def registers(self) -> bytes:
        text = await self.command("g")
        if not text or text.startswith("E"):
            raise GdbError(f"cannot read the registers: {text!r}")
        return bytes.fromhex(text.replace("x", "0"))

    async def memory(self, address: int, length: int) -> bytes:
        text = await self.command(f"m{address:x},{length:x}")
        if not text or text.startswith("E"):
            raise GdbError(f"cannot read {length} bytes at {address:#x}: {text!r}")
        return bytes.fromhex(text)

    async def words(self, address: int, count: int) -> list[int]:
        data = await self.memory(address, 4 * count)
        return list(struct.unpack(f"<{count}I", data))

    def close(self) -> None:
        self.writer.close()
