"""``verifybot config export|import``: settings moved between machines as one TOML file.

Export writes the effective config (every table, the defaults filled in, the
UI choices of the state file laid over ``[ui]``) with tomli-w. Secrets are
never in it: the config only names the variables that hold them
(``api_key_env``, ``password_env``), and an export that would contain one of
those variables' values is refused. Import validates a file exactly as a run
would read it and installs it as the user config, keeping the old one as a
backup beside it.
"""

from __future__ import annotations

import os
import shutil
import stat
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import tomli_w

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.fresh_file import write_fresh
from verifybot_tui.core.base.toml_file import TomlFileError, parse_toml
from verifybot_tui.core.settings.config import (
    API_KINDS,
    Config,
    LLMConfig,
    TargetConfig,
    key_env,
    parse_config,
    user_config_dir,
)
from verifybot_tui.core.settings.config_review import Change, config_changes
from verifybot_tui.core.settings.secrets import held_names, is_denied, secret_env, spellings
from verifybot_tui.core.settings.ui_state import load_ui_state

# The keys of the API kinds; a browser table is exported with every other key (so a
# key added for browsers later is exported too), an API table with these only.
_API_ONLY = ("base_url", "model", "api_key_env", "temperature", "max_tokens", "timeout",
             "system", "thinking_budget")
_API_KEYS = ("kind", *_API_ONLY, "answer_timeout")


def _ui_choices() -> dict[str, Any]:
    """The UI choices made in the app (the state file), laid over the config's [ui]."""
    return dict(load_ui_state())


def _table(obj: Any, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    names = keys or tuple(f.name for f in fields(obj) if f.name != "name")
    return {k: getattr(obj, k) for k in names}


def _llm_table(llm: LLMConfig) -> dict[str, Any]:
    if llm.kind in API_KINDS:
        return _table(llm, _API_KEYS)
    return {k: v for k, v in _table(llm).items() if k not in _API_ONLY}


# Each kind of target with the keys it reads, so an exported table says nothing its
# target ignores (an mcu board with an SSH port and password variable misleads).
_SSH_KEYS = ("host", "port", "user", "key_file", "password_env", "remote_dir", "known_hosts")
_MCU_KEYS = ("board", "backend", "flash", "serial", "baud", "via", "place", "coordinator",
             "acquire_timeout")
_TARGET_KEYS = {"local": ("kind", "sandbox", "network"), "ssh": ("kind", *_SSH_KEYS),
                "mcu": ("kind", "sandbox", *_MCU_KEYS)}


def _target_table(t: TargetConfig) -> dict[str, Any]:
    keys = _TARGET_KEYS.get(t.kind)
    return _table(t, keys) if keys else _table(t)


def export_document(cfg: Config) -> dict[str, Any]:
    """The effective config as a TOML document (a dict for tomli-w)."""
    ui = _table(cfg.ui)
    ui["keys"] = dict(cfg.ui.keys)
    for key, value in _ui_choices().items():
        if key == "keys" and isinstance(value, dict):
            ui["keys"].update(value)
        elif key in ui:
            ui[key] = value
    if not ui["keys"]:
        del ui["keys"]
    run = _table(cfg.run)
    if cfg.run.workspace != ".":
        # Relative to the config file's folder: made absolute, it means the same
        # folder wherever the exported file is installed.
        run["workspace"] = str(cfg.workspace)
    return {
        "run": run,
        "llm": {name: _llm_table(llm) for name, llm in sorted(cfg.llm.items())},
        "targets": {name: _target_table(t) for name, t in sorted(cfg.targets.items())},
        "ui": ui,
        "mcp": _table(cfg.mcp),
    }


def _secrets(cfg: Config) -> dict[str, str]:
    """The values of the variables the config names as holding secrets, by variable."""
    names = {key_env(llm) for llm in cfg.llm.values() if llm.kind in API_KINDS}
    names |= {t.password_env for t in cfg.targets.values() if t.password_env}
    names |= {n for n in held_names() if is_denied(n, cfg.run.env_deny)}
    values = {n: secret_env(n) or "" for n in sorted(names)}
    return {n: v for n, v in values.items() if len(v) >= 4}


def export_text(cfg: Config) -> str:
    doc = export_document(cfg)
    text = f"# VerifyBot settings exported {time.strftime('%Y-%m-%d %H:%M')}\n" + \
        tomli_w.dumps(doc)
    for name, value in _secrets(cfg).items():
        if any(form in text for form in spellings(value)):
            raise ConfigError(f"the config holds the value of ${name} (a secret) in one of its "
                              "keys; nothing was exported. Keep secrets in variables only")
    parse_config(parse_toml(text), "<export>")  # what we write must read back
    return text


MAX_IMPORT_BYTES = 1024 * 1024  # a config is a few kilobytes; more is not a config


def read_once(path: Path) -> bytes:
    """The file's bytes, read through one descriptor: what is checked is what is
    installed, whatever happens to the path meanwhile (a swap, a symlink change)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file to import") from None
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}; nothing was imported") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{path} is not a regular file; nothing was imported. "
                              "Give the TOML file to install")
        data = f.read(MAX_IMPORT_BYTES + 1)
    if len(data) > MAX_IMPORT_BYTES:
        raise ConfigError(f"{path} is over {MAX_IMPORT_BYTES // 1024} KiB, too big for a "
                          "config; nothing was imported")
    return data


def validate_bytes(data: bytes, path: Path) -> Config:
    """The config ``data`` holds, validated as a run would read it."""
    try:
        document = parse_toml(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start}); nothing was "
                          "imported") from None
    except TomlFileError as e:
        raise ConfigError(f"{path}: {e}; nothing was imported") from None
    cfg = parse_config(document, path)
    _refuse_secrets(document, data.decode("utf-8"), cfg, path)
    return cfg


def _strings(value: Any) -> list[str]:
    """Every string of a parsed TOML document, keys included, as TOML decoded them
    (escapes, literal and multi-line strings all read back to the same text)."""
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (str(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _refuse_secrets(document: dict[str, Any], text: str, cfg: Config, path: Path) -> None:
    strings = [text, *_strings(document)]
    for name, value in _secrets(cfg).items():
        if any(form in s for s in strings for form in spellings(value)):
            raise ConfigError(f"{path} holds the value of ${name} (a secret); nothing was "
                              "imported. Keep secrets in variables only")


def validate_file(path: Path) -> Config:
    return validate_bytes(read_once(path), path)


def import_file(path: Path) -> tuple[Path, Path | None]:
    """Validate ``path`` and install it as the user config; (installed, backup or None).

    The file is read once; the bytes validated are the bytes installed. (The command
    reviews the changes first: ``review_import``, then ``install``.)"""
    data = read_once(path)
    validate_bytes(data, path)
    return install(data, path)


def installed_config() -> Config:
    """The user config an import would replace (the defaults when there is none, or
    when it does not read: then every key the new file sets is shown as a change)."""
    dest = user_config_dir() / "config.toml"
    try:
        return parse_config(parse_toml(dest.read_text(encoding="utf-8")), dest)
    except (OSError, UnicodeDecodeError, TomlFileError, ConfigError):
        return parse_config({}, "<defaults>")


def review_import(path: Path) -> tuple[bytes, list[Change]]:
    """The file's bytes (read once, validated) and every key it would change."""
    data = read_once(path)
    new = validate_bytes(data, path)
    return data, config_changes(installed_config(), new)


def install(data: bytes, path: Path) -> tuple[Path, Path | None]:
    """Install validated ``data`` (read from ``path``) as the user config."""
    dest = user_config_dir() / "config.toml"
    dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    backup = None
    if dest.exists():
        if dest.resolve() == path.resolve():
            raise ConfigError(f"{path} is the user config already; nothing to import")
        backup = dest.with_name(f"config.toml.bak-{time.strftime('%Y%m%d-%H%M%S')}")
        n = 1
        while backup.exists():
            backup = dest.with_name(f"config.toml.bak-{time.strftime('%Y%m%d-%H%M%S')}-{n}")
            n += 1
        shutil.copy2(dest, backup)
    write_new(dest, data)
    return dest, backup


def write_new(dest: Path, data: bytes) -> None:
    """Put ``data`` at ``dest`` in one step: a temporary file made beside it (O_EXCL,
    0600, a random name, so no planted symlink is followed), then renamed over it.
    A ``dest`` that is a symlink or a folder is refused; a failure leaves no
    temporary file behind."""
    if dest.is_symlink():
        raise ConfigError(f"{dest} is a symbolic link; nothing was written. Give the "
                          "real path (a link is never written through)")
    if dest.is_dir():
        raise ConfigError(f"{dest} is a folder; give a file name to write to")
    write_fresh(dest, data, mode=0o600)
