"""The coordinator, through labgrid's own ClientSession: places, their tags, their resources.

labgrid's gRPC session keeps ``places`` and ``resources`` up to date from the
coordinator's stream, and names its user as ``host/user`` (LG_HOSTNAME,
LG_USERNAME, else this machine's); VerifyBot reads the same data labgrid-client
shows, never its printed output.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.mcu.farm.locks import held_by_me

DEFAULT_COORDINATOR = "127.0.0.1:20408"
CONNECT_TIMEOUT = 10.0
NO_LABGRID = ("labgrid is not installed here: the farm backend needs it: "
              "pip install 'verifybot-tui[farm]'")


def labgrid_missing() -> str:
    """The one line to say when labgrid (the [farm] extra) cannot be imported, else ""."""
    try:
        import labgrid.remote.client  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return NO_LABGRID
    return ""


def coordinator_address(cfg: TargetConfig) -> str:
    """The config's coordinator; empty: LG_COORDINATOR, else the default port here."""
    return cfg.coordinator or os.environ.get("LG_COORDINATOR") or DEFAULT_COORDINATOR


def place_spec(cfg: TargetConfig) -> str:
    """The place as the user wrote it: a name, or tags."""
    if isinstance(cfg.place, dict):
        return "any place with " + ", ".join(f"{k}={v}" for k, v in sorted(cfg.place.items()))
    return f"place {cfg.place}"


def _labgrid_quiet(record: logging.LogRecord) -> bool:
    """labgrid's client logs its errors on the root logger (they would land on the app's
    screen); VerifyBot says them itself, in its TargetError."""
    return "labgrid" not in record.pathname.replace("\\", "/").split("/")


# One session per coordinator and event loop: runs side by side in one VerifyBot
# (recipe run --parallel, compare) share it; a second session of the same name from
# the same process is refused by the coordinator ("Could not connect").
_SESSIONS: dict[tuple[int, str], list[Any]] = {}  # (loop, address) -> [opening task, users]


@asynccontextmanager
async def farm_session(address: str) -> AsyncIterator[Any]:
    """A started labgrid ClientSession on ``address`` (shared by this process's runs on
    it), stopped and closed when its last user is done."""
    key = (id(asyncio.get_running_loop()), address)
    entry = _SESSIONS.get(key)
    if entry is None or (entry[0].done() and entry[0].exception() is not None):
        entry = _SESSIONS[key] = [asyncio.ensure_future(_open(address)), 0]
    entry[1] += 1
    try:
        yield await asyncio.shield(entry[0])
    finally:
        entry[1] -= 1
        if entry[1] == 0:
            if _SESSIONS.get(key) is entry:
                del _SESSIONS[key]
            opening = entry[0]
            if opening.done() and not opening.cancelled() and opening.exception() is None:
                await _shut(opening.result())
            elif not opening.done():
                opening.cancel()


async def _open(address: str) -> Any:
    # gRPC's fork handlers log a line at each fork (a build step, the flash tool): off
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    if missing := labgrid_missing():
        raise TargetError(missing)
    from labgrid.remote.client import ClientSession
    from labgrid.util.proxy import proxymanager  # type: ignore[import-untyped]

    if _labgrid_quiet not in logging.getLogger().filters:
        logging.getLogger().addFilter(_labgrid_quiet)
    grpc_address = proxymanager.get_grpc_address(address, default_port=20408)
    session = ClientSession(grpc_address, asyncio.get_running_loop())
    try:
        await asyncio.wait_for(session.start(), CONNECT_TIMEOUT)
    except Exception as e:  # labgrid's ServerError, gRPC errors, the timeout
        await _shut(session)
        raise TargetError(f"labgrid coordinator {address} cannot be reached: "
                          f"{e or 'no answer within 10 s'} (is labgrid-coordinator running? "
                          "set coordinator or LG_COORDINATOR)") from e
    return session


async def _shut(session: Any) -> None:
    try:
        await asyncio.wait_for(session.stop(), 5)
    except (Exception, asyncio.CancelledError):
        pass
    await session.close()


def identity(session: Any) -> str:
    """``host/user``: how the coordinator names who holds a place."""
    return f"{session.gethostname()}/{session.getuser()}"


def matching(session: Any, cfg: TargetConfig) -> list[Any]:
    """The places the config names: the place (or alias) of that name, or those whose tags
    hold every tag asked for."""
    if isinstance(cfg.place, dict):
        want = cfg.place.items()
        return [p for _, p in sorted(session.places.items())
                if all(p.tags.get(k) == v for k, v in want)]
    return [p for _, p in sorted(session.places.items())
            if cfg.place == p.name or cfg.place in p.aliases]


@dataclass
class PlaceInfo:
    name: str
    tags: dict[str, str]
    holder: str  # "host/user", "" when free
    resources: list[str]  # "Class name" of what the place matches
    whose: str = ""  # held by this user: by what (a running VerifyBot, one that ended...)

    def line(self) -> str:
        board = self.tags.get("board", "")
        tags = ", ".join(f"{k}={v}" for k, v in sorted(self.tags.items())) or "no tags"
        held = (f"held by {self.holder}" + (f" ({self.whose})" if self.whose else "")
                if self.holder else "free")
        return (f"place {self.name}" + (f" (board {board})" if board else "")
                + f": {held}; tags {tags}")


async def list_places(address: str) -> list[PlaceInfo]:
    """Every place the coordinator knows, with its tags and who holds it (doctor); a place
    this user holds says by what (a live VerifyBot, one that ended, labgrid-client)."""
    async with farm_session(address) as session:
        me = identity(session)
        return [PlaceInfo(name, dict(p.tags), p.acquired or "", [str(m) for m in p.matches],
                          held_by_me(address, name) if p.acquired == me else "")
                for name, p in sorted(session.places.items())]


async def farm_findings(cfg: TargetConfig) -> list[tuple[str, str]]:
    """doctor's lines: the coordinator's places, their boards, who holds each, and which
    the target would use."""
    address = coordinator_address(cfg)
    if missing := labgrid_missing():
        return [("FAIL", missing)]
    try:
        places = await list_places(address)
    except TargetError as e:
        return [("FAIL", str(e))]
    want = matching_names(cfg, places)
    found = [("OK" if want else "FAIL",
              f"labgrid coordinator {address}: {len(places)} place(s); {place_spec(cfg)} "
              + (f"matches {', '.join(want)}" if want else "matches none"))]
    for p in places:
        found.append(("OK", p.line() + (" <- this target" if p.name in want else "")))
    return found


def matching_names(cfg: TargetConfig, places: list[PlaceInfo]) -> list[str]:
    if isinstance(cfg.place, dict):
        return [p.name for p in places if all(p.tags.get(k) == v for k, v in cfg.place.items())]
    return [p.name for p in places if p.name == cfg.place]
