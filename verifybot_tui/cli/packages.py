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

# (Debian package, what needs it, how to see it is there: a command or an absolute path,
# or several of them separated by "|", any one of which will do)
PACKAGES: tuple[tuple[str, str, str], ...] = (
    ("chromium", "browser LLMs", "/usr/bin/chromium|chromium"),
    ("openssh-server", "the tests' stand-in Pi", "/usr/sbin/sshd"),
    ("openssh-client", "SSH targets", "ssh-keygen"),
    ("tmux", "the real-terminal test", "tmux"),
    ("gcc", "C programs", "gcc"),
    ("g++", "C++ programs", "g++"),
    ("nodejs", "JavaScript programs", "node"),
    ("npm", "a package.json's packages; the MCP Inspector test", "npm"),
    ("procps", "process checks", "ps"),
    ("bubblewrap", "the sandbox", "bwrap"),
    ("util-linux", "the sandbox test", "setpriv"),
    ("make", "firmware builds", "make"),
    ("gcc-arm-none-eabi", "Arm firmware", "arm-none-eabi-gcc"),
    ("binutils-arm-none-eabi", "Arm crash lines", "arm-none-eabi-addr2line"),
    ("libnewlib-arm-none-eabi", "Arm firmware's C library", "/usr/lib/arm-none-eabi/newlib"),
    ("libstdc++-arm-none-eabi-newlib", "C++ firmware",
     "/usr/lib/arm-none-eabi/newlib/libstdc++_nano.a"),
    ("qemu-system-arm", "Arm firmware in QEMU", "qemu-system-arm"),
    ("qemu-system-misc", "AVR firmware in QEMU", "qemu-system-avr"),
    ("gcc-avr", "AVR firmware", "avr-gcc"),
    ("binutils-avr", "AVR crash lines", "avr-addr2line"),
    ("avr-libc", "AVR firmware's C library", "/usr/lib/avr/include"),
    ("arduino-core-avr", "Arduino sketches",
     "/usr/share/arduino/hardware/arduino/avr/cores/arduino/Arduino.h"),
    ("ser2net", "labgrid farms (an exporter's serial ports)", "/usr/sbin/ser2net|ser2net"),
)


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
