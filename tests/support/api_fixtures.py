"""Shared set-up for the API backend tests: the loopback server and configs that point at it."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import cli_runs
import pytest
from apiserver import ApiServer
from project import EXAMPLES, verifybot_cmd

from verifybot_tui.llm.replay import parse_answers

KEY = "vb-secret-7f3a9c1e5d2b8a64"  # what the tests grep for everywhere afterwards
KEY_ENV = "VB_TEST_API_KEY"
PROMPT = "Print the total number of words in a short text and its 3 most common words"


@pytest.fixture
def api_server() -> Iterator[ApiServer]:
    """The server, answering with the word-count example: a real bug first, then its fix."""
    answers = parse_answers((EXAMPLES / "word_count.md").read_text(encoding="utf-8"))
    server = ApiServer(key=KEY, answers=answers).start()
    try:
        yield server
    finally:
        server.stop()


def closed_port() -> int:
    """A loopback port nothing listens on (connection refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def llm_table(name: str, kind: str, url: str, model: str, **extra: object) -> str:
    lines = [f"[llm.{name}]", f'kind = "{kind}"', f'base_url = "{url}"', f'model = "{model}"',
             f'api_key_env = "{KEY_ENV}"']
    for k, v in extra.items():
        lines.append(f"{k} = {v!r}" if not isinstance(v, str) else f'{k} = "{v}"')
    return "\n".join(lines) + "\n"


def write_config(tmp: Path, *tables: str, default_llm: str = "chatgpt") -> Path:
    cfg = tmp / "config.toml"
    cfg.write_text(f'[run]\ndefault_llm = "{default_llm}"\nmax_retries = 2\n\n'
                   + "\n".join(tables), encoding="utf-8")
    return cfg


def run_cli(*args: str, cwd: Path, key: str | None = KEY,
            timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}
    if key is not None:
        env[KEY_ENV] = key
    return subprocess.run([*verifybot_cmd(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


def run_here(*args: str, cwd: Path, key: str | None = KEY) -> subprocess.CompletedProcess[str]:
    """``run_cli`` in this test process (cli_runs.run_here): for what a command says."""
    return cli_runs.run_here(*args, cwd=cwd, env={KEY_ENV: key})


def files_holding(root: Path, needle: str) -> list[Path]:
    """Every file under root whose bytes contain needle (SQLite files included)."""
    data = needle.encode()
    return [p for p in root.rglob("*") if p.is_file() and data in p.read_bytes()]
