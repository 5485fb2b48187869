"""Before the prompt: the coordinator answers, the place exists and, when the config says
not to wait (acquire_timeout = 0), it is free.

An SSH target that cannot be reached fails before the LLM is asked: the loop connects
to the target and probes it first. A farm target does the same at its connect. A dead
coordinator, a place that does not exist, or a place someone else holds would otherwise
be found only after the LLM had answered and the firmware was built. A place that a
VerifyBot of this user left acquired when it was killed is released here too.
"""

from __future__ import annotations

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.mcu.farm.claim import release_leftovers
from verifybot_tui.targets.mcu.farm.locks import held_by_me
from verifybot_tui.targets.mcu.farm.session import (
    coordinator_address,
    farm_session,
    identity,
    matching,
    place_spec,
)


async def check_before_run(cfg: TargetConfig, notes: list[str]) -> None:
    """A TargetError that says what to do, or nothing; what was done goes to ``notes``."""
    address = coordinator_address(cfg)
    async with farm_session(address) as session:
        await release_leftovers(session, address,
                                lambda _stream, text: notes.append(text.strip()))
        places = matching(session, cfg)
        if not places:
            known = ", ".join(sorted(session.places)) or "none"
            raise TargetError(f"labgrid coordinator {address} has no {place_spec(cfg)} "
                              f"(its places: {known}): set place to one of them")
        if cfg.acquire_timeout > 0:
            return  # a held place is waited for, in the run
        me = identity(session)
        held = []
        for place in places:
            if not place.acquired:
                return
            whose = held_by_me(address, place.name) if place.acquired == me else ""
            if whose and not whose.startswith("a running VerifyBot"):
                return  # the user's own labgrid-client session: used as it is
            held.append(f"{place.name} by {place.acquired}" + (f" ({whose})" if whose else ""))
        raise TargetError(f"labgrid: {place_spec(cfg)} is held ({'; '.join(held)}) and "
                          "acquire_timeout = 0 does not wait: set acquire_timeout (seconds) "
                          "to wait for it")
