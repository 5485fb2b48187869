"""The SSH target's probe: what the Pi is, as markdown the LLM reads as context.

Each question is its own channel on the one connection, all at once, so the
probe costs about as much as its slowest command. The headings match the
local probe's so prompts read the same whichever target answered.
"""

from __future__ import annotations

import asyncio
import shlex

import asyncssh

PROBE_TIMEOUT = 10.0
MAX_PACKAGES = 120
MAX_LINES = 40
# OpenSSH allows 10 sessions per connection; leave room for a running program and a stop.
MAX_CHANNELS = 8

_PACKAGES_PY = (
    "import importlib.metadata as m\n"
    "names = sorted({f\"{d.metadata['Name']}=={d.version}\" for d in m.distributions()"
    " if d.metadata['Name']}, key=str.lower)\n"
    "print('\\n'.join(names))\n")


def probe_commands(remote_dir_sh: str, python: str = "python3") -> dict[str, str]:
    """name -> shell command; ``remote_dir_sh`` is already quoted for the shell."""
    return {
        "system": (
            "hostname; uname -r; uname -m; "
            "(. /etc/os-release 2>/dev/null && printf '%s\\n' \"$PRETTY_NAME\") || echo unknown; "
            "(tr -d '\\000' < /proc/device-tree/model 2>/dev/null; echo) | head -n 1"),
        "python": f"{python} --version 2>&1 && command -v {python}",
        "packages": f"{python} -c {shlex.quote(_PACKAGES_PY)}",
        "tools": (
            "for t in gcc g++ node make git; do "
            "if command -v $t >/dev/null 2>&1; then printf '%s: %s\\n' $t "
            "\"$($t --version 2>&1 | head -n 1)\"; else printf '%s: not installed\\n' $t; fi; "
            "done"),
        "resources": (f"df -h {remote_dir_sh} 2>/dev/null || df -h ~; echo; "
                      "free -h 2>/dev/null || head -n 3 /proc/meminfo"),
        "workspace": f"ls -la {remote_dir_sh} 2>/dev/null | head -n {MAX_LINES + 1}",
        # Leave out this connection's own processes (the probe itself): all are
        # children of the sshd process that is this shell's parent. Zombies
        # (<defunct>) are not running: a long list of them hid the live ones.
        "processes": (
            "ps -u \"$(id -un)\" -o pid=,ppid=,etime=,args= 2>/dev/null | awk -v me=\"$PPID\" "
            "'{pid[NR]=$1; pp[$1]=$2; line[NR]=$0} END {for (i=1; i<=NR; i++) {p=pid[i]; "
            "ours=(p==me); while (!ours && (p in pp)) {if (pp[p]==me) ours=1; p=pp[p]; "
            "if (p in seen) break; seen[p]=1} delete seen; "
            "if (!ours && line[i] !~ /sshd:/ && line[i] !~ /<defunct>/) print line[i]}}' "
            f"| head -n {MAX_LINES}"),
        "hardware": (
            "ls -d /dev/i2c-* /dev/spidev* /dev/serial* /dev/ttyAMA* /dev/ttyS0 "
            "/dev/gpiochip* 2>/dev/null; echo \"groups: $(id -nG)\""),
        "boards": _BOARDS_SH,
    }


# Microcontroller boards hanging off the Pi (mcu targets with via): their serial ports,
# the USB debug probes seen (by product name), and the flash tools installed.
_BOARDS_SH = (
    "for p in /dev/serial/by-id/* /dev/ttyACM* /dev/ttyUSB*; do [ -e \"$p\" ] && "
    "echo \"port: $p\"; done; "
    "for d in /sys/bus/usb/devices/*; do [ -f \"$d/idVendor\" ] || continue; "
    "echo \"usb: $(cat $d/idVendor):$(cat $d/idProduct) $(cat $d/manufacturer 2>/dev/null) "
    "$(cat $d/product 2>/dev/null)\"; done | grep -iE "
    "'st-?link|cmsis|dap|j-?link|picoprobe|black magic|debug|0483:374|1366:|0d28:|2e8a:000c' "
    "| sed 's/^usb/probe/'; "
    "for t in openocd pyocd st-flash picotool avrdude esptool.py; do "
    "command -v $t >/dev/null 2>&1 && echo \"tool: $t\"; done; true")


async def _one(conn: asyncssh.SSHClientConnection, sem: asyncio.Semaphore,
               command: str) -> tuple[str, str | None]:
    async with sem:
        try:
            r = await conn.run(command, timeout=PROBE_TIMEOUT, encoding="utf-8",
                               errors="replace")
        except asyncssh.TimeoutError:
            return "", f"(no answer within {PROBE_TIMEOUT:.0f} s)"
        except (asyncssh.Error, OSError) as e:
            return "", f"(failed: {e})"
    return str(r.stdout or ""), None


async def gather_facts(conn: asyncssh.SSHClientConnection, remote_dir_sh: str,
                       python: str = "python3") -> dict[str, tuple[str, str | None]]:
    """name -> (stdout, problem): every probe command run in parallel."""
    sem = asyncio.Semaphore(MAX_CHANNELS)
    commands = probe_commands(remote_dir_sh, python)
    results = await asyncio.gather(*(_one(conn, sem, c) for c in commands.values()))
    return dict(zip(commands, results, strict=True))


def _block(text: str, empty: str = "(none)") -> str:
    text = text.rstrip()
    return f"```\n{text}\n```" if text else empty


def _boards(text: str) -> list[str]:
    """The section on microcontroller boards: serial ports, debug probes, flash tools."""
    found: dict[str, list[str]] = {"port": [], "probe": [], "tool": []}
    for line in text.splitlines():
        kind, _, value = line.partition(": ")
        if kind in found and value.strip():
            found[kind].append(value.strip())
    return ["## Microcontroller boards", "",
            f"- Serial ports: {', '.join(found['port']) or 'none'}",
            f"- Debug probes (USB): {', '.join(found['probe']) or 'none seen'}",
            f"- Flash tools: {', '.join(found['tool']) or 'none installed'}", ""]


def render(name: str, where: str, remote_dir: str, facts: dict[str, tuple[str, str | None]]
           ) -> str:
    """The markdown of a probe, with the local probe's headings."""
    def out(key: str) -> str:
        text, problem = facts.get(key, ("", "(not asked)"))
        return problem or text

    sys_lines = (out("system").splitlines() + [""] * 5)[:5]
    hostname, kernel, arch, os_name, model = (s.strip() for s in sys_lines)
    lines = [f"# Target: {name}", "", f"SSH: {where}", "", "## System", ""]
    if facts["system"][1]:
        lines.append(f"- probe failed: {facts['system'][1]}")
    else:
        lines += [f"- Hostname: {hostname or 'unknown'}", f"- OS: {os_name or 'unknown'}",
                  f"- Kernel: {kernel or 'unknown'}", f"- Architecture: {arch or 'unknown'}",
                  f"- Model: {model or 'not a Raspberry Pi (no /proc/device-tree/model)'}"]
    lines += ["", "Disk and memory:", "", _block(out("resources")), ""]

    lines += ["## Python", ""]
    py = out("python").splitlines()
    lines.append(f"- Version: {py[0] if py else 'not installed'}")
    if len(py) > 1:
        lines.append(f"- Path: {py[1]}")
    pkgs = [p for p in out("packages").splitlines() if p.strip()]
    shown = pkgs[:MAX_PACKAGES]
    more = f" (and {len(pkgs) - len(shown)} more)" if len(pkgs) > len(shown) else ""
    lines += [f"- Installed packages ({len(pkgs)}){more}: "
              + (", ".join(shown) if shown else facts["packages"][1] or "none"), ""]

    lines += ["## Tools", ""]
    lines += [f"- {t}" for t in out("tools").splitlines() if t.strip()] or ["- (unknown)"]
    lines.append("")

    lines += ["## Hardware", ""]
    hw = out("hardware").splitlines()
    devices = [d for d in hw if d.startswith("/dev/")]
    groups = next((g.removeprefix("groups: ") for g in hw if g.startswith("groups: ")), "")
    for label, prefixes in (("I2C", ("/dev/i2c-",)), ("SPI", ("/dev/spidev",)),
                            ("Serial", ("/dev/serial", "/dev/ttyAMA", "/dev/ttyS")),
                            ("GPIO", ("/dev/gpiochip",))):
        found = [d for d in devices if d.startswith(prefixes)]
        lines.append(f"- {label}: {', '.join(found) if found else 'not present'}")
    if groups:
        lines.append(f"- User's groups: {groups}")
    lines.append("")

    lines += _boards(out("boards"))
    lines += ["## Workspace", "", f"Remote folder: {remote_dir}", ""]
    listing = out("workspace")
    lines += [_block(listing, "(does not exist yet: created at the first run)"), ""]
    procs = out("processes")
    lines += ["Running processes of this user (PID, parent, elapsed, command):", "",
              _block(procs, "(none besides this probe)"), ""]
    return "\n".join(lines)
