"""Targets: the machines programs run on (this one, a Pi over SSH, a microcontroller board).

``make_target`` builds one from its ``[targets.NAME]`` table; asyncssh is
imported only when an SSH target is used.
"""

from __future__ import annotations

from pathlib import Path

from verifybot_tui.core.base.ports import Prompter, Target
from verifybot_tui.core.settings.config import Config, check_target_name


def make_target(config: Config, name: str, workspace: Path, prompter: Prompter | None = None,
                trust_new_host: bool = False) -> Target:
    check_target_name(config, name)
    cfg = config.targets[name]
    if cfg.kind == "mcu":
        from verifybot_tui.targets.mcu.target import McuTarget

        via = make_target(config, cfg.via, workspace, prompter, trust_new_host) if cfg.via else None
        return McuTarget(cfg, workspace, config, via=via)
    if cfg.kind == "ssh":
        from verifybot_tui.targets.ssh.target import SSHTarget

        return SSHTarget(cfg, workspace, prompter=prompter, trust_new_host=trust_new_host)
    from verifybot_tui.targets.local.target import LocalTarget

    return LocalTarget(cfg, workspace, config)


def choose_target(config: Config, prompt: str | None, explicit: str | None) -> tuple[str, str]:
    """The target to use and why: --target, else a board or a Pi the prompt names, else the
    default."""
    if explicit:
        return explicit, ""
    mcu = [n for n, t in config.targets.items() if t.kind == "mcu"]
    default = config.targets[config.run.default_target]
    if prompt and mcu and default.kind != "mcu":
        from verifybot_tui.targets.mcu import names_mcu

        if names_mcu(prompt):
            return mcu[0], f"target {mcu[0]}: the prompt names a microcontroller or firmware"
    ssh = [n for n, t in config.targets.items() if t.kind == "ssh"]
    if prompt and ssh:
        from verifybot_tui.targets.ssh import names_pi

        if names_pi(prompt):
            name = "pi" if "pi" in ssh else ssh[0]
            return name, f"target {name}: the prompt mentions the Raspberry Pi or its hardware"
    return config.run.default_target, ""
