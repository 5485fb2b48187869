"""LLM backends: a chat site in a browser, an HTTP API, or answers replayed from a transcript.

``make_llm`` turns ``--llm`` (an ``[llm.NAME]`` table, or ``replay:PATH``) into a
backend. The browser backend is imported only when used: Playwright costs
start-up time that ``verifybot history`` or a replayed run should not pay.
"""

from __future__ import annotations

from pathlib import Path

from verifybot_tui.core.base.ports import LLMBackend
from verifybot_tui.core.settings.config import Config, check_llm_spec


def make_llm(config: Config, spec: str, workspace: Path) -> LLMBackend:
    check_llm_spec(config, spec)
    if spec.startswith("replay:"):
        from verifybot_tui.llm.replay import ReplayLLM

        return ReplayLLM(Path(spec.removeprefix("replay:")).expanduser())
    cfg = config.llm[spec]
    if cfg.kind != "browser":
        from verifybot_tui.llm.api_kinds import make_api_llm

        return make_api_llm(cfg, workspace)
    from verifybot_tui.llm.browser import BrowserLLM

    return BrowserLLM(cfg, workspace, answer_timeout=cfg.answer_timeout)
