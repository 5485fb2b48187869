"""Turn the verification options (``--expect``, ``--criteria``, ``--judge``, ``[run] judge``)
into a ``core.verify.verification.Verification``, shared by the CLI, recipes and the TUI.

It lives above core because a separate judge is an LLM backend (``llm.make_llm``),
which core must not build itself.
"""

from __future__ import annotations

from pathlib import Path

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings.config import Config
from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.core.verify.criterion import Criterion
from verifybot_tui.core.verify.verification import OFF, SAME_CHAT, Verification, default_judge


def llm_kind(config: Config, llm_spec: str) -> str:
    if llm_spec.startswith("replay:"):
        return "replay"
    cfg = config.llm.get(llm_spec)
    return cfg.kind if cfg else "browser"


def build_verification(config: Config, *, llm_spec: str, judge: str | None = None,
                       expect: list[str] | None = None, criteria_file: str | None = None,
                       workspace: Path | None = None, sanity: bool | None = None,
                       where: str = "--expect") -> Verification:
    """The session's criteria, sanity switch and judge; a ConfigError (exit 2) if bad."""
    from verifybot_tui.llm import make_llm

    found: list[Criterion] = []
    file_sanity = True
    if criteria_file:
        found, file_sanity = crit.load_file(Path(criteria_file).expanduser())
    found += crit.parse_all(expect or [], where)
    mode = judge if judge is not None else (config.run.judge or default_judge(
        llm_kind(config, llm_spec)))
    v = Verification(criteria=found, sanity=file_sanity if sanity is None else sanity,
                     ask_for_tests=config.run.ask_for_tests)
    if mode in (OFF, SAME_CHAT):
        v.judge = mode
        return v
    if mode.startswith("replay:"):
        path = Path(mode.removeprefix("replay:")).expanduser()
        if not path.is_file():
            raise ConfigError(f"--judge {mode}: no such judge transcript {path}")
        v.fresh_chat = False  # the replayed judgements are read in order, one per run
    elif mode not in config.llm:
        raise ConfigError(f"--judge {mode}: expected off, same-chat, replay:PATH or the name "
                          f"of an [llm.NAME] table; configured: {', '.join(sorted(config.llm))}")
    v.judge = mode
    v.judge_llm = make_llm(config, mode, workspace or config.workspace)
    return v
