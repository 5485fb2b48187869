"""Figures for the API backends against the loopback test server (tests/support/apiserver).

What VerifyBot itself adds, with the network and the model taken out: the import
cost of each client library (paid only when an API LLM is used), the time to the
first streamed text and to the whole answer, and how soon a cancel closes the
stream (the server sees the hang-up). The server runs in this process's
threads, so the per-answer times include its own work too: an upper bound.

Run: .venv/bin/python bench/api_overhead.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from apiserver import ApiServer  # noqa: E402

from verifybot_tui.core.settings.config import LLMConfig  # noqa: E402
from verifybot_tui.llm.api_kinds import make_api_llm  # noqa: E402

KEY = "bench-key-0123456789"
ANSWER = ("Here is the program:\n\n```python\n" + "print('hello')\n" * 200 + "```\n")
ROUNDS = 20


def import_cost(module: str) -> float:
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    times = [float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                  text=True, check=True).stdout) for _ in range(3)]
    return min(times)


async def asks(server: ApiServer, kind: str) -> None:
    url = server.url if kind == "openai" else server.anthropic_url
    cfg = LLMConfig(name="bench", kind=kind, base_url=url, model="coder",
                    api_key_env="VB_BENCH_KEY")
    llm = make_api_llm(cfg, Path(tempfile.mkdtemp(prefix="vb-bench-")))
    firsts, wholes = [], []
    for _ in range(ROUNDS):
        await llm.new_chat()
        t0 = time.perf_counter()
        first: list[float] = []
        def on_text(_text: str, first: list[float] = first, t0: float = t0) -> None:
            if not first:
                first.append(time.perf_counter() - t0)

        await llm.ask("bench", on_text)
        wholes.append(time.perf_counter() - t0)
        firsts.append(first[0])
    await llm.close()
    print(f"{kind:9}: first text {statistics.median(firsts) * 1000:6.1f} ms, whole answer "
          f"({len(ANSWER)} chars, {len(ANSWER) // 7} SSE events) "
          f"{statistics.median(wholes) * 1000:6.1f} ms (median of {ROUNDS})")


async def cancel(server: ApiServer, kind: str) -> None:
    url = server.url if kind == "openai" else server.anthropic_url
    cfg = LLMConfig(name="bench", kind=kind, base_url=url, model="slow",
                    api_key_env="VB_BENCH_KEY")
    llm = make_api_llm(cfg, Path(tempfile.mkdtemp(prefix="vb-bench-")))
    seen: list[str] = []
    task = asyncio.create_task(llm.ask("long", seen.append))
    while len(seen) < 3:
        await asyncio.sleep(0.01)
    server.hangups.clear()
    t0 = time.time()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    returned = time.time() - t0
    while not server.hangups:
        await asyncio.sleep(0.005)
    await llm.close()
    print(f"{kind:9}: cancel returns in {returned * 1000:.1f} ms; the server sees the "
          f"hang-up {(server.hangups[0] - t0) * 1000:.0f} ms after the cancel (it writes "
          "every 100 ms)")


async def main() -> None:
    print(f"import openai:    {import_cost('openai') * 1000:.0f} ms")
    print(f"import anthropic: {import_cost('anthropic') * 1000:.0f} ms")
    os.environ["VB_BENCH_KEY"] = KEY
    server = ApiServer(key=KEY, answers=[ANSWER]).start()
    try:
        for kind in ("openai", "anthropic"):
            await asks(server, kind)
        for kind in ("openai", "anthropic"):
            await cancel(server, kind)
    finally:
        server.stop()


if __name__ == "__main__":
    asyncio.run(main())
