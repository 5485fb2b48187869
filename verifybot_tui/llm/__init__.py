"""LLM backends: a chat site driven in a browser, or answers replayed from a transcript.

``make_llm`` turns ``--llm`` (an ``[llm.NAME]`` table, or ``replay:PATH``) into a
backend. The browser backend is imported only when used: Playwright costs
start-up time that ``verifybot history`` or a replayed run should not pay.
"""

from __future__ import annotations

from pathlib import Path

from verifybot_tui.core.config import Config
from verifybot_tui.core.errors import ConfigError
from verifybot_tui.core.ports import LLMBackend


def make_llm(config: Config, spec: str, workspace: Path) -> LLMBackend:
    if spec.startswith("replay:"):
        from verifybot_tui.llm.replay import ReplayLLM

        path = Path(spec.removeprefix("replay:")).expanduser()
        if not path.is_file():
            raise ConfigError(f"--llm {spec}: no such transcript file {path}")
        return ReplayLLM(path)
    cfg = config.llm.get(spec)
    if cfg is None:
        raise ConfigError(f"--llm {spec}: there is no [llm.{spec}] in "
                          f"{config.path or 'the config'}; configured: "
                          f"{', '.join(sorted(config.llm))}, or replay:PATH")
    from verifybot_tui.llm.browser import BrowserLLM

    return BrowserLLM(cfg, workspace, answer_timeout=cfg.answer_timeout)
