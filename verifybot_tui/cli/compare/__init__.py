"""``verifybot compare`` and ``run --race``: LLMs side by side on the same tasks.

``command`` (the compare command, its report and its benchmark check), ``cells`` (one
cell: a recipe with one LLM in its own workspace folder), ``check`` (a benchmark's
solutions must verify, its wrong answers must fail), ``race`` (one prompt to several
LLMs at once, the first VERIFIED wins).
"""

from __future__ import annotations

import argparse


async def cmd_compare(args: argparse.Namespace) -> int:
    from verifybot_tui.cli.common import config_for
    from verifybot_tui.cli.compare.command import cmd_compare as run_compare

    return await run_compare(args, config_for(args, writes=not args.report))
