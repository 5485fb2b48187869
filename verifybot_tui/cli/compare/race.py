"""``verifybot run PROMPT --race A,B[,C]``: best of n, the first VERIFIED wins.

The prompt goes to every contender at once, each a loop of its own (its own chat, its
own target connection, its own session in history and transcript), every version
accepted as in ``recipe run`` (nobody can approve three runs at once). The first to
end VERIFIED wins; the others are stopped there and then (their program's tree too)
and end STOPPED, their transcripts and history rows kept. With no criteria and no
judge nothing can be VERIFIED, so a PASSED run wins.
Exit: 0 when one won, 1 when none did, 130 on Ctrl+C.
"""

from __future__ import annotations

import argparse
import json

from verifybot_tui.batch.cells import say
from verifybot_tui.batch.race import make_race, run_race
from verifybot_tui.cli.common import (
    EXIT_HANGUP,
    SIGNALS,
    check_prompt,
    config_for,
    install_stop_signals,
)
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
)
from verifybot_tui.core.base.outcome import Status


async def cmd_race(args: argparse.Namespace) -> int:
    check_prompt(args.prompt, "verifybot run")
    cfg = config_for(args, writes=True)
    race, handlers = make_race(cfg, args)
    install_stop_signals(race.stop)
    rows = await run_race(cfg, args, race, handlers)
    for r in rows:
        note = " (winner)" if r["winner"] else (
            f" (stopped {r['stopped_after_win']:.2f} s after the win)"
            if r["stopped_after_win"] is not None and r["status"] == Status.STOPPED else "")
        say(f"race: {r['llm']}: {r['status']} in {r['seconds']:.1f} s{note}, "
            f"session {r['session']}, {r['transcript']}")
    if args.json:
        print(json.dumps({"winner": race.winner.name if race.winner else None,
                          "contenders": rows}, indent=2))
    if race.stopped is not None:
        return EXIT_HANGUP if SIGNALS["hangup"] else EXIT_INTERRUPTED
    return EXIT_SUCCESS if race.winner is not None else EXIT_FAILED
