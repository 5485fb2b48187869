"""Secrets kept out of programs and out of everything written or sent.

The program VerifyBot runs was written by an LLM: whatever its environment
holds, it may print, and whatever it prints goes to outputs/, the transcript,
history.db and the next prompt to the LLM. Two guards, both here so both front
ends and every target use the same rules:

1. ``program_env`` drops secret variables from a local program's environment:
   every target's ``password_env``, the ``.env`` file's PI_* secrets, and any
   name matching the ``[run] env_deny`` patterns (by default names holding
   PASSWORD, PASSWD, SECRET, TOKEN or API_KEY).
2. ``Redactor`` replaces the *values* of configured secrets wherever text is
   written or sent, in case a program found them some other way (a file, say).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from verifybot_tui.core.settings.config import API_KINDS, DEFAULT_ENV_DENY, Config, key_env

DOTENV_SECRETS = ("PI_PASSWORD",)
MASK = "[redacted]"
_MIN_SECRET = 4  # shorter values would redact ordinary words
# Passwords the user typed at a prompt in this process (CLI getpass, TUI dialog):
# no config names them, yet they are as secret as any; every Redactor uses them.
_TYPED: set[str] = set()


def remember_typed(value: str | None) -> None:
    """Redact a secret the user typed (an SSH password) from everything, from now on."""
    if value and len(value) >= _MIN_SECRET:
        _TYPED.add(value)


def read_dotenv(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a ``.env`` file (the older Pi scripts kept PI_HOST etc. there)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    values: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[key] = value
    return values


def secret_names(config: Config | None) -> set[str]:
    """Variable names configured as holding secrets (password_env, API key variables)."""
    names = set(DOTENV_SECRETS)
    if config is not None:
        names.update(t.password_env for t in config.targets.values() if t.password_env)
        # An API provider's key variable (its default, OPENAI_API_KEY..., when unnamed).
        names.update(key_env(llm) for llm in config.llm.values() if llm.kind in API_KINDS)
    names.discard("")
    return names


def is_denied(name: str, patterns: Iterable[str]) -> bool:
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, p.upper()) for p in patterns)


def deny_patterns(config: Config | None) -> list[str]:
    return list(config.run.env_deny) if config is not None else list(DEFAULT_ENV_DENY)


def program_env(env: Mapping[str, str], config: Config | None) -> dict[str, str]:
    """``env`` without the secret variables (named ones and deny-list matches)."""
    names = secret_names(config)
    patterns = deny_patterns(config)
    return {k: v for k, v in env.items() if k not in names and not is_denied(k, patterns)}


def secret_values(config: Config | None, workspace: Path | None,
                  env: Mapping[str, str] | None = None) -> set[str]:
    """The values of the configured secrets that are set here (env and .env)."""
    env = os.environ if env is None else env
    values: set[str] = set()
    names = secret_names(config)
    for name in names:
        if env.get(name):
            values.add(env[name])
    if workspace is not None:
        dotenv = read_dotenv(workspace / ".env")
        for name in names:
            if dotenv.get(name):
                values.add(dotenv[name])
    return {v for v in values if len(v) >= _MIN_SECRET}


class Redactor:
    """Replaces known secret values in text; one per session, values can be added later.

    A value split across two output chunks is not caught here; the first guard
    (the program never gets the variable) is what keeps that from happening.
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values: set[str] = set()
        for v in values:
            self.add(v)

    @classmethod
    def for_config(cls, config: Config | None, workspace: Path | None) -> Redactor:
        return cls(secret_values(config, workspace))

    def add(self, value: str | None) -> None:
        if value and len(value) >= _MIN_SECRET:
            self.values.add(value)

    def __call__(self, text: str) -> str:
        values = self.values | _TYPED if _TYPED else self.values
        if not values or not text:
            return text
        for value in sorted(values, key=len, reverse=True):
            if value in text:
                text = text.replace(value, MASK)
        return text
