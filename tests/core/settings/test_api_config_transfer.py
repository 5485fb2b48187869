"""``verifybot config export|import`` as a user runs them: a round trip of every kind of table,
no secret ever written, a backup of the old user config, a bad file refused."""

from __future__ import annotations

import os
import subprocess
import tomllib
from dataclasses import fields
from pathlib import Path

import pytest
from project import verifybot_cmd

from verifybot_tui.core.settings.config import RunConfig

FULL = """
[run]
workspace = "work"
max_retries = 5
timeout = 12.5
auto_accept = true
default_target = "pi"
default_llm = "local_model"

[llm.chatgpt]
headless = true
browser_path = "/usr/bin/chromium"

[llm.local_model]
kind = "openai"
base_url = "http://localhost:11434/v1"
model = "qwen2.5-coder:7b"
api_key_env = "VB_TEST_OLLAMA_KEY"
temperature = 0.2
system = "Answer with code."

[llm.claude_api]
kind = "anthropic"
model = "claude-sonnet-4-5"
max_tokens = 16000
thinking_budget = 4000
timeout = 60

[targets.pi]
kind = "ssh"
host = "raspberrypi.local"
user = "pi"
password_env = "VB_TEST_PI_PASSWORD"

[ui]
theme = "verifybot-light"

[ui.keys]
switch_target = "ctrl+w"
"""


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*verifybot_cmd(), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env={**os.environ, **(env or {})})


def user_config() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "verifybot" / "config.toml"


def test_export_then_import_round_trips_every_kind_of_table(tmp_path: Path) -> None:
    src = tmp_path / "mine.toml"
    src.write_text(FULL, encoding="utf-8")
    secrets = {"VB_TEST_OLLAMA_KEY": "ollama-key-123456", "ANTHROPIC_API_KEY": "ant-key-98765",
               "VB_TEST_PI_PASSWORD": "pi-password-1"}
    exported = tmp_path / "exported.toml"
    proc = cli("config", "export", str(exported), "--config", str(src), cwd=tmp_path,
               env=secrets)
    assert proc.returncode == 0, proc.stderr
    text = exported.read_text(encoding="utf-8")
    assert all(v not in text for v in secrets.values())
    doc = tomllib.loads(text)
    # Every [run] key is exported (those added later too); these are the file's.
    assert doc["run"].items() >= {"workspace": str(tmp_path / "work"), "max_retries": 5,
                                  "timeout": 12.5, "auto_accept": True,
                                  "default_target": "pi", "default_llm": "local_model"}.items()
    assert set(doc["run"]) == {f.name for f in fields(RunConfig)}
    assert doc["llm"]["chatgpt"]["kind"] == "browser" and doc["llm"]["chatgpt"]["headless"]
    assert doc["llm"]["claude"]["url"] == "https://claude.ai/new"  # a default table too
    assert doc["llm"]["local_model"] == {
        "kind": "openai", "base_url": "http://localhost:11434/v1", "model": "qwen2.5-coder:7b",
        "api_key_env": "VB_TEST_OLLAMA_KEY", "temperature": 0.2, "max_tokens": 0,
        "timeout": 120.0, "system": "Answer with code.", "thinking_budget": 0,
        "answer_timeout": 600.0}
    assert doc["llm"]["claude_api"]["thinking_budget"] == 4000
    assert doc["llm"]["claude_api"]["api_key_env"] == ""  # ANTHROPIC_API_KEY by default
    assert doc["targets"]["local"] == {"kind": "local", "sandbox": "auto", "network": True}
    assert doc["targets"]["pi"]["password_env"] == "VB_TEST_PI_PASSWORD"
    assert "sandbox" not in doc["targets"]["pi"]  # a local target's keys only
    assert doc["targets"]["pi"]["port"] == 22
    assert doc["ui"] == {"theme": "verifybot-light", "keys": {"switch_target": "ctrl+w"},
                         "notify": "auto", "notify_after": 30.0}

    old = user_config()
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text('[run]\nmax_retries = 1\n', encoding="utf-8")
    # It points an API key at a server, a password at a host, and accepts every version:
    # risky keys, imported only with a yes (tests/cli/test_files_from_others.py).
    proc = cli("config", "import", str(exported), "--trust", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    backups = list(old.parent.glob("config.toml.bak-*"))
    assert len(backups) == 1 and backups[0].read_text() == '[run]\nmax_retries = 1\n'
    assert str(backups[0]) in proc.stderr
    assert old.read_text(encoding="utf-8") == text

    # The imported file is what a run reads now: exported again, it is the same.
    proc = cli("config", "export", cwd=tmp_path)  # no --config, no ./config.toml: the user's
    assert proc.returncode == 0, proc.stderr
    assert tomllib.loads(proc.stdout) == doc


def test_export_refuses_a_config_holding_a_secret(tmp_path: Path) -> None:
    src = tmp_path / "leaky.toml"
    src.write_text('[llm.api]\nkind = "openai"\nmodel = "m"\napi_key_env = "VB_TEST_KEY"\n'
                   'system = "my key is vb-leaked-key-42"\n', encoding="utf-8")
    out = tmp_path / "out.toml"
    proc = cli("config", "export", str(out), "--config", str(src), cwd=tmp_path,
               env={"VB_TEST_KEY": "vb-leaked-key-42"})
    assert proc.returncode == 2
    assert "holds the value of $VB_TEST_KEY" in proc.stderr
    assert "vb-leaked-key-42" not in proc.stderr + proc.stdout
    assert not out.exists()


@pytest.mark.parametrize(("content", "words"), [
    ("[run]\nmax_retries = \"many\"\n", "key 'run.max_retries' must be an integer"),
    ("[llm.api]\nkind = \"openai\"\n", "key 'llm.api.model' is missing"),
    ("[llm.api]\nkind = \"openai\"\nmodel = \"m\"\napi_key_env = \"sk-abc\"\n",
     "must be the NAME of an environment variable"),
    ("[run\n", "not valid TOML"),
])
def test_import_refuses_a_bad_file_and_keeps_the_old_config(tmp_path: Path, content: str,
                                                            words: str) -> None:
    old = user_config()
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text('[run]\nmax_retries = 1\n', encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(content, encoding="utf-8")
    proc = cli("config", "import", str(bad), cwd=tmp_path)
    assert proc.returncode == 2
    assert words in proc.stderr
    assert old.read_text() == '[run]\nmax_retries = 1\n'
    assert not list(old.parent.glob("config.toml.bak-*"))


def test_export_lays_the_state_files_ui_choices_over_the_config(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    from verifybot_tui.core.settings import ui_state

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    ui_state.save_ui_choice("theme", "verifybot-high-contrast")
    src = tmp_path / "c.toml"
    src.write_text('[ui]\ntheme = "verifybot-light"\n', encoding="utf-8")
    proc = cli("config", "export", "--config", str(src), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tomllib.loads(proc.stdout)["ui"]["theme"] == "verifybot-high-contrast"


def test_example_config_documents_every_api_key() -> None:
    from project import ROOT

    from verifybot_tui.core.settings.config import parse_config

    text = (ROOT / "config.toml.example").read_text()
    cfg = parse_config(tomllib.loads(text), "config.toml.example")
    assert cfg.llm["local"].kind == "openai" and cfg.llm["claude_api"].kind == "anthropic"
    lines = text.splitlines()
    start = lines.index("[llm.local]")
    for key in ("kind", "base_url", "model", "api_key_env", "temperature", "max_tokens",
                "timeout", "system", "thinking_budget", "answer_timeout"):
        i = next(i for i in range(start, len(lines)) if lines[i].startswith(f"{key} ="))
        assert lines[i - 1].startswith("#"), f"llm.local.{key} has no comment above it"


def test_export_gives_each_kind_of_target_only_the_keys_it_reads(tmp_path: Path) -> None:
    """An mcu board has no SSH port or password variable; an SSH target no board."""
    src = tmp_path / "boards.toml"
    src.write_text('[targets.board]\nkind = "mcu"\nboard = "netduinoplus2"\n\n'
                   '[targets.farm]\nkind = "mcu"\nboard = "netduinoplus2"\n'
                   'backend = "labgrid"\nplace = "bench-1"\nflash = "openocd-stlink"\n\n'
                   '[targets.pi]\nkind = "ssh"\nhost = "127.0.0.1"\nuser = "pi"\n',
                   encoding="utf-8")
    proc = cli("config", "export", "--config", str(src), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    targets = tomllib.loads(proc.stdout)["targets"]
    for name in ("board", "farm"):
        assert not set(targets[name]) & {"host", "port", "user", "key_file", "password_env",
                                         "remote_dir", "known_hosts"}, targets[name]
        assert targets[name]["board"] == "netduinoplus2" and "sandbox" in targets[name]
    assert targets["farm"]["place"] == "bench-1" and targets["farm"]["backend"] == "labgrid"
    assert targets["pi"]["port"] == 22 and "board" not in targets["pi"]
    assert "acquire_timeout" not in targets["pi"]
