"""LLM backends: a chat site driven in a browser, or answers replayed from a transcript.

``make_llm`` turns ``--llm`` (an ``[llm.NAME]`` table, or ``replay:PATH``) into a
backend. The browser backend is imported only when used: Playwright costs
start-up time that ``verifybot history`` or a replayed run should not pay.
"""

from __future__ import annotations

from pathlib import Path

from verifybot_tui.core.config import Config, check_llm_spec
from verifybot_tui.core.ports import LLMBackend


def make_llm(config: Config, spec: str, workspace: Path) -> LLMBackend:
    check_llm_spec(config, spec)
    if spec.startswith("replay:"):
        from verifybot_tui.llm.replay import ReplayLLM

        return ReplayLLM(Path(spec.removeprefix("replay:")).expanduser())
    cfg = config.llm[spec]
    from verifybot_tui.llm.browser import BrowserLLM

    return BrowserLLM(cfg, workspace, answer_timeout=cfg.answer_timeout)
