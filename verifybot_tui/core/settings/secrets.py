"""Secrets kept out of programs and out of everything written or sent.

The program VerifyBot runs was written by an LLM: whatever its environment
holds, it may print, and whatever it prints goes to outputs/, the transcript,
history.db and the next prompt to the LLM. Two guards, both here so both front
ends and every target use the same rules:

1. ``program_env`` drops secret variables from a local program's environment:
   every target's ``password_env``, the ``.env`` file's PI_* secrets, and any
   name matching the ``[run] env_deny`` patterns (by default names holding
   PASSWORD, PASSWD, SECRET, TOKEN or API_KEY) or the patterns every deny list
   has (``ALWAYS_DENY``: SSHPASS, MYSQL_PWD, a *_PAT, an *AUTH* token...); a
   URL with a password in it (``DATABASE_URL``, ``PIP_INDEX_URL``) loses the
   password (``strip_url_passwords``), which is also redacted as a secret.
2. ``Redactor`` replaces the *values* of configured secrets wherever text is
   written or sent, in case a program found them some other way (a file, say),
   in every spelling a program is likely to print them: plain, spaced out
   (``s e c r e t``), URL-encoded, base64 (inside a longer encoded text too) and
   hex (``736563``, ``73 65 63``, ``\\x73\\x65``).
3. ``seal_environment`` takes the secrets out of VerifyBot's own environment
   once the config is known: their values move into this module's memory, the
   variables are unset, and their bytes are wiped from the process's initial
   environment block, which is what ``/proc/<pid>/environ`` shows to anyone
   allowed to read it (root, or a program of the same user). Unsetting alone
   does not do that: the kernel reads the block the process was started with,
   not the C ``environ`` list. Wiping it in place works for any user and costs
   nothing at start-up; re-executing with a clean environment and the secrets
   passed through an inherited pipe would also work, but doubles the start-up
   time, and ``prctl(PR_SET_MM)`` (pointing the kernel at a new block) needs
   CAP_SYS_RESOURCE. Every process VerifyBot starts after that (programs,
   browsers, compilers, ssh) inherits an environment with no secret in it;
   ``secret_env`` is how VerifyBot itself still reads them.
"""

from __future__ import annotations

import base64
import ctypes
import fnmatch
import functools
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import quote, quote_plus, unquote

from verifybot_tui.core.settings.config import API_KINDS, DEFAULT_ENV_DENY, Config, key_env

DOTENV_SECRETS = ("PI_PASSWORD",)
# In every deny list, whatever ``[run] env_deny`` says: the names tools use for
# passwords and tokens that hold none of the default's words (sshpass's SSHPASS,
# MySQL's MYSQL_PWD, a forge's *_PAT, an *AUTH* token, a *_KEY).
ALWAYS_DENY = ("SSHPASS", "*PWD*", "*PASS*", "*CREDENTIAL*", "*_KEY", "*_PAT", "*AUTH*")
# Names those patterns catch that hold no secret: the current folder, and the agent
# and display variables (VerifyBot's ssh and browser use them; the sandbox drops
# them from every program: ``targets.sandbox.view.AGENT_VARS``).
NOT_SECRET = frozenset({"PWD", "OLDPWD", "SSH_AUTH_SOCK", "XAUTHORITY"})
# scheme://user:password@host: the password part, whatever the scheme.
_URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^/:@\s]*):([^/@\s]*)@")
MASK = "[redacted]"
_MIN_SECRET = 4  # shorter values would redact ordinary words
# Passwords the user typed at a prompt in this process (CLI getpass, TUI dialog):
# no config names them, yet they are as secret as any; every Redactor uses them.
_TYPED: set[str] = set()
# Secret variables taken out of this process's environment by seal_environment.
_SEALED: dict[str, str] = {}


def remember_typed(value: str | None) -> None:
    """Redact a secret the user typed (an SSH password) from everything, from now on."""
    if value and len(value) >= _MIN_SECRET:
        _TYPED.add(value)


def always_secret() -> set[str]:
    """What every Redactor cuts, whatever its config: typed passwords, sealed variables."""
    return _TYPED | {v for v in _SEALED.values() if len(v) >= _MIN_SECRET}


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
    """Whether a variable is a secret: it matches ``patterns`` or ``ALWAYS_DENY``."""
    upper = name.upper()
    if upper in NOT_SECRET:
        return False
    return any(fnmatch.fnmatchcase(upper, p.upper()) for p in (*ALWAYS_DENY, *patterns))


def url_passwords(value: str) -> list[str]:
    """The passwords of the ``user:password@`` URLs in a value (none: [])."""
    if "@" not in value or "://" not in value:
        return []
    found = [m.group(2) for m in _URL_PASSWORD.finditer(value) if m.group(2)]
    return found + [unquote(p) for p in found if unquote(p) != p]


def strip_url_passwords(value: str) -> str:
    """``value`` with each URL's ``:password`` taken out (``https://user@host/``)."""
    if "@" not in value or "://" not in value:
        return value
    return _URL_PASSWORD.sub(lambda m: m.group(1) + "@", value)


def deny_patterns(config: Config | None) -> list[str]:
    return list(config.run.env_deny) if config is not None else list(DEFAULT_ENV_DENY)


def program_env(env: Mapping[str, str], config: Config | None) -> dict[str, str]:
    """``env`` without the secret variables (named ones and deny-list matches)."""
    names = secret_names(config)
    patterns = deny_patterns(config)
    return {k: strip_url_passwords(v) for k, v in env.items()
            if k not in names and not is_denied(k, patterns)}


def secret_env(name: str) -> str | None:
    """A secret variable's value, from the environment or, once sealed, from memory."""
    if not name:
        return None
    return os.environ.get(name, _SEALED.get(name))


def held_names() -> set[str]:
    """Every variable name set here, in the environment or sealed in memory."""
    return set(os.environ) | set(_SEALED)


def seal_environment(config: Config | None) -> list[str]:
    """Move every secret variable (named ones and deny-list matches) out of the
    environment into memory, and wipe it from /proc/self/environ; the names moved."""
    names = secret_names(config)
    patterns = deny_patterns(config)
    moved = [k for k in list(os.environ) if k in names or is_denied(k, patterns)]
    for name in moved:
        _SEALED[name] = os.environ.pop(name)  # unsetenv: children never get it
    if _SEALED:
        _wipe_initial_environ(set(_SEALED))
    return moved


def _wipe_initial_environ(names: set[str]) -> None:
    """Zero the ``NAME=value`` entries of ``names`` in the block the kernel shows as
    /proc/self/environ (between env_start and env_end of /proc/self/stat).

    The block is checked byte for byte against /proc/self/environ before anything
    is written, so a layout we do not understand is left alone rather than guessed.
    """
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        with open("/proc/self/environ", "rb") as f:
            block = f.read()
        fields = stat[stat.rfind(b")") + 2:].split()
        start, end = int(fields[47]), int(fields[48])  # env_start, env_end (50, 51)
    except (OSError, IndexError, ValueError):
        return
    if not block or end - start < len(block) or ctypes.string_at(start, len(block)) != block:
        return
    offset = 0
    for entry in block.split(b"\0"):
        name = entry.partition(b"=")[0].decode("utf-8", "replace")
        if name in names and entry:
            ctypes.memset(start + offset, 0, len(entry))
        offset += len(entry) + 1


def _deny_matches(env: Mapping[str, str], patterns: list[str]) -> set[str]:
    return {v for k, v in env.items() if v and is_denied(k, patterns)}


def secret_values(config: Config | None, workspace: Path | None,
                  env: Mapping[str, str] | None = None) -> set[str]:
    """The values of the secrets set here: named ones (env, memory and .env) and
    every variable the deny list matches."""
    env = os.environ if env is None else env
    values: set[str] = set()
    names = secret_names(config)
    for name in names:
        if env.get(name) or _SEALED.get(name):
            values.add(env.get(name) or _SEALED[name])
    patterns = deny_patterns(config)
    values |= _deny_matches(env, patterns) | _deny_matches(_SEALED, patterns)
    values |= {p for v in env.values() for p in url_passwords(v)}
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
        values = self.values | always_secret() if _TYPED or _SEALED else self.values
        if not values or not text:
            return text
        ordered = tuple(sorted(values, key=lambda v: (-len(v), v)))
        literal = _literal_pattern(ordered)
        if literal.search(text):
            text = literal.sub(MASK, text)
        squeezed: tuple[bytes, bytes] | None = None
        for value in ordered:
            _, bare_value, hex_value, shortest = _disguises(value)
            if len(text) < shortest:
                continue  # too short to hold any form of it (a chunk of one line, say)
            # The patterns are slow on megabytes of output: each runs only when the text
            # without its separators holds the secret (a necessary condition).
            bare, hexed = squeezed = squeezed or _squeeze(text)
            if bare_value in bare:
                text, squeezed = _patterns(value)[0].sub(MASK, text), None
            if hex_value in hexed:
                text, squeezed = _patterns(value)[1].sub(MASK, text), None
        return text


@functools.lru_cache(maxsize=64)
def _literal_pattern(values: tuple[str, ...]) -> re.Pattern[str]:
    """Every literal spelling of every value, longest first, as one pattern."""
    forms = sorted({f for v in values for f in spellings(v)}, key=lambda f: (-len(f), f))
    return re.compile("|".join(re.escape(f) for f in forms))


@functools.lru_cache(maxsize=256)
def _disguises(value: str) -> tuple[tuple[str, ...], bytes, bytes, int]:
    """A value's literal spellings, its bytes without separators, its hex, and the
    length of its shortest form (a text shorter than that holds none)."""
    raw = value.encode("utf-8")
    forms = spellings(value)
    bare = raw.translate(None, _SEPARATORS)
    return forms, bare, raw.hex().encode("ascii"), min(len(bare), *(len(f) for f in forms))


# Between the characters of a spaced-out secret ("s e c r e t", "s-e-c-r-e-t", one per
# line): up to three of these.
_SPACING = r"[ \t\r\n\-_.,:;|'\"*+/]{0,3}"
_HEX_SEP = r"(?:[ \t\r\n:,\-]{0,2})"
_SEPARATORS = b" \t\r\n-_.,:;|'\"*+/"
_MIN_ENCODED = 8  # a base64 core shorter than this would match ordinary text


@functools.lru_cache(maxsize=256)
def spellings(value: str) -> tuple[str, ...]:
    """The literal ways a program may print a secret: as is, URL-encoded (path or
    query style, upper or lower case hex), base64 (standard or URL-safe, at any of
    the three alignments inside a longer encoded text) and hex (either case)."""
    forms = {value, quote(value, safe=""), quote(value), quote_plus(value)}
    forms |= {re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), f) for f in forms}
    forms |= _base64_cores(value.encode("utf-8"))
    raw = value.encode("utf-8").hex()
    forms |= {raw, raw.upper()}
    return tuple(sorted(forms, key=len, reverse=True))


def _base64_cores(data: bytes) -> set[str]:
    """The base64 characters that depend on ``data`` alone, for each of the three
    places it may start inside a longer encoded text (``KEY=secret`` encoded whole)."""
    cores = set()
    for k in range(3):
        enc = base64.b64encode(b"\0" * k + data).decode("ascii")
        start, end = -(-8 * k // 6), (8 * k + 8 * len(data)) // 6
        core = enc[start:end]
        if len(core) >= _MIN_ENCODED:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


@functools.lru_cache(maxsize=256)
def _patterns(value: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The value spaced out (separators between its characters), and its bytes in hex
    with separators or ``\\x``/``0x`` before each (``73 65 63``, ``\\x73\\x65``)."""
    spaced = _SPACING.join(re.escape(c) for c in value)
    byte = r"(?:\\x|0x)?"
    hexed = _HEX_SEP.join(f"{byte}(?i:{b:02x})" for b in value.encode("utf-8"))
    return re.compile(spaced), re.compile(hexed)


def _squeeze(text: str) -> tuple[bytes, bytes]:
    """``text`` without the spacing characters, and that lower-cased without the
    ``\\x``/``0x`` of hex bytes: a secret in any disguise is a substring of one.
    (Bytes: their translate and lower are many times faster on megabytes.)"""
    bare = text.encode("utf-8", "replace").translate(None, _SEPARATORS)
    return bare, bare.replace(b"\\x", b"").replace(b"0x", b"").lower()


def contains_secret(text: str, value: str) -> bool:
    """Whether ``text`` holds ``value`` in any disguise ``Redactor`` cuts."""
    return Redactor([value])(text) != text
