"""``verifybot compare`` and ``run --race``: LLMs side by side on the same tasks.

``command`` (the compare command, its report and its history listing), ``check`` (a
benchmark's solutions must verify, its wrong answers must fail), ``race`` (``run
--race``'s printing). The engine they print is in ``verifybot_tui.batch`` (the cells,
the matrix run, the race), shared with the app's compare table and race view.
"""

from __future__ import annotations

import argparse


async def cmd_compare(args: argparse.Namespace) -> int:
    from verifybot_tui.cli.common import config_for
    from verifybot_tui.cli.compare.command import cmd_compare as run_compare

    return await run_compare(args, config_for(args, writes=not args.report))
