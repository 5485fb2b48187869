"""What the kept-open SSH connection buys: figures against a real sshd on loopback.

Prints the time per command on the one persistent connection against a fresh
connection per command (what a script that connects each time pays), the
probe's time against one command's, and a whole small run's. Needs root (it
starts sshd and creates the test user, as the tests do).

    .venv/bin/python bench/ssh_overhead.py [N]

Goals: a command on the persistent connection >= 10x cheaper than a fresh
connection; the probe within 2x of one command (of its slowest one: the
commands run in parallel channels, so the probe costs about the slowest).
Over Wi-Fi to a Pi every figure grows, the fresh-connection one the most.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import asyncssh

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from sshd_fixtures import start_sshd  # noqa: E402

from verifybot_tui.core.base.ports import ProgramFile, RunRequest  # noqa: E402
from verifybot_tui.targets import probe_ssh  # noqa: E402
from verifybot_tui.targets.ssh import SSHTarget  # noqa: E402


def ms(values: list[float]) -> str:
    return (f"median {statistics.median(values) * 1000:7.1f} ms, "
            f"min {min(values) * 1000:6.1f}, max {max(values) * 1000:6.1f}")


async def timed(coro_factory, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        await coro_factory()
        out.append(time.perf_counter() - t0)
    return out


async def main(n: int) -> None:
    server = start_sshd()
    try:
        with tempfile.TemporaryDirectory() as ws:
            target = SSHTarget(server.config(f"~/{server.base}/bench"), Path(ws))
            t0 = time.perf_counter()
            await target.connect()
            first_connect = time.perf_counter() - t0
            conn = target._conn
            assert conn is not None

            persistent = await timed(lambda: conn.run("true", check=True), n)

            async def fresh() -> None:
                async with asyncssh.connect(
                        server.host, port=server.port, username=server.user,
                        client_keys=[str(server.client_key)],
                        known_hosts=str(server.known_hosts)) as c:
                    await c.run("true", check=True)

            fresh_times = await timed(fresh, n)

            commands = probe_ssh.probe_commands("'" + target.remote_dir + "'")
            singles = {name: statistics.median(await timed(lambda c=c: conn.run(c), 5))
                       for name, c in commands.items()}
            probe = await timed(target.probe, 10)
            req = RunRequest("bench_1", [ProgramFile("main.py", "main_1.py", "print('hi')\n",
                                                     "python")], "main.py", "python", 30)
            runs = await timed(lambda: target.run(req, lambda s, t: None), 10)
            await target.close()

        p, f = statistics.median(persistent), statistics.median(fresh_times)
        slowest = max(singles, key=singles.get)
        print(f"sshd on 127.0.0.1:{server.port}, N={n}")
        print(f"first connect (auth, home, venv check): {first_connect * 1000:.1f} ms")
        print(f"command, persistent connection : {ms(persistent)}")
        print(f"command, fresh connection each : {ms(fresh_times)}")
        print(f"  -> persistent is {f / p:.1f}x cheaper per command (goal >= 10x)")
        print(f"probe ({len(commands)} commands, parallel channels): {ms(probe)}")
        print(f"  one trivial command: {p * 1000:.1f} ms; slowest probe command alone "
              f"({slowest}): {singles[slowest] * 1000:.1f} ms; all probe commands one after "
              f"another: {sum(singles.values()) * 1000:.1f} ms")
        print(f"  -> probe / slowest command = {statistics.median(probe) / singles[slowest]:.2f}"
              f" (goal <= 2); probe / trivial command = {statistics.median(probe) / p:.1f}")
        print(f"whole run of print('hi') (fresh folder, SFTP, launch, leftovers+files check): "
              f"{ms(runs)}")
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50))
