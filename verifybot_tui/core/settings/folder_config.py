"""A ``config.toml`` in the current folder: a file from others until its content is approved.

A cloned repository, an unpacked download or a shared folder can ship a
``config.toml``; read as the config, it could turn the sandbox off, send an API
key to its own server or name the commands VerifyBot runs. So it is read only
once the user approved its exact bytes (the trust store of core.settings.trust,
by SHA-256), with ``--trust``, or when the user names it with ``--config`` (the
user's own act). Otherwise the user's own config is used. The bytes approved are
the bytes used: the file is read once, through one descriptor.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings import trust
from verifybot_tui.core.settings.config import Config, user_config_path
from verifybot_tui.core.settings.config_review import Change, config_changes
from verifybot_tui.core.settings.config_transfer import installed_config, read_once, validate_bytes

NAME = "config.toml"


@dataclass
class FolderConfig:
    """The folder's config as read: its bytes, their hash, and what it would change."""

    path: Path
    data: bytes
    config: Config | None  # None: it does not read as a config (``problem`` says why)
    problem: str = ""
    changes: list[Change] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return trust.digest(self.data)

    @property
    def risky(self) -> list[Change]:
        return [c for c in self.changes if c.risk]

    def to_trust(self) -> trust.FileToTrust:
        findings = [trust.Finding(c.key, repr(c.new), c.risk) for c in self.risky]
        if not findings:  # nothing risky, still a file from others: approved all the same
            findings = [trust.Finding("(the whole file)", f"{len(self.changes)} key(s)",
                                      "becomes the config of runs in this folder")]
        return trust.FileToTrust(self.path, self.digest, findings)

    def approved(self) -> bool:
        return trust.is_approved(self.digest)

    def use(self) -> Config:
        """The config it holds, as the user approved it (ConfigError when it does not read)."""
        if self.config is None:
            raise ConfigError(f"{self.path}: {self.problem}")
        cfg = self.config
        cfg.path, cfg.source = self.path.absolute(), "approved"
        return cfg


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def find_folder_config(folder: Path | None = None) -> FolderConfig | None:
    """``./config.toml`` when there is one that is not the user's own config file."""
    path = (folder or Path.cwd()) / NAME
    if not path.is_file() and not path.is_symlink():
        return None
    if _same_file(path, user_config_path()):
        return None  # the user config dir is the current folder: the user's own file
    shown = Path(NAME) if folder is None else path
    try:
        data = read_once(path)
    except ConfigError as e:
        return FolderConfig(shown, b"", None, _plain(e))
    try:
        cfg = validate_bytes(data, shown)
    except ConfigError as e:
        return FolderConfig(shown, data, None, _plain(e))
    return FolderConfig(shown, data, cfg, changes=config_changes(installed_config(), cfg))


def _plain(e: ConfigError) -> str:
    """A reader's message without the words of ``config import`` (nothing is imported here)."""
    return str(e).replace("; nothing was imported", "").replace(", nothing was imported", "")
