"""Boards as data: what VerifyBot knows about a microcontroller board, read from TOML.

Like the chat sites' selector profiles, boards are files, not code: the built-in
ones live in ``boards/`` beside this module, and a user's own board file (a path
in ``board = "..."``, or a file in ``<config dir>/boards/``) may start from one
with ``extends = "netduinoplus2"`` and change only what differs.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.toml_file import TOML_LIMIT, TomlFileError, parse_toml, read_text_file
from verifybot_tui.core.settings import trust
from verifybot_tui.core.settings.config import Config, user_config_dir, user_data_dir
from verifybot_tui.core.settings.ui_state import state_path
from verifybot_tui.targets.mcu import peripherals

BUILTIN_DIR = Path(__file__).parent / "boards"
PACKAGE_DIR = Path(__file__).parent / "package"
ARCHES = ("cortex-m", "avr")
# Flags whose value is a path the compiler reads: shown read-only to the build.
PATH_FLAGS = ("-I", "-L", "-isystem", "-iquote", "-idirafter", "-include", "-imacros", "-T")


@dataclass(frozen=True)
class Board:
    name: str
    description: str
    mcu: str
    arch: str  # "cortex-m" or "avr": which start-up code, fault decoding and stub registers
    compiler: str
    cpu_flags: list[str]
    flash: list[int]  # [origin, size]
    ram: list[int]
    uart: str  # which UART, pins and settings: told to the LLM
    uart_source: str  # the board package's UART file (package/<arch>/)
    qemu: list[str] = field(default_factory=list)  # argv start; empty: no emulator models it
    qemu_unmodelled: str = ""  # what the emulator reads as 0: told to the LLM
    defines: list[str] = field(default_factory=list)
    irq_count: int = 32
    irq_names: list[str] = field(default_factory=list)  # IRQ n's CMSIS name ("" reserved)
    flash_alias: list[int] = field(default_factory=list)  # [origin, size]: the flash seen again
    explain: list[dict[str, Any]] = field(default_factory=list)  # peripherals.Check as data
    arduino: str = ""  # the Arduino AVR core's board id ("uno"): sketches build against it
    clock: str = ""
    package_touches: list[str] = field(default_factory=list)
    hal: str = ""  # a vendor HAL installed for this board ("" none): its name and include path
    hal_flags: list[str] = field(default_factory=list)  # -I/-L flags that make the HAL usable
    flash_preset: str = ""
    openocd_target: str = ""
    path: str = ""  # the file it came from

    @property
    def tool_prefix(self) -> str:
        """``arm-none-eabi-`` of ``arm-none-eabi-gcc``: where addr2line and size live."""
        base = Path(self.compiler).name
        for tail in ("gcc", "g++", "cc"):
            if base.endswith(tail):
                return str(Path(self.compiler).parent / base[: -len(tail)]).removeprefix("./")
        return ""

    def tool(self, name: str) -> str:
        return f"{self.tool_prefix}{name}"

    @property
    def uart_path(self) -> Path:
        """The UART file: beside the board file (a user's board; checked when loaded to be
        a regular file there, no link), else in the package."""
        own = Path(self.path).parent / self.uart_source
        return own if os.path.lexists(own) else PACKAGE_DIR / self.arch / self.uart_source

    @property
    def checks(self) -> list[peripherals.Check]:
        """The registers that explain a silent or stuck firmware (``[[explain]]``)."""
        return peripherals.parse(self.explain, self.path)

    def irq_name(self, irq: int) -> str:
        """The device IRQ's name ("TIM2"), "" when the board file names none."""
        return self.irq_names[irq] if 0 <= irq < len(self.irq_names) else ""

    def in_flash(self, address: int, size: int = 0) -> bool:
        """In the flash, or in its alias (the STM32's flash at 0x0, where it boots from)."""
        return any(m and m[0] <= address and address + size <= m[0] + m[1]
                   for m in (self.flash, self.flash_alias))

    def in_ram(self, address: int, size: int = 0) -> bool:
        return self.ram[0] <= address and address + size <= self.ram[0] + self.ram[1]


_TYPES = {f.name: f.type for f in fields(Board)}


def builtin_names() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.toml"))


def _find(spec: str, base: Path | None) -> Path:
    """A board name (built in or in the user's boards folder) or a path to a board file."""
    if spec.endswith(".toml") or "/" in spec:
        path = Path(spec).expanduser()
        if not path.is_absolute() and base is not None:
            path = base / path
        if not path.is_file():
            raise ConfigError(f"board {spec!r}: no such board file {path}")
        return path
    for folder in (user_config_dir() / "boards", BUILTIN_DIR):
        path = folder / f"{spec}.toml"
        if path.is_file():
            return path
    raise ConfigError(f"board {spec!r} is not known; built in: {', '.join(builtin_names())} "
                      "(or give the path of your own board file)")


def _check(data: dict[str, Any], path: Path) -> None:
    for key, value in data.items():
        if key == "extends":
            continue
        if key not in _TYPES or key in ("name", "path"):
            known = sorted(k for k in _TYPES if k not in ("name", "path"))
            raise ConfigError(f"{path}: unknown key {key!r} in a board file; expected one of: "
                              f"{', '.join(known)}")
        want = str(_TYPES[key])
        ok = (isinstance(value, list) if want.startswith("list") else
              isinstance(value, int) and not isinstance(value, bool) if want == "int" else
              isinstance(value, str))
        if ok and want == "list[int]":
            ok = len(value) == 2 and all(isinstance(v, int) for v in value)
        elif ok and want.startswith("list[dict"):
            ok = all(isinstance(v, dict) for v in value)
        elif ok and want.startswith("list"):
            ok = all(isinstance(v, str) for v in value)
        if not ok:
            raise ConfigError(f"{path}: board key {key!r} must be {want}, got {value!r}")


def _commands(data: dict[str, Any]) -> list[trust.Finding]:
    """The keys of one board file that make VerifyBot run something of the file's choosing."""
    found = trust.qemu_finding(data.get("qemu") or [])
    found += trust.compiler_finding("compiler", data.get("compiler") or "")
    for key in ("cpu_flags", "hal_flags"):
        found += trust.risky_flags(key, data.get(key) or [], PACKAGE_DIR)
    found += trust.plain_word_finding("flash_preset", data.get("flash_preset") or "",
                                      "runs this flash command")
    found += trust.plain_word_finding("openocd_target", data.get("openocd_target") or "",
                                      "goes into the flash command")
    for key in ("cpu_flags", "hal_flags"):
        found += [trust.Finding(key, value, "shows this path, read-only, to every build")
                  for value in shown_paths(data.get(key) or [])]
    return found


def shown_paths(flags: list[str]) -> list[str]:
    """The absolute paths that ``flags`` name after a path flag (``-I/opt/hal/Inc``,
    ``-T /opt/hal/x.ld``): what a build of this board is shown, read-only."""
    found: list[str] = []
    for i, flag in enumerate(flags):
        for prefix in PATH_FLAGS:
            if flag == prefix and i + 1 < len(flags):
                value = flags[i + 1]
            elif flag.startswith(prefix) and len(flag) > len(prefix):
                value = flag[len(prefix):]
            else:
                continue
            if os.path.isabs(value):
                found.append(value)
    return found


def refused_place(value: str, workspace: Path | None = None) -> str:
    """Why a path may never be shown to a build ("" it may, once approved): a home or a
    folder holding one, root's home, a hidden folder of a home (``~/.ssh``), VerifyBot's
    config, data or state folder (or one holding it), the workspace."""
    real = Path(os.path.realpath(value))
    homes = [Path.home(), Path("/root")]
    try:
        homes += [p for p in Path("/home").iterdir() if p.is_dir()]
    except OSError:
        pass
    if any(h == real or h.is_relative_to(real) for h in homes) or real == Path("/home"):
        return "a home folder, or a folder holding one"
    if real.is_relative_to("/root"):
        return "root's home"
    for h in homes:
        if real.is_relative_to(h) and any(p.startswith(".") for p in real.relative_to(h).parts):
            return "a hidden folder of a home (keys and settings live there)"
    own = [user_config_dir(), user_data_dir(), state_path().parent]
    if workspace is not None:
        own.append(Path(os.path.realpath(workspace)))
    for folder in own:
        folder = Path(os.path.realpath(folder))
        if real == folder or real.is_relative_to(folder) or folder.is_relative_to(real):
            return "VerifyBot's own folder (config, data, state or the workspace)"
    return ""


def _check_places(data: dict[str, Any], path: Path) -> None:
    """A board file's sources and the paths it shows to a build, refused where they
    could reach what is not the board's (ConfigError names the key and why)."""
    source = data.get("uart_source")
    if isinstance(source, str) and source:
        if "/" in source or source in (".", "..") or os.path.isabs(source):
            raise ConfigError(f"{path}: board key 'uart_source' must be a file name beside "
                              f"the board file (no folder, no '..'), got {source!r}")
        own = path.parent / source
        if os.path.lexists(own) and not stat.S_ISREG(os.lstat(own).st_mode):
            raise ConfigError(f"{path}: board key 'uart_source': {own} is "
                              f"{'a symlink' if own.is_symlink() else 'not a regular file'}; "
                              "a board file's sources are regular files in its own folder")
    for key in ("cpu_flags", "hal_flags"):
        for value in shown_paths(data.get(key) or []):
            why = refused_place(value)
            if why:
                raise ConfigError(f"{path}: board key {key!r} shows {value} to every build: "
                                  f"{why}, never shown. Put the files a build needs "
                                  "elsewhere (e.g. /opt/hal) and name that")


def _read(path: Path, seen: tuple[Path, ...],
          files: list[trust.FileToTrust] | None = None) -> dict[str, Any]:
    if path in seen:
        raise ConfigError(f"{path}: 'extends' goes round in a circle")
    try:
        text = read_text_file(path, TOML_LIMIT)
        data = parse_toml(text)
    except TomlFileError as e:
        raise ConfigError(f"{path}: {e}") from None
    _check(data, path)
    if path.parent != BUILTIN_DIR:
        _check_places(data, path)
    if files is not None and path.parent != BUILTIN_DIR:
        files.append(trust.FileToTrust(path, trust.digest(text.encode("utf-8")),
                                       _commands(data)))
    parent = data.pop("extends", None)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise ConfigError(f"{path}: 'extends' must name a board, got {parent!r}")
    return {**_read(_find(parent, path.parent), (*seen, path), files), **data}


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_irqs(board: Board, path: Path) -> None:
    """IRQ names become C identifiers in the package's vector table: names only, one per IRQ."""
    if not 0 <= board.irq_count <= 496:
        raise ConfigError(f"{path}: board key 'irq_count' must be 0 to 496 (the NVIC's most), "
                          f"got {board.irq_count}")
    if len(board.irq_names) > board.irq_count:
        raise ConfigError(f"{path}: board key 'irq_names' names {len(board.irq_names)} IRQs; "
                          f"'irq_count' says {board.irq_count}")
    bad = [n for n in board.irq_names if n and not _IDENTIFIER.fullmatch(n)]
    if bad:
        raise ConfigError(f"{path}: board key 'irq_names': {bad[0]!r} is not a C name (letters, "
                          "digits and _; \"\" for a reserved IRQ)")


def board_files_to_trust(spec: str, base: Path | None = None) -> list[trust.FileToTrust]:
    """The board's own files (not the built-in ones) that set commands nobody approved."""
    files: list[trust.FileToTrust] = []
    _read(_find(spec, base), (), files)
    return trust.unapproved(files)


def target_board_files(cfg: Config, target_name: str) -> list[trust.FileToTrust]:
    """The board files of a config's mcu target that set commands nobody approved yet
    (a relative board path is the config file's neighbour); none for other targets.
    The CLI, the app and a compare all ask about these before the target is built."""
    t = cfg.targets.get(target_name)
    if t is None or t.kind != "mcu" or not t.board:
        return []
    return board_files_to_trust(t.board, Path(cfg.path).parent if cfg.path else None)


def load_board(spec: str, base: Path | None = None) -> Board:
    """The board a target names (raises ConfigError with the file and the key)."""
    path = _find(spec, base)
    files: list[trust.FileToTrust] = []
    data = _read(path, (), files)
    # A board file that sets commands runs only once approved (by its content's hash).
    trust.require(files, "verifybot run --trust, or recipe run --trust")
    required = ("description", "mcu", "arch", "compiler", "cpu_flags", "flash", "ram", "uart",
                "uart_source")
    missing = [k for k in required if k not in data]
    if missing:
        raise ConfigError(f"{path}: the board file lacks {', '.join(missing)}")
    if data["arch"] not in ARCHES:
        raise ConfigError(f"{path}: board key 'arch' must be one of {', '.join(ARCHES)}, "
                          f"got {data['arch']!r}")
    board = Board(name=path.stem, path=str(path), **data)
    _check_irqs(board, path)
    peripherals.parse(board.explain, str(path))
    if not board.uart_path.is_file():
        raise ConfigError(f"{path}: board key 'uart_source': no {data['uart_source']} beside the "
                          f"board file nor in the board package for {data['arch']}")
    return board
