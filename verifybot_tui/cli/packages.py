"""The system packages VerifyBot and its tests use, and which of them are missing.

scripts/test installs the same list with apt-get before the tests run (a repo
test keeps the two in step); `doctor` names the missing ones with what each is
for, so a machine that lacks one hears it before a test or a run fails on it
(the C++ firmware test's `cstdio: No such file or directory` was a missing
libstdc++-arm-none-eabi-newlib).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable

# Each Debian package and what needs it (doctor names it when it is missing).
NEEDS = {
    "chromium": "browser LLMs",
    "openssh-server": "the tests' stand-in Pi",
    "openssh-client": "SSH targets",
    "tmux": "the real-terminal test",
    "gcc": "C programs",
    "g++": "C++ programs",
    "nodejs": "JavaScript programs",
    "npm": "a package.json's packages; the MCP Inspector test",
    "procps": "process checks",
    "bubblewrap": "the sandbox",
    "util-linux": "the sandbox test",
    "make": "firmware builds",
    "gcc-arm-none-eabi": "Arm firmware",
    "binutils-arm-none-eabi": "Arm crash lines",
    "libnewlib-arm-none-eabi": "Arm firmware's C library",
    "libstdc++-arm-none-eabi-newlib": "C++ firmware",
    "qemu-system-arm": "Arm firmware in QEMU",
    "qemu-system-misc": "AVR firmware in QEMU",
    "gcc-avr": "AVR firmware",
    "binutils-avr": "AVR crash lines",
    "avr-libc": "AVR firmware's C library",
    "arduino-core-avr": "Arduino sketches",
    "ser2net": "labgrid farms (an exporter's serial ports)",
}

# How to see a package is there, where that is not a command of its own name: a command
# or an absolute path, or several of them separated by "|", any one of which will do.
PROBES = {
    "chromium": "/usr/bin/chromium|chromium",
    "openssh-server": "/usr/sbin/sshd",
    "openssh-client": "ssh-keygen",
    "nodejs": "node",
    "procps": "ps",
    "bubblewrap": "bwrap",
    "util-linux": "setpriv",
    "gcc-arm-none-eabi": "arm-none-eabi-gcc",
    "binutils-arm-none-eabi": "arm-none-eabi-addr2line",
    "libnewlib-arm-none-eabi": "/usr/lib/arm-none-eabi/newlib",
    "libstdc++-arm-none-eabi-newlib": "/usr/lib/arm-none-eabi/newlib/libstdc++_nano.a",
    "qemu-system-misc": "qemu-system-avr",
    "gcc-avr": "avr-gcc",
    "binutils-avr": "avr-addr2line",
    "avr-libc": "/usr/lib/avr/include",
    "arduino-core-avr": "/usr/share/arduino/hardware/arduino/avr/cores/arduino/Arduino.h",
    "ser2net": "/usr/sbin/ser2net|ser2net",
}

# (Debian package, what needs it, how to see it is there), in the order of NEEDS
PACKAGES: tuple[tuple[str, str, str], ...] = tuple(
    (pkg, why, PROBES.get(pkg, pkg)) for pkg, why in NEEDS.items())


def missing_packages(which: Callable[[str], str | None] = shutil.which,
                     exists: Callable[[str], bool] = os.path.exists) -> list[tuple[str, str]]:
    """(package, what needs it) for each package not found here, in the list's order."""
    return [(pkg, why) for pkg, why, probes in PACKAGES
            if not any(exists(p) if p.startswith("/") else which(p) for p in probes.split("|"))]


def packages_line(missing: list[tuple[str, str]]) -> tuple[str, str]:
    """doctor's (level, text) for the packages: OK, or WARN naming each missing one."""
    if not missing:
        return ("OK", "every system package the targets and the tests use is installed")
    names = " ".join(pkg for pkg, _ in missing)
    uses = "; ".join(f"{pkg} ({why})" for pkg, why in missing)
    return ("WARN", f"missing {uses}: sudo apt install {names} "
                    "(scripts/test installs them before the tests)")
