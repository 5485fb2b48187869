"""A verify loop on real parts for tests: the replay LLM, the local target, history.db.

Shared by the loop's tests and the verification tests (in their own folders).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from verifybot_tui.core.loop.verify_loop import VerifyLoop
from verifybot_tui.core.settings.config import parse_config
from verifybot_tui.core.store.history import History
from verifybot_tui.llm.replay import ReplayLLM
from verifybot_tui.targets.local.target import LocalTarget


def make_loop(ws: Path, transcript: Path, **kw) -> VerifyLoop:
    cfg = parse_config({"run": {"workspace": str(ws)},
                        "targets": {"other": {"kind": "local"}}})
    return VerifyLoop(config=cfg, llm=ReplayLLM(transcript, delay=0), history=History(ws),
                      target=LocalTarget(cfg.targets["local"], ws), workspace=ws, **kw)


def write_answers(path: Path, *codes: str) -> Path:
    parts = []
    for i, code in enumerate(codes, 1):
        parts.append(f"## Answer {i}\n\n````markdown\n```python\n"
                     f"{textwrap.dedent(code).strip()}\n```\n````\n")
    path.write_text("\n".join(parts))
    return path
