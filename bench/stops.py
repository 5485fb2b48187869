"""How fast a stop stops, what an endless stream costs, what a collision writes (issue 21).

Run: .venv/bin/python bench/stops.py
Prints figures; no thresholds (the promise is "within 2 s"; this machine may be busy).
Each case runs the real `verifybot` in a fresh process on a replay answer, waits for
the moment named, sends the signal, and times until the process has exited.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
CMD = [sys.executable, "-m", "verifybot_tui"]


def _transcript(folder: Path, body: str) -> str:
    path = folder / "answers.md"
    path.write_text(f"## Answer 1\n\n````markdown\n{body}\n````\n", encoding="utf-8")
    return f"replay:{path}"


def _python(code: str) -> str:
    return f"```python\n{textwrap.dedent(code).strip()}\n```\n"


class Proc:
    def __init__(self, args: list[str], cwd: Path) -> None:
        self.p = subprocess.Popen([*CMD, *args], cwd=cwd, stdin=subprocess.PIPE,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.err = b""
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.p.stderr is not None
        while chunk := os.read(self.p.stderr.fileno(), 65536):
            self.err += chunk

    def wait_for(self, text: str, limit: float = 120) -> bool:
        end = time.monotonic() + limit
        while text.encode() not in self.err:
            if self.p.poll() is not None or time.monotonic() > end:
                return False
            time.sleep(0.01)
        return True

    def stop_time(self, sig: int, limit: float = 120) -> str:
        started = time.monotonic()
        self.p.send_signal(sig)
        try:
            code = self.p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return f"still running after {limit:g} s (killed)"
        return f"{time.monotonic() - started:.2f} s (exit {code})"


def stop_case(name: str, body: str, moment: str, sig: int = signal.SIGINT,
              extra: tuple[str, ...] = ("--yes",), typed: str = "") -> None:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        args = ["run", "bench", "--llm", _transcript(folder, body), "--target", "local",
                "--max-retries", "0", "--workspace", str(folder / "ws"), *extra]
        proc = Proc(args, folder)
        if typed and proc.p.stdin is not None:  # answers to the questions before the moment
            proc.p.stdin.write(typed.encode())
            proc.p.stdin.flush()
        if not proc.wait_for(moment):
            print(f"{name}: never reached {moment!r}")
            proc.p.kill()
            return
        print(f"{name}: {signal.Signals(sig).name} -> exit in {proc.stop_time(sig)}")


def recipe_case(sig: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        pid = folder / "pid"
        code = (f"import os, time\nopen({str(pid)!r}, 'w').write(str(os.getpid()))\n"
                "time.sleep(300)")
        _transcript(folder, _python(code))
        (folder / "r.toml").write_text('name = "slow"\nprompt = "sleep"\n'
                                       'llm = "replay:answers.md"\ntimeout = 600\n')
        proc = Proc(["recipe", "run", "r.toml", "--workspace", str(folder / "ws")], folder)
        end = time.monotonic() + 120
        while not (pid.exists() and pid.read_text()) and time.monotonic() < end:
            time.sleep(0.01)
        print(f"recipe run, program sleeping: {signal.Signals(sig).name} -> exit in "
              f"{proc.stop_time(sig)}")


def collision_files() -> None:
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        body = ("```python\n# file: b.py\nprint('b')\n```\n\n"
                "```python\n# file: b_1.py/x.py\nprint('x')\n```\n")
        args = ["run", "bench", "--llm", _transcript(folder, body), "--target", "local",
                "--yes", "--max-retries", "0", "--workspace", str(folder / "ws")]
        started = time.monotonic()
        done = subprocess.run([*CMD, *args], cwd=folder, capture_output=True, timeout=300)
        took = time.monotonic() - started
        made = [p for p in (folder / "ws" / "programs").rglob("*") if p.is_file()]
        claims = list((folder / "ws" / ".versions").iterdir())
        print(f"collision b.py beside b_1.py/x.py: exit {done.returncode} in {took:.2f} s; "
              f"{len(made)} program files, {len(claims)} version claims")


ENDLESS = """
import asyncio, os, sys
sys.path.insert(0, {support!r})
from apiserver import ApiServer
from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.llm import make_llm

async def main():
    server = ApiServer(key="k").start()
    os.environ["VB_BENCH_KEY"] = "k"
    cfg = parse_config({{"run": {{"max_answer_mb": {mb}}}, "llm": {{"api": {{
        "kind": "openai", "base_url": server.url, "model": {model!r},
        "api_key_env": "VB_BENCH_KEY", "answer_timeout": 600}}}}}})
    llm = make_llm(cfg, "api", {ws!r})
    try:
        await llm.ask("hello")
    except Exception as e:
        print(type(e).__name__, str(e)[:90])
    await llm.close()
    server.stop()

asyncio.run(main())
"""


def endless_rss(model: str, mb: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        code = ENDLESS.format(support=str(ROOT / "tests" / "support"), mb=mb, model=model,
                              ws=d)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=300)
        took = time.monotonic() - started
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        said = (done.stdout.strip() or done.stderr.strip()[-200:]).splitlines()[-1:]
        print(f"API {model}, max_answer_mb = {mb}: ended in {took:.1f} s, peak RSS of the "
              f"children so far {peak:.0f} MB; {said[0] if said else ''}")


def main() -> None:
    stop_case("4.8 MB answer of '![' (extraction)", "![" * 2_400_000 + "\n\n" +
              _python("print(1)"), "answer received")
    stop_case("80,000 named blocks (extract, clash check, save)",
              "".join(f"```python\n# file: m{i}.py\nprint({i})\n```\n" for i in range(80_000)),
              "answer received")
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        stop_case("regex:^(a|a)+$ on a*40+'!'", _python('print("a" * 40 + "!")'),
                  "exit status 0", sig, ("--yes", "--expect", "regex:^(a|a)+$"))
    stop_case("Ctrl+C at the approval question", _python("print(1)"), "[a]ccept",
              extra=())
    stop_case("Ctrl+C at the install question", _python("import vbot_no_such_module\n"
                                                         "print(1)"),
              "virtual environment there?", extra=(), typed="a\n")
    stop_case("a program sleeping", _python("import time\nprint('go', flush=True)\n"
                                             "time.sleep(300)"), "running attempt")
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        recipe_case(sig)
    collision_files()
    endless_rss("endless-line", 5)
    endless_rss("endless-thinking", 5)


if __name__ == "__main__":
    main()
