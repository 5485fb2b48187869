"""The config file: read by core.base.toml_file and validated key by key.

Validation is strict because a typo in a key otherwise silently falls back to
a default (a Pi run that goes to the wrong host, say). Every problem names the
file, the key and what was expected, and nothing starts.
"""

from __future__ import annotations

import codecs
import math
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.toml_file import TomlFileError, read_toml

DEFAULT_ENV_DENY = ["*PASSWORD*", "*PASSWD*", "*SECRET*", "*TOKEN*", "*API_KEY*"]


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "verifybot"


def user_data_dir() -> Path:
    """Where browser profiles live (never inside a workspace: they hold logins)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "verifybot"


@dataclass
class RunConfig:
    workspace: str = "."
    """Where programs/, outputs/, raw_md/, context/ and history.db live."""
    max_retries: int = 3
    """Attempts after the first one before the loop gives up."""
    timeout: float = 30.0
    """Seconds a program may run; an answer's `TIMEOUT: <s>` line can raise it."""
    auto_accept: bool = False
    """Run each version without asking."""
    install: bool = False
    """Headless runs (recipe run, compare, run --yes, auto-accept) install the packages an
    answer needs without asking (outside the sandbox). Only the user's own config (or an
    approved file) can say so; --install says it for one run."""
    default_target: str = "local"
    default_llm: str = "chatgpt"
    env_deny: list[str] = field(default_factory=lambda: list(DEFAULT_ENV_DENY))
    """Name patterns of variables a local program never sees (fnmatch, any case)."""
    max_output_mb: float = 64.0
    """Megabytes of a run's output kept in outputs/; past that it is cut, with a note."""
    max_answer_mb: float = 5.0
    """Megabytes an LLM answer may have; a bigger one is refused."""
    max_files: int = 100
    """Files one answer may bring; more are left out, with a note."""
    judge: str = ""
    ask_for_tests: bool = False
    """true: the first prompt asks for a test file next to the program; the tests run after
    the program, and a run whose tests fail is a failure."""
    """Who judges a passing run's output: "off", "same-chat", or an [llm.NAME] (a new chat
    per judgement). Empty: same-chat for browser LLMs, off for replays."""


@dataclass
class LLMConfig:
    name: str = ""
    kind: str = "browser"
    site: str = "chatgpt"
    """Selector profile: a built-in name (chatgpt, claude) or a path to a TOML file."""
    url: str = ""
    headless: bool = False
    browser_path: str = ""
    """Empty: find a system Chromium/Chrome, else Playwright's own."""
    profile_dir: str = ""
    """Empty: a folder per site in the user data dir."""
    answer_timeout: float = 600.0
    """Seconds to wait for one whole answer (reasoning models can think for minutes)."""
    auto_continue: bool = True
    """Click "Continue generating" (Claude: "Continue") and join the parts into one answer."""
    regenerate_on_error: bool = False
    """After an in-turn delivery error, press the site's regenerate button once."""
    auto_retry: bool = False
    """An answer that failed with a Retry button on the page: click it once (else the run
    ends at once with the site's words)."""
    send_timeout: float = 10.0
    """Seconds for the page to prove a prompt went (its message shown, the composer
    emptied); half-way the send is clicked once more, at the end it is an error."""
    strict_model: bool = False
    """true: an answer from another model than `model` is an error, not a notice."""
    temporary: bool = False
    """New chats as temporary chats (not in the site's history; not resumable)."""
    model: str = ""
    """browser: a model chosen in the site's model picker by its visible name; API: the
    model id sent with each request. Empty: the site's or server's default."""
    # kind = "openai" / "anthropic": an HTTP API instead of a browser.
    base_url: str = ""
    """Empty: the provider's official URL; else an OpenAI-compatible server's /v1 URL."""
    api_key_env: str = ""
    """The variable holding the API key (empty: OPENAI_API_KEY / ANTHROPIC_API_KEY)."""
    temperature: float = -1.0
    """Negative: not sent, the server's default."""
    max_tokens: int = 0
    """Most tokens per answer; 0: the server's default (anthropic: 8192)."""
    timeout: float = 120.0
    """Seconds to wait for the server to connect and for each piece of the stream."""
    system: str = ""
    """A system prompt sent with every request (empty: none)."""
    thinking_budget: int = 0
    """anthropic: tokens of extended thinking (0: off; at least 1024 when on)."""
    retries: int = 3
    """API: times a request refused for the server's sake (429, 500, 502, 503, 504, 529,
    a timeout) is sent again, after its Retry-After or a doubling wait."""
    retry_wait: float = 2.0
    """API: seconds before the first such retry (doubled each time; Retry-After wins)."""
    price_in: float = -1.0
    """USD per million input tokens, for compare's cost (negative: unknown)."""
    price_out: float = -1.0
    """USD per million output tokens, for compare's cost (negative: unknown)."""


@dataclass
class TargetConfig:
    name: str = ""
    kind: str = "local"
    host: str = ""
    port: int = 22
    user: str = ""
    key_file: str = ""
    password_env: str = "VERIFYBOT_PI_PASSWORD"
    """The password is read from this variable (or asked), never stored."""
    remote_dir: str = "~/verifybot"
    known_hosts: str = ""
    """Empty: ~/.ssh/known_hosts."""
    sandbox: str = "auto"
    """local and mcu: "auto" runs each program, build and emulator in a bubblewrap sandbox
    (README "What is contained where") where bwrap works, and says so where it does not;
    "require" refuses to run without one; "off" never sandboxes."""
    network: bool = True
    """local, in the sandbox: false leaves the program no network but its own loopback."""
    # Limits of every sandboxed run (program and build); 0: none. A run that hits one fails
    # and says which (targets.sandbox.limits.Limits).
    max_processes: int = 256
    """Processes and threads a run may have at once."""
    max_memory_mb: int = 1024
    """Megabytes of memory (heap and data) each process of a run may use."""
    tmp_mb: int = 256
    """Megabytes the run's private /tmp may hold (it lives in RAM)."""
    max_file_mb: int = 512
    """Megabytes one file a run writes may reach."""
    max_disk_mb: int = 1024
    """Megabytes the run folder may hold, checked while the program runs."""
    # kind = "mcu": a microcontroller board (targets/mcu).
    board: str = ""
    """A built-in board (netduinoplus2, mps2-an385, lm3s6965evb, arduino-uno) or a board file."""
    backend: str = "qemu"
    """"qemu": the emulator runs the firmware; "probe": a real board, flashed and read."""
    flash: str = ""
    """probe: a flash tool preset (openocd-stlink, pyocd, avrdude-arduino...) or a command
    template with {elf}, {hex}, {bin}."""
    serial: str = ""
    """probe: the board's serial port, e.g. /dev/serial/by-id/usb-STMicro...; read by pyserial."""
    baud: int = 115200
    via: str = ""
    """probe: an [targets.NAME] ssh target the board hangs off (the Pi flashes and reads)."""
    place: str | dict[str, str] = ""
    """labgrid: a place name, or tags ({ board = "netduinoplus2" }: any free matching place)."""
    coordinator: str = ""
    """labgrid: host:port of labgrid-coordinator; empty: LG_COORDINATOR, else 127.0.0.1:20408."""
    acquire_timeout: float = 300.0
    """labgrid: seconds to wait for a place someone else holds (0: fail at once)."""


@dataclass
class UIConfig:
    theme: str = "verifybot-dark"
    keys: dict[str, str] = field(default_factory=dict)
    """Binding id -> key(s), e.g. switch_target = "ctrl+t"."""
    notify: str = "auto"
    """A desktop notification when a run ends while the app is in the background: "auto"
    (OSC 9 or 777 where the terminal is known to show it, else the bell), "osc9",
    "osc777", "bell" or "off"."""
    notify_after: float = 30.0
    """Seconds the app must have been in the background (terminal focus lost)."""


NOTIFY_KINDS = ("auto", "osc9", "osc777", "bell", "off")


@dataclass
class MCPConfig:
    """What `verifybot mcp` lets an agent reach: only the user's own config says, never
    the client (files over MCP are files from others)."""

    targets: list[str] = field(default_factory=list)
    """Targets without a sandbox (ssh, real boards, labgrid places) offered to MCP clients;
    sandboxed ones (local, QEMU boards) are offered without being listed."""
    install: bool = False
    """true: a program sent over MCP may have its missing packages installed (outside the
    sandbox, index names only)."""


@dataclass
class Config:
    path: Path | None = None
    source: str = ""
    """Whose the file is: "user" (the user config dir), "explicit" (--config), "approved"
    (a file from others the user approved by its hash), "defaults" (no file); "" for a
    config built by the code itself. Never a TOML key."""
    run: RunConfig = field(default_factory=RunConfig)
    llm: dict[str, LLMConfig] = field(default_factory=dict)
    targets: dict[str, TargetConfig] = field(default_factory=dict)
    ui: UIConfig = field(default_factory=UIConfig)
    mcp: MCPConfig = field(default_factory=MCPConfig)

    @property
    def workspace(self) -> Path:
        ws = Path(self.run.workspace).expanduser()
        if not ws.is_absolute() and self.path is not None and self.run.workspace != ".":
            ws = self.path.parent / ws
        return ws.resolve()


DEFAULT_LLMS = {
    "chatgpt": LLMConfig(name="chatgpt", site="chatgpt", url="https://chatgpt.com/"),
    "claude": LLMConfig(name="claude", site="claude", url="https://claude.ai/new"),
}
DEFAULT_TARGETS = {"local": TargetConfig(name="local", kind="local")}

API_KINDS = ("openai", "anthropic")
DEFAULT_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def key_env(llm: LLMConfig) -> str:
    """The variable an API provider's key is read from (never the key itself)."""
    return llm.api_key_env or DEFAULT_KEY_ENV.get(llm.kind, "")

SANDBOX_MODES = ("auto", "require", "off")
MAX_TIMEOUT = 86400.0  # a day: a longer timeout is a typo, and 1e12 s overflows timers
_MOST_MB = 1024 * 1024.0  # a terabyte: more is a typo, and 1e308 MB overflows a byte count
_MOST_FILES = 100_000
_KINDS = {"llm": ("browser", *API_KINDS), "targets": ("local", "ssh", "mcu")}
_TYPE_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string",
               dict: "a table", list: "a list of strings"}


def _expect(path: Path | str, key: str, value: Any, typ: type) -> Any:
    ok = isinstance(value, typ) and not (typ in (int, float) and isinstance(value, bool))
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        ok, value = True, float(value)
    if not ok:
        raise ConfigError(f"{path}: key '{key}' must be {_TYPE_NAMES[typ]}, "
                          f"got {type(value).__name__} {value!r}")
    if typ is float and not math.isfinite(value):
        raise ConfigError(f"{path}: key '{key}' must be a finite number, got {value!r}")
    return value


def _fill(obj: Any, table: Any, where: str, path: Path | str) -> Any:
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: '{where}' must be a table ([{where}]), got {table!r}")
    known = {f.name: f for f in fields(obj) if f.name != "name"}
    for key, value in table.items():
        full = f"{where}.{key}"
        if key not in known:
            raise ConfigError(f"{path}: unknown key '{full}'; expected one of: "
                              f"{', '.join(sorted(known))}")
        default = getattr(obj, key)
        if isinstance(value, dict) and "dict" in str(known[key].type):  # e.g. place tags
            default = {}
        if isinstance(default, dict):
            value = _expect(path, full, value, dict)
            for k, v in value.items():
                _expect(path, f"{full}.{k}", v, str)
        elif isinstance(default, list):
            value = _expect(path, full, value, list)
            for v in value:
                _expect(path, f"{full}[]", v, str)
        else:
            value = _expect(path, full, value, type(default))
        setattr(obj, key, value)
    return obj


def _check_notify(ui: UIConfig, path: Path | str) -> None:
    if ui.notify not in NOTIFY_KINDS:
        raise ConfigError(f"{path}: 'ui.notify' must be one of {', '.join(NOTIFY_KINDS)}, "
                          f"got {ui.notify!r}")
    if not (math.isfinite(ui.notify_after) and ui.notify_after >= 0):
        raise ConfigError(f"{path}: 'ui.notify_after' must be a number of seconds, 0 or "
                          f"more, got {ui.notify_after!r}")


def parse_config(data: dict[str, Any], path: Path | str = "<config>") -> Config:
    """Validate a parsed TOML document into a Config (raises ConfigError)."""
    cfg = Config(path=Path(path) if isinstance(path, Path) else None)
    cfg.llm = {k: LLMConfig(**{**v.__dict__}) for k, v in DEFAULT_LLMS.items()}
    cfg.targets = {k: TargetConfig(**{**v.__dict__}) for k, v in DEFAULT_TARGETS.items()}
    for top, value in data.items():
        if top == "run":
            _fill(cfg.run, value, "run", path)
        elif top == "ui":
            _fill(cfg.ui, value, "ui", path)
            _check_notify(cfg.ui, path)
        elif top == "mcp":
            _fill(cfg.mcp, value, "mcp", path)
        elif top in ("llm", "targets"):
            if not isinstance(value, dict):
                raise ConfigError(f"{path}: '{top}' must hold tables like [{top}.NAME]")
            for name, table in value.items():
                where = f"{top}.{name}"
                if not isinstance(table, dict):
                    raise ConfigError(f"{path}: '{where}' must be a table ([{where}])")
                base = (DEFAULT_LLMS if top == "llm" else DEFAULT_TARGETS).get(name)
                obj = (type(base)(**base.__dict__) if base else
                       LLMConfig(name=name) if top == "llm" else TargetConfig(name=name))
                obj.name = name
                _fill(obj, table, where, path)
                if obj.kind not in _KINDS[top]:
                    raise ConfigError(f"{path}: key '{where}.kind' must be one of "
                                      f"{', '.join(_KINDS[top])}, got {obj.kind!r}")
                if isinstance(obj, LLMConfig):
                    cfg.llm[name] = obj
                else:
                    cfg.targets[name] = obj
        else:
            raise ConfigError(f"{path}: unknown table '[{top}]'; expected [run], [llm.NAME], "
                              f"[targets.NAME], [ui] or [mcp]")
    _check_semantics(cfg, path)
    return cfg


def _check_semantics(cfg: Config, path: Path | str) -> None:
    for name, llm in cfg.llm.items():
        if llm.answer_timeout <= 0:
            raise ConfigError(f"{path}: key 'llm.{name}.answer_timeout' must be more than 0")
        if not 0 < llm.send_timeout <= 600:
            raise ConfigError(f"{path}: key 'llm.{name}.send_timeout' must be more than 0 and "
                              f"at most 600 seconds, got {llm.send_timeout!r}")
        if llm.kind in API_KINDS:
            _check_api_llm(name, llm, path)
    for name, target in cfg.targets.items():
        if target.sandbox not in SANDBOX_MODES:
            raise ConfigError(f"{path}: key 'targets.{name}.sandbox' must be \"auto\", "
                              f"\"require\" or \"off\", got {target.sandbox!r}")
    if cfg.run.max_retries < 0:
        raise ConfigError(f"{path}: key 'run.max_retries' must be 0 or more")
    if not 0 < cfg.run.timeout <= MAX_TIMEOUT:
        raise ConfigError(f"{path}: key 'run.timeout' must be more than 0 and at most "
                          f"{MAX_TIMEOUT:g} seconds, got {cfg.run.timeout!r}")
    for key, most in (("max_output_mb", _MOST_MB), ("max_answer_mb", _MOST_MB)):
        value = getattr(cfg.run, key)
        if not (math.isfinite(value) and 0 < value <= most):
            raise ConfigError(f"{path}: key 'run.{key}' must be more than 0 and at most "
                              f"{most:g}, got {value!r}")
    if not 1 <= cfg.run.max_files <= _MOST_FILES:
        raise ConfigError(f"{path}: key 'run.max_files' must be from 1 to {_MOST_FILES}, "
                          f"got {cfg.run.max_files!r}")
    if cfg.run.default_target not in cfg.targets:
        raise ConfigError(f"{path}: key 'run.default_target' names {cfg.run.default_target!r}, "
                          f"but there is no [targets.{cfg.run.default_target}]; configured: "
                          f"{', '.join(sorted(cfg.targets))}")
    judge = cfg.run.judge
    if (judge not in ("", "off", "same-chat") and judge not in cfg.llm
            and not judge.startswith("replay:")):
        raise ConfigError(f"{path}: key 'run.judge' must be \"off\", \"same-chat\", "
                          f"\"replay:PATH\" or the name of an [llm.NAME] table, got {judge!r}; "
                          f"configured: "
                          f"{', '.join(sorted(cfg.llm))}")
    if cfg.run.default_llm not in cfg.llm:
        raise ConfigError(f"{path}: key 'run.default_llm' names {cfg.run.default_llm!r}, "
                          f"but there is no [llm.{cfg.run.default_llm}]")
    # An ssh target's host may come from PI_HOST in the workspace's .env (the older
    # scripts' way), so a missing host is reported when the target is used.
    for name, t in cfg.targets.items():
        if not 0 < t.port < 65536:
            raise ConfigError(f"{path}: key 'targets.{name}.port' must be 1-65535")
        if t.kind == "mcu":
            _check_mcu(cfg, name, t, path)
    for name in cfg.mcp.targets:
        if name not in cfg.targets:
            raise ConfigError(f"{path}: key 'mcp.targets' names {name!r}, but there is no "
                              f"[targets.{name}]; configured: {', '.join(sorted(cfg.targets))}")


def _check_mcu(cfg: Config, name: str, t: TargetConfig, path: Path | str) -> None:
    where = f"{path}: key 'targets.{name}"
    if not t.board:
        raise ConfigError(f"{where}.board' is missing: kind \"mcu\" needs a board (built in: "
                          "netduinoplus2, mps2-an385, lm3s6965evb, arduino-uno, or a board file)")
    if t.backend not in ("qemu", "probe", "labgrid"):
        raise ConfigError(f"{where}.backend' must be \"qemu\" or \"probe\" (a board here), or "
                          f"\"labgrid\" (a board on a farm), got {t.backend!r}")
    if t.backend == "labgrid":
        if not t.place:
            raise ConfigError(f"{where}.place' is missing: backend \"labgrid\" needs a place "
                              "name, or tags such as { board = \"netduinoplus2\" }")
        if not t.flash:
            raise ConfigError(f"{where}.flash' is missing: backend \"labgrid\" flashes with a "
                              "preset or a command template run for the place")
        if not (math.isfinite(t.acquire_timeout) and t.acquire_timeout >= 0):
            raise ConfigError(f"{where}.acquire_timeout' must be 0 or more seconds")
    if t.backend == "probe":
        for key in ("flash", "serial"):
            if not getattr(t, key):
                raise ConfigError(f"{where}.{key}' is missing: backend \"probe\" (a real board) "
                                  "needs a flash tool and the board's serial port")
    if t.baud <= 0:
        raise ConfigError(f"{where}.baud' must be more than 0")
    if t.via and (t.via not in cfg.targets or cfg.targets[t.via].kind != "ssh"):
        raise ConfigError(f"{where}.via' must name an ssh target ([targets.NAME] with kind "
                          f"\"ssh\"), got {t.via!r}")


def _check_api_llm(name: str, llm: LLMConfig, path: Path | str) -> None:
    where = f"{path}: key 'llm.{name}"
    if not llm.model.strip():
        raise ConfigError(f"{where}.model' is missing: kind {llm.kind!r} needs the model's name "
                          "(verifybot doctor lists the models the server offers)")
    if llm.base_url and not llm.base_url.startswith(("http://", "https://")):
        raise ConfigError(f"{where}.base_url' must start with http:// or https://, "
                          f"got {llm.base_url!r}")
    if llm.api_key_env and not llm.api_key_env.replace("_", "").isalnum():
        raise ConfigError(f"{where}.api_key_env' must be the NAME of an environment variable "
                          "(letters, digits, _), never the key itself")
    if llm.temperature >= 0 and llm.temperature > 2:
        raise ConfigError(f"{where}.temperature' must be 0 to 2 (or negative: not sent)")
    if llm.max_tokens < 0:
        raise ConfigError(f"{where}.max_tokens' must be 0 (the default) or more")
    if llm.timeout <= 0:
        raise ConfigError(f"{where}.timeout' must be more than 0 seconds")
    if llm.thinking_budget:
        if llm.kind != "anthropic":
            raise ConfigError(f"{where}.thinking_budget' is for kind \"anthropic\" only "
                              "(OpenAI-compatible servers show their reasoning by themselves)")
        if llm.thinking_budget < 1024:
            raise ConfigError(f"{where}.thinking_budget' must be 0 (off) or at least 1024")
        if llm.max_tokens and llm.thinking_budget >= llm.max_tokens:
            raise ConfigError(f"{where}.thinking_budget' must be less than max_tokens "
                              f"({llm.max_tokens})")


def user_config_path() -> Path:
    return user_config_dir() / "config.toml"


def find_config_path(explicit: str | None = None) -> Path | None:
    """--config, else the user config dir; None: defaults. A ``./config.toml`` is not
    looked at here: it is a file from others until approved (core.settings.folder_config)."""
    if explicit:
        p = Path(explicit).expanduser()
        if not p.is_file():
            raise ConfigError(f"{p}: config file not found (given with --config)")
        return p
    p = user_config_path()
    return p if p.is_file() else None


def load_config(explicit: str | None = None) -> Config:
    """The user's own config: the file named with --config, else the user config dir's."""
    path = find_config_path(explicit)
    if path is None:
        cfg = parse_config({}, "<defaults>")
        cfg.source = "defaults"
        return cfg
    try:
        data = read_toml(path)
    except TomlFileError as e:
        raise ConfigError(f"{path}: {e}") from None
    cfg = parse_config(data, path)
    cfg.path = path
    cfg.source = "explicit" if explicit else "user"
    return cfg


def unsandboxed(t: TargetConfig) -> str:
    """Where a program on ``t`` runs without VerifyBot's sandbox, in words ("" where it is
    sandboxed): a file from others that would run its own answers there is asked about."""
    if t.kind == "ssh":
        return f"over SSH on {t.host or t.name}, where nothing is sandboxed"
    if t.kind == "mcu" and t.backend in ("probe", "labgrid"):
        return "on a real board" + (f" through {t.via}" if t.via else "")
    if t.sandbox == "off":
        return 'here with sandbox = "off": with your user\'s powers'
    return ""


def sandbox_off_line(cfg: Config, target: str) -> str:
    """What every run says at its start when the config turned the sandbox off for
    ``target``: the file and the key ("" when the sandbox is not off)."""
    t = cfg.targets.get(target)
    if t is None or t.kind not in ("local", "mcu") or t.sandbox != "off":
        return ""
    where = f"{cfg.path}" if cfg.path else "the config"
    return (f"target {target}: the sandbox is OFF ({where}: [targets.{target}] "
            "sandbox = \"off\"): what an answer brings runs with your user's powers, "
            "your files and keys in reach")


def check_llm_spec(config: Config, spec: str, *, replay: bool = True) -> None:
    """The one message for an ``--llm`` that names nothing (nothing starts)."""
    if replay and spec.startswith("replay:"):
        path = Path(spec.removeprefix("replay:")).expanduser()
        if not path.is_file():
            raise ConfigError(f"--llm {spec}: no such transcript file {path}")
        _check_utf8(path)  # before a session is recorded, not when the loop reads it
        return
    if spec not in config.llm:
        also = ", or replay:PATH" if replay else ""
        raise ConfigError(f"--llm {spec}: there is no [llm.{spec}] in "
                          f"{config.path or 'the config'}; configured: "
                          f"{', '.join(sorted(config.llm))}{also}")


def _check_utf8(path: Path) -> None:
    try:
        with path.open("rb") as f:
            decoder = codecs.getincrementaldecoder("utf-8")()
            offset = 0
            while block := f.read(1 << 20):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as e:
                    raise ConfigError(f"the replay transcript {path} is not UTF-8 text (an "
                                      f"invalid byte at offset {offset + e.start}); save it "
                                      "as UTF-8") from None
                offset += len(block)
            decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise ConfigError(f"the replay transcript {path} ends in the middle of a UTF-8 "
                          "character; save it as UTF-8") from None
    except OSError as e:
        raise ConfigError(f"cannot read the replay transcript {path}: {e.strerror}") from None


def check_target_name(config: Config, name: str) -> None:
    """The one message for a ``--target`` that names nothing (nothing starts)."""
    if name not in config.targets:
        raise ConfigError(f"--target {name}: there is no [targets.{name}] in "
                          f"{config.path or 'the config'}; configured: "
                          f"{', '.join(sorted(config.targets))}")
