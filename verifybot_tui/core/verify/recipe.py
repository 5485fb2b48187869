"""Task recipes: one TOML file per task, so a verified task can be re-run by CI.

A recipe names the prompt, where it runs and who answers, what success looks like
(criteria, judge) and the loop's limits. ``verifybot recipe run`` runs recipes
headless; ``verifybot recipe new`` writes one from a finished session. A bad file
stops everything before any run, naming the file and the key (exit 2).

    name = "rocket-apogee"
    prompt = "Simulate a small rocket launched straight up and print its apogee"
    target = "local"                  # a [targets.NAME]; default: [run] default_target
    llm = "replay:rocket.md"          # an [llm.NAME] or replay:PATH (relative to the file)
    criteria = ["contains:Apogee", "range:Apogee: ([0-9.]+) m:100..5000"]
    sanity = true
    judge = "off"                     # off, same-chat, an [llm.NAME], replay:PATH
    max_retries = 2
    timeout = 20
    auto_accept = true
    language = "c"                    # optional: the language asked for
    compiler = "gcc"                  # optional, with flags: compiles-clean becomes a criterion
    flags = ["-Wall", "-Werror"]
    board = "netduinoplus2"           # optional: the board of an mcu target (or of a new
                                      # emulator target when `target` is not given)
    date = 2026-11-26                 # optional: when the task was written (benchmarks)
"""

from __future__ import annotations

import datetime as dt
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomli_w

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.base.toml_file import (
    TOML_LIMIT,
    TomlFileError,
    parse_toml,
    read_text_file,
)
from verifybot_tui.core.settings import trust
from verifybot_tui.core.settings.config import MAX_TIMEOUT, Config, TargetConfig, unsandboxed
from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.core.verify.criterion import Criterion

_TYPES: dict[str, tuple[type, str]] = {
    "name": (str, "a string"), "prompt": (str, "a string"), "target": (str, "a string"),
    "llm": (str, "a string"), "criteria": (list, "a list of \"KIND:SPEC\" strings"),
    "sanity": (bool, "true or false"), "judge": (str, "a string"),
    "max_retries": (int, "an integer"), "timeout": (float, "a number of seconds"),
    "auto_accept": (bool, "true or false"), "language": (str, "a string"),
    "compiler": (str, "a string"), "flags": (list, "a list of strings"),
    "board": (str, "a board name or the path of a board file"),
    "date": (str, "a date (2026-11-26): when the task was written (benchmarks)"),
}


@dataclass
class Recipe:
    path: Path
    name: str
    prompt: str
    target: str | None = None
    llm: str | None = None
    criteria: list[Criterion] = field(default_factory=list)
    sanity: bool = True
    judge: str | None = None
    max_retries: int | None = None
    timeout: float | None = None
    # Run each version without asking. `recipe run` always accepts (nobody is there to
    # ask); in the app a recipe that sets it turns auto-accept on or off, else the
    # app's own setting holds (None).
    auto_accept: bool | None = None
    language: str = ""
    compiler: str = ""
    flags: list[str] = field(default_factory=list)
    board: str = ""
    date: str = ""  # when the task was written: a benchmark's tasks say it
    digest: str = ""  # SHA-256 of the file's bytes: what an approval of its commands names

    @property
    def to_trust(self) -> trust.FileToTrust:
        """The recipe as a file from others: the keys that make VerifyBot run something."""
        found = trust.compiler_finding("compiler", self.compiler)
        found += trust.risky_flags("flags", self.flags)
        return trust.FileToTrust(self.path, self.digest, found)

    def to_trust_in(self, cfg: Config, llm: str | None = None) -> trust.FileToTrust:
        """The recipe as a file from others, as it would run with ``cfg`` (and ``llm``, a
        compare's LLM in place of its own): its commands, the files it reads from outside
        its own folder, and its own answers run on a target without a sandbox. The yes is
        for this content in this use (a new finding is asked about again)."""
        own = self.to_trust
        if trust.is_approved(_written(self.digest)):
            return own  # `recipe new` wrote it, from the user's own session
        extra = self._outside_folder() + self._unsandboxed(cfg, llm)
        if not extra:
            return own
        findings = own.findings + extra
        use = "\n".join([self.digest, *(str(f) for f in findings)])
        return trust.FileToTrust(self.path, trust.digest(use.encode("utf-8")), findings)

    def _outside_folder(self) -> list[trust.Finding]:
        folder = Path(os.path.realpath(self.path.parent))
        found = []
        for key, spec in (("llm", self.llm), ("judge", self.judge)):
            if spec and spec.startswith("replay:"):
                path = (self.resolve(spec) or "").removeprefix("replay:")
                if not Path(os.path.realpath(path)).is_relative_to(folder):
                    found.append(trust.Finding(key, spec, "reads a transcript from outside "
                                               "the recipe's folder"))
        if self.board.endswith(".toml") or "/" in self.board:
            board = Path(self.board).expanduser()
            board = board if board.is_absolute() else self.path.parent / board
            if not Path(os.path.realpath(board)).is_relative_to(folder):
                found.append(trust.Finding("board", self.board, "reads a board file from "
                                           "outside the recipe's folder"))
        return found

    def _unsandboxed(self, cfg: Config, llm: str | None) -> list[trust.Finding]:
        answers = llm or self.llm
        if not (answers and answers.startswith("replay:")):
            return []  # the answers come from an LLM the user named, not from the file
        try:
            rcfg, name = with_board(cfg, self)
        except ConfigError:
            return []  # said when it runs
        where = unsandboxed(rcfg.targets[name]) if name in rcfg.targets else ""
        if not where:
            return []
        return [trust.Finding("target", name, f"runs the answers it brings ({answers}) "
                              f"{where}")]

    @property
    def task(self) -> str:
        """The prompt as sent: with the language and the build the recipe asks for."""
        text = self.prompt.strip()
        if self.language:
            text += f"\n\nWrite it in {self.language}."
        if self.compiler:
            build = " ".join([self.compiler, *self.flags])
            text += f"\n\nIt is compiled with {build}; it must compile without any warning."
        return text

    def resolve(self, spec: str | None) -> str | None:
        """A replay:PATH relative to the recipe's folder."""
        if spec and spec.startswith("replay:"):
            p = Path(spec.removeprefix("replay:")).expanduser()
            if not p.is_absolute():
                p = self.path.resolve().parent / p
            return f"replay:{p}"
        return spec


def _written(digest: str) -> str:
    return trust.digest(f"written by verifybot recipe new\n{digest}".encode())


def mark_written(text: str, path: Path) -> None:
    """A recipe ``recipe new`` wrote from the user's own session is no file from others:
    its target and its replay are the user's (remembered by the text's hash)."""
    written = _written(trust.digest(text.encode("utf-8")))
    trust.approve(trust.FileToTrust(path, written))


def with_board(cfg: Config, r: Recipe) -> tuple[Config, str]:
    """The config and target name a recipe runs with: its ``board`` put on its mcu
    target, or, with no ``target``, on a new emulator target named for the board."""
    name = r.target or cfg.run.default_target
    if not r.board:
        return cfg, name
    board = r.board
    if board.endswith(".toml") and not Path(board).expanduser().is_absolute():
        # absolute: a relative one would later be read against the config's folder
        board = str(r.path.resolve().parent / board)
    base = cfg.targets.get(name)
    if r.target is None and (base is None or base.kind != "mcu"):
        name, base = f"mcu-{Path(r.board).stem}", TargetConfig(kind="mcu")
    if base is None or base.kind != "mcu":
        raise ConfigError(f"{r.path}: key 'board' needs an mcu target, but target {name!r} "
                          f"is kind {base.kind if base else 'unknown'!r}")
    targets = {**cfg.targets, name: replace(base, name=name, board=board)}
    return replace(cfg, targets=targets), name


def _check(path: Path, key: str, value: Any) -> Any:
    typ, what = _TYPES[key]
    if typ is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    ok = isinstance(value, typ) and not (typ in (int, float) and isinstance(value, bool))
    if not ok:
        raise ConfigError(f"{path}: key '{key}' must be {what}, got {type(value).__name__} "
                          f"{value!r}")
    if typ is list and not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: key '{key}' must be {what}")
    return value


def parse_recipe(data: dict[str, Any], path: Path) -> Recipe:
    unknown = sorted(set(data) - set(_TYPES))
    if unknown:
        raise ConfigError(f"{path}: unknown key '{unknown[0]}'; a recipe has "
                          f"{', '.join(_TYPES)}")
    for key in ("name", "prompt"):
        if not str(data.get(key, "")).strip():
            raise ConfigError(f"{path}: key '{key}' is missing; a recipe needs a name and "
                              "a prompt")
    if isinstance(data.get("date"), dt.date):  # a TOML date: kept as its ISO text
        data = {**data, "date": data["date"].isoformat()}
    values = {k: _check(path, k, v) for k, v in data.items()}
    if values.get("max_retries", 0) < 0:
        raise ConfigError(f"{path}: key 'max_retries' must be 0 or more")
    timeout = values.get("timeout", 1.0)
    if not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT):
        raise ConfigError(f"{path}: key 'timeout' must be more than 0 and at most "
                          f"{MAX_TIMEOUT:g} seconds, got {timeout!r}")
    if values.get("flags") and not values.get("compiler"):
        raise ConfigError(f"{path}: key 'flags' needs a 'compiler' (e.g. compiler = \"gcc\")")
    criteria = [crit.parse(t, f"{path}: key 'criteria'") for t in values.pop("criteria", [])]
    if values.get("compiler") and not any(c.kind == "compiles-clean" for c in criteria):
        criteria.append(crit.parse("compiles-clean"))
    return Recipe(path=path, criteria=criteria, **values)


def load_recipe(path: Path, *, check_trust: bool = True) -> Recipe:
    """The recipe in ``path``; one that sets commands nobody approved raises
    trust.UntrustedFile (``check_trust=False``: the caller asks first)."""
    try:
        text = read_text_file(path, TOML_LIMIT)
        data = parse_toml(text)
    except TomlFileError as e:
        raise ConfigError(f"{path}: {e}") from None
    # Its folder is what its relative paths (replay:, board) are read against: made
    # absolute now, while the current folder is the one the path was given in.
    recipe = parse_recipe(data, path.absolute())
    recipe.digest = trust.digest(text.encode("utf-8"))
    if check_trust:
        trust.require([recipe.to_trust], "verifybot recipe run --trust")
    return recipe


def recipe_toml(*, name: str, prompt: str, target: str | None, llm: str | None,
                criteria: list[str], judge: str | None = None, max_retries: int | None = None,
                timeout: float | None = None) -> str:
    """A recipe's text from a finished session (``verifybot recipe new``)."""
    data: dict[str, Any] = {"name": name, "prompt": prompt}
    if target:
        data["target"] = target
    if llm:
        data["llm"] = llm
    data["criteria"] = criteria
    if judge:
        data["judge"] = judge
    if max_retries is not None:
        data["max_retries"] = max_retries
    if timeout is not None:
        data["timeout"] = int(timeout) if float(timeout).is_integer() else timeout
    head = ("# A task recipe written by `verifybot recipe new` from a finished session.\n"
            "# Run it with `verifybot recipe run FILE`; see config.toml.example for the keys.\n")
    return head + tomli_w.dumps(data)
