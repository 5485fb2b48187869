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
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import tomli_w

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.toml_file import TomlFileError, parse_toml, read_toml
from verifybot_tui.core.settings.config import (
    API_KINDS,
    Config,
    LLMConfig,
    TargetConfig,
    key_env,
    parse_config,
    user_config_dir,
)
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


def _target_table(t: TargetConfig) -> dict[str, Any]:
    return {"kind": "local"} if t.kind == "local" else _table(t)


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
    }


def _secrets(cfg: Config) -> dict[str, str]:
    """The values of the variables the config names as holding secrets, by variable."""
    names = {key_env(llm) for llm in cfg.llm.values() if llm.kind in API_KINDS}
    names |= {t.password_env for t in cfg.targets.values() if t.password_env}
    return {n: os.environ[n] for n in sorted(names) if len(os.environ.get(n, "")) >= 4}


def export_text(cfg: Config) -> str:
    doc = export_document(cfg)
    text = f"# VerifyBot settings exported {time.strftime('%Y-%m-%d %H:%M')}\n" + \
        tomli_w.dumps(doc)
    for name, value in _secrets(cfg).items():
        if value in text:
            raise ConfigError(f"the config holds the value of ${name} (a secret) in one of its "
                              "keys; nothing was exported. Keep secrets in variables only")
    parse_config(parse_toml(text), "<export>")  # what we write must read back
    return text


def validate_file(path: Path) -> Config:
    if not path.exists():
        raise ConfigError(f"{path}: no such file to import")
    try:
        data = read_toml(path)
    except TomlFileError as e:
        raise ConfigError(f"{path}: {e}; nothing was imported") from None
    return parse_config(data, path)


def import_file(path: Path) -> tuple[Path, Path | None]:
    """Validate ``path`` and install it as the user config; (installed, backup or None)."""
    cfg = validate_file(path)
    for name, value in _secrets(cfg).items():
        if value in path.read_text(encoding="utf-8"):
            raise ConfigError(f"{path} holds the value of ${name} (a secret); nothing was "
                              "imported. Keep secrets in variables only")
    dest = user_config_dir() / "config.toml"
    dest.parent.mkdir(parents=True, exist_ok=True)
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
    tmp = dest.with_name(".config.toml.import.tmp")
    shutil.copyfile(path, tmp)
    os.replace(tmp, dest)
    return dest, backup
