"""What an SSH run costs against the same program started by hand: a real sshd on loopback.

Every figure comes from paired runs taken in turn (A B A B ...), so a machine
that slows down mid-bench slows both sides of a pair; each is printed as the
median of the pairs' ratios to its baseline, with min and max:

- a whole run of ``print('hi')`` (files in, program, after-run check) against
  the same program started by hand over the same kept connection (``cd DIR &&
  python3 -u main.py`` on a channel of its own) [goal <= 1.5x];
- the round trips of each, counted: the same pair again through a loopback
  proxy that holds every packet ``DELAY`` ms each way, so each round trip made
  in sequence costs ``2 * DELAY`` more; (delayed - direct) / (2 * DELAY),
  rounded, is the count [goal: a run <= 4];
- a command on the kept connection against a fresh connection per command;
- the probe against its slowest single command.

Needs root (it starts sshd and creates the test user, as the tests do).

    .venv/bin/python bench/ssh_overhead.py [PAIRS] [DELAY_MS]
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncssh

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from sshd_fixtures import SSHDServer, start_sshd  # noqa: E402

from verifybot_tui.core.base.ports import ProgramFile, RunRequest  # noqa: E402
from verifybot_tui.targets import probe_ssh  # noqa: E402
from verifybot_tui.targets.ssh.target import SSHTarget  # noqa: E402

Timed = Callable[[], Awaitable[object]]


async def once(fn: Timed) -> float:
    t0 = time.perf_counter()
    await fn()
    return time.perf_counter() - t0


async def paired(a: Timed, b: Timed, n: int) -> tuple[list[float], list[float]]:
    """n pairs, the two in turn (a b a b ...), after one warm-up of each."""
    await a()
    await b()
    times_a, times_b = [], []
    for _ in range(n):
        times_a.append(await once(a))
        times_b.append(await once(b))
    return times_a, times_b


def row(label: str, a: list[float], b: list[float], base: str, goal: str = "") -> str:
    ratios = [x / y for x, y in zip(a, b, strict=True)]
    return (f"{label:<44} {statistics.median(a) * 1000:7.1f} ms vs {base} "
            f"{statistics.median(b) * 1000:6.1f} ms: ratio median {statistics.median(ratios):5.2f}"
            f" (min {min(ratios):.2f}, max {max(ratios):.2f}){goal}")


class DelayProxy:
    """A loopback TCP proxy that holds each chunk ``delay`` s before passing it on, in order."""

    def __init__(self, port: int, delay: float) -> None:
        self.port, self.delay = port, delay
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self.server.sockets[0].getsockname()[1]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_r, up_w = await asyncio.open_connection("127.0.0.1", self.port)
        await asyncio.gather(self._pipe(reader, up_w), self._pipe(up_r, writer),
                             return_exceptions=True)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    break
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                dst.write(data)
                await dst.drain()
            dst.close()

        sender = asyncio.ensure_future(deliver())
        while data := await src.read(65536):
            queue.put_nowait((time.monotonic() + self.delay, data))
        queue.put_nowait((0.0, b""))
        await sender

    def close(self) -> None:
        if self.server is not None:
            self.server.close()


def proxied_target(server: SSHDServer, port: int, ws: Path) -> SSHTarget:
    known = ws / "known_hosts_proxy"
    known.write_text(f"[127.0.0.1]:{port} {server.host_key_line}\n")
    cfg = server.config(f"~/{server.base}/bench", port=port, known_hosts=str(known))
    return SSHTarget(cfg, ws / "proxied")


def run_and_hand(target: SSHTarget, n: list[int]) -> tuple[Timed, Timed]:
    """A whole run of print('hi') and the same program started by hand in its folder."""

    async def run() -> None:
        n[0] += 1
        req = RunRequest(f"bench_{n[0]}", [ProgramFile("main.py", "main_1.py", "print('hi')\n",
                                                        "python")], "main.py", "python", 30)
        result = await target.run(req, lambda s, t: None)
        assert result.exit_code == 0 and result.stdout == "hi\n", result

    async def hand() -> None:
        assert target.conn is not None
        folder = f"{target.remote_dir}/runs/bench_{n[0]}"
        r = await target.conn.run(f"cd {folder} && python3 -u main.py", check=True)
        assert r.stdout == "hi\n"

    return run, hand


async def trips(direct: list[float], delayed: list[float], rtt: float) -> str:
    extra = statistics.median(delayed) - statistics.median(direct)
    return f"{extra / rtt:4.1f} -> {round(extra / rtt)}"


async def run_figures(server: SSHDServer, ws: Path, pairs: int, delay: float) -> None:
    target = SSHTarget(server.config(f"~/{server.base}/bench"), ws / "direct")
    counter = [0]
    await target.connect()
    run, hand = run_and_hand(target, counter)
    runs, hands = await paired(run, hand, pairs)
    print(row("whole run of print('hi')", runs, hands, "by hand", "  [goal <= 1.5]"))
    proxy = DelayProxy(server.port, delay)
    far = proxied_target(server, await proxy.start(), ws)
    try:
        await far.connect()
        far_run, far_hand = run_and_hand(far, counter)
        slow_runs, slow_hands = await paired(far_run, far_hand, max(3, pairs // 4))
        rtt = 2 * delay
        print(f"round trips (through a {delay * 1000:.0f} ms each-way proxy, "
              f"{max(3, pairs // 4)} pairs): run {await trips(runs, slow_runs, rtt)} "
              f"[goal <= 4], by hand {await trips(hands, slow_hands, rtt)}")
        print(f"  run through the proxy {statistics.median(slow_runs) * 1000:.0f} ms, "
              f"by hand {statistics.median(slow_hands) * 1000:.0f} ms")
    finally:
        await far.close()
        proxy.close()
    await other_figures(server, target, pairs)
    await target.close()


async def other_figures(server: SSHDServer, target: SSHTarget, pairs: int) -> None:
    conn = target.conn
    assert conn is not None

    async def kept() -> None:
        await conn.run("true", check=True)

    async def fresh() -> None:
        async with asyncssh.connect(
                server.host, port=server.port, username=server.user,
                client_keys=[str(server.client_key)], known_hosts=str(server.known_hosts)) as c:
            await c.run("true", check=True)

    fresh_times, kept_times = await paired(fresh, kept, pairs)
    print(row("command, fresh connection each", fresh_times, kept_times, "kept",
              "  [goal >= 10]"))
    commands = probe_ssh.probe_commands("'" + target.remote_dir + "'")
    singles = {name: statistics.median([await once(lambda c=c: conn.run(c)) for _ in range(5)])
               for name, c in commands.items()}
    slowest = max(singles, key=lambda k: singles[k])

    async def slowest_alone() -> None:
        await conn.run(commands[slowest])

    probes, alone = await paired(target.probe, slowest_alone, max(5, pairs // 2))
    print(row(f"probe ({len(commands)} commands, parallel)", probes, alone,
              f"slowest ({slowest})", "  [goal <= 2]"))


async def main(pairs: int, delay_ms: float) -> None:
    server = start_sshd()
    try:
        with tempfile.TemporaryDirectory() as ws:
            print(f"sshd on 127.0.0.1:{server.port}, {pairs} pairs, each pair's two in turn")
            await run_figures(server, Path(ws), pairs, delay_ms / 1000)
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30,
                     float(sys.argv[2]) if len(sys.argv) > 2 else 25.0))
