"""Bad configs are reported with the file, the key and what was expected; nothing starts."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from project import ROOT, verifybot_cmd

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings.config import load_config, parse_config

BAD = [
    ('[run]\ntimeout = "soon"\n', ["run.timeout", "a number", "'soon'"]),
    ("[run]\nmax_retry = 3\n", ["unknown key 'run.max_retry'", "max_retries"]),
    ("[runn]\n", ["unknown table '[runn]'"]),
    ("[run]\nauto_accept = 1\n", ["run.auto_accept", "true or false"]),
    ('[run]\ndefault_target = "pi"\n', ["run.default_target", "[targets.pi]"]),
    ('[targets.pi]\nkind = "telnet"\nhost = "x"\n', ["targets.pi.kind", "local, ssh"]),
    ("[targets]\npi = 3\n", ["'targets.pi' must be a table"]),
    ('[llm.x]\nkind = "browser"\nheadless = "no"\n', ["llm.x.headless", "true or false"]),
    ('[ui.keys]\nquit = 5\n', ["ui.keys.quit", "a string"]),
    ("[run\n", ["not valid TOML"]),
    ("[run]\nmax_retries = -1\n", ["run.max_retries"]),
    ("[llm.chatgpt]\nanswer_timeout = 0\n", ["llm.chatgpt.answer_timeout"]),
    ("[targets.pi]\nkind = \"ssh\"\nhost = \"h\"\nport = 70000\n", ["targets.pi.port"]),
]


@pytest.mark.parametrize(("text", "expected"), BAD)
def test_bad_config_names_file_and_key(tmp_path: Path, text: str, expected: list[str]) -> None:
    path = tmp_path / "config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(str(path))
    message = str(err.value)
    assert str(path) in message
    for part in expected:
        assert part in message


def test_bad_config_stops_the_cli_with_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[run]\ntimeout = "soon"\n')
    proc = subprocess.run([*verifybot_cmd(), "run", "hello", "--config", str(path),
                           "--workspace", str(tmp_path / "ws")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "run.timeout" in proc.stderr and str(path) in proc.stderr
    assert not (tmp_path / "ws" / "history.db").exists(), "nothing may start"


def test_missing_config_file_given_explicitly(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_config(str(tmp_path / "nope.toml"))


def test_example_config_is_valid_and_documents_every_key() -> None:
    text = (ROOT / "config.toml.example").read_text()
    cfg = parse_config(tomllib.loads(text), "config.toml.example")
    assert cfg.targets["pi"].kind == "ssh"
    assert set(cfg.llm) >= {"chatgpt", "claude"}
    for key in ("workspace", "max_retries", "timeout", "auto_accept", "default_target",
                "default_llm", "site", "url", "headless", "browser_path", "profile_dir",
                "host", "port", "user", "key_file", "password_env", "remote_dir",
                "known_hosts", "theme", "answer_timeout"):
        line = next(i for i, s in enumerate(text.splitlines()) if s.startswith(f"{key} ="))
        assert text.splitlines()[line - 1].startswith("#"), f"{key} has no comment above it"


def test_relative_workspace_is_relative_to_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "config.toml"
    path.parent.mkdir()
    path.write_text('[run]\nworkspace = "ws"\n')
    assert load_config(str(path)).workspace == (tmp_path / "sub" / "ws").resolve()


def test_one_toml_reader_with_one_wording_for_every_file_the_user_writes(tmp_path: Path):
    """Only core/toml_file.py imports tomllib; the others say its words with their file."""
    import ast

    from verifybot_tui.core.settings.config_transfer import validate_file
    from verifybot_tui.core.verify import criteria, recipe

    package = ROOT / "verifybot_tui"
    readers = sorted(str(p.relative_to(package)) for p in package.rglob("*.py")
                     if any(isinstance(n, ast.Import | ast.ImportFrom)
                            and "tomllib" in ([a.name for a in n.names] if isinstance(n, ast.Import)
                                              else [n.module])
                            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))))
    assert readers == ["core/base/toml_file.py"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[run\n")
    missing = tmp_path / "missing.toml"
    for load in (recipe.load_recipe, criteria.load_file, validate_file, load_config):
        with pytest.raises(ConfigError, match=f"{bad}: not valid TOML: "):
            load(bad) if load is not load_config else load(str(bad))
    for load in (recipe.load_recipe, criteria.load_file):
        with pytest.raises(ConfigError, match=f"{missing}: cannot read: No such file"):
            load(missing)
