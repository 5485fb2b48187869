"""npm installs for package.json (issue 37): what is refused, and a machine without npm."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifybot_tui.targets.installs import npm
from verifybot_tui.targets.installs.venv import InstallError


async def _never(*args: object) -> None:
    raise AssertionError("nothing may run")


async def test_without_npm_the_error_says_so_and_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(InstallError) as info:
        await npm.install(tmp_path, ["express@^4.18.2"], lambda s, t: None, _never,
                          {"PATH": str(tmp_path / "empty-bin")}, 10.0)
    text = str(info.value)
    assert "npm is not installed on this machine" in text and "express@^4.18.2" in text
    assert "apt install npm" in text


def test_option_like_names_are_refused_and_scripts_never_run(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="cannot start with '-'"):
        npm.install_argv("npm", tmp_path, ["--registry=http://evil.invalid"])
    argv = npm.install_argv("npm", tmp_path / "runs", ["left-pad@1.3.0"])
    assert "--ignore-scripts" in argv and argv[-2:] == ["--", "left-pad@1.3.0"]


def test_missing_looks_in_the_runs_node_modules(tmp_path: Path) -> None:
    pkg = npm.modules_dir(tmp_path) / "@scope" / "thing"
    pkg.mkdir(parents=True)
    (pkg / "package.json").write_text('{"name": "@scope/thing"}')
    assert npm.missing(tmp_path, ["@scope/thing", "express"]) == ["express"]
