"""`doctor` names every system package the targets and the tests use when one is missing.

The list is the one scripts/test installs before the tests; a check below keeps
the two in step, so a package the tests come to need is named by both.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from project import ROOT, verifybot_cmd

from verifybot_tui.cli.packages import PACKAGES, missing_packages, packages_line


def test_each_package_scripts_test_installs_is_in_doctors_list_with_the_same_probe() -> None:
    script = (ROOT / "scripts" / "test").read_text()
    installed = set(re.findall(r"missing\+=\(([^)]+)\)", script))
    assert installed == {pkg for pkg, _, _ in PACKAGES}
    for pkg, _, probes in PACKAGES:
        for probe in probes.split("|"):
            assert probe in script, (pkg, probe)


def test_with_nothing_installed_every_package_is_named_with_the_apt_line() -> None:
    gone = missing_packages(which=lambda name: None, exists=lambda path: False)
    level, text = packages_line(gone)
    assert level == "WARN"
    for pkg, _, _ in PACKAGES:
        assert f" {pkg} " in f" {text.split(': sudo apt install ')[1]} ", pkg
    assert "libstdc++-arm-none-eabi-newlib (C++ firmware)" in text


def test_doctor_here_finds_every_package(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[targets.local]\nkind = "local"\n')
    proc = subprocess.run([*verifybot_cmd(), "doctor", "--config", "config.toml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert "OK   packages: every system package the targets and the tests use is installed" \
        in proc.stdout, proc.stdout


def test_doctor_with_tools_off_its_path_names_them(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    (tmp_path / "config.toml").write_text('[targets.local]\nkind = "local"\n')
    proc = subprocess.run([*verifybot_cmd(), "doctor", "--config", "config.toml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={"PATH": str(bin_dir), "HOME": str(tmp_path)})
    line = next(x for x in proc.stdout.splitlines() if x.startswith("WARN packages:"))
    for pkg in ("tmux", "gcc-arm-none-eabi", "qemu-system-misc", "bubblewrap", "nodejs"):
        assert f"{pkg} (" in line and f" {pkg}" in line.split("sudo apt install")[1], pkg
