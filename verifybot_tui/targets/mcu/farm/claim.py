"""Holding a place for one run: wait for it (with a countdown) or fail, release it always.

The coordinator only knows that ``host/user`` holds a place, not which process:
two VerifyBots of one user look the same to it, and a VerifyBot killed with -9
leaves its place acquired. So while a VerifyBot holds a place it also holds a
file lock in the user's state folder (the pid inside, for the message); the
kernel drops the lock when that process dies, however it died. A place held by
this user whose lock is free is a leftover: released and taken. A place whose
lock is held is another run of ours: waited for, like one held by another user.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import TargetError
from verifybot_tui.core.base.ports import OutputCallback
from verifybot_tui.core.settings.config import TargetConfig
from verifybot_tui.targets.mcu.farm.locks import pid_in, try_lock, unlock
from verifybot_tui.targets.mcu.farm.session import identity, matching, place_spec

# While a place is held, VerifyBot waits in labgrid's own queue: a reservation (as
# `labgrid-client reserve --wait`), which the coordinator allocates to the waiters in
# turn, first come first served, as each place is given back. It wakes when the
# coordinator's stream says a place changed (given back, allocated to us), not on a
# timer; between the countdown's lines it asks about the reservation, which keeps it
# alive (the coordinator drops one not asked about for 60 s).
SOON = 0.25
# A place just released (by us, a leftover, or its last user) still has its resources
# marked acquired until the exporter reports them free: the coordinator answers
# "Failed to acquire resources" meanwhile. Nobody holds the place, so this is retried
# for a moment whatever acquire_timeout says (0 means "don't wait for a holder").
SETTLE = 5.0


@dataclass
class Claim:
    name: str
    fd: int
    lock_path: Path
    release: bool = True  # False: the user had acquired it themselves (labgrid-client)
    token: str = ""  # the reservation it was waited for with (cancelled at the release)


async def _release(session: Any, name: str) -> None:
    from labgrid.remote.generated import labgrid_coordinator_pb2  # type: ignore[import-untyped]

    await session.stub.ReleasePlace(labgrid_coordinator_pb2.ReleasePlaceRequest(placename=name))
    await session.sync_with_coordinator()


class _Taken(Exception):
    """The place went to someone else while its resources were settling."""


async def _acquire_settling(session: Any, name: str) -> None:
    """AcquirePlace, asked again while the exporter is still freeing the place's
    resources from its last holder (see SETTLE); any other refusal is raised at once."""
    import grpc  # type: ignore[import-untyped]
    from labgrid.remote.generated import labgrid_coordinator_pb2

    settle_until = time.monotonic() + SETTLE
    while True:
        try:
            await session.stub.AcquirePlace(
                labgrid_coordinator_pb2.AcquirePlaceRequest(placename=name))
            await session.sync_with_coordinator()
            return
        except grpc.aio.AioRpcError as e:
            settling = "Failed to acquire resources" in (e.details() or "")
            if not settling or time.monotonic() >= settle_until:
                raise
        await asyncio.sleep(0.1)
        await session.sync_with_coordinator()
        place = session.places.get(name)
        if place is not None and place.acquired:  # someone else got it meanwhile
            raise _Taken(place.acquired)


async def _try_place(session: Any, address: str, place: Any,
                     on_output: OutputCallback) -> tuple[Claim | None, str]:
    """The place taken, or None and who holds it."""
    import grpc

    fd, path = try_lock(address, place.name)
    if fd is None:
        return None, f"another VerifyBot run of yours ({identity(session)}, pid {pid_in(path)})"
    try:
        if place.acquired == identity(session) and not path.stat().st_size:
            on_output("note", f"labgrid: place {place.name} is acquired by you "
                              f"({place.acquired}) outside VerifyBot: used, left acquired")
            return Claim(place.name, fd, path, release=False), ""
        if place.acquired == identity(session):  # a VerifyBot of ours took it and died
            on_output("note", f"labgrid: place {place.name} was left acquired by a VerifyBot "
                              f"that ended (pid {pid_in(path)}): released")
            await _release(session, place.name)
        elif place.acquired:
            unlock(fd)
            return None, place.acquired
        # the pid first: killed between here and the coordinator's answer, the place is
        # still known as a VerifyBot's leftover
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            await _acquire_settling(session, place.name)
        except (grpc.aio.AioRpcError, _Taken) as e:
            os.ftruncate(fd, 0)
            unlock(fd)
            holder = session.places[place.name].acquired if place.name in session.places else ""
            said = e.details() if isinstance(e, grpc.aio.AioRpcError) else str(e)
            return None, holder or said
        except asyncio.CancelledError:
            # Stopped (Ctrl+C, a closed terminal) with the request on its way: the
            # coordinator may have given us the place. Give it back before going.
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(_release(session, place.name)), 10)
            os.ftruncate(fd, 0)
            raise
        return Claim(place.name, fd, path), ""
    except BaseException:
        unlock(fd)
        raise


async def acquire(session: Any, cfg: TargetConfig, address: str,
                  on_output: OutputCallback) -> Claim:
    """Take the place (or the first free match); wait up to acquire_timeout for one held by
    someone else, in labgrid's queue (a reservation), saying so with a countdown; past it,
    a TargetError naming the holder."""
    deadline = time.monotonic() + cfg.acquire_timeout
    told = -1.0
    token: str | None = None  # None: not asked yet; "": the coordinator refused one
    try:
        while True:
            changed = _place_change(session)  # before looking: no change goes unseen
            places = matching(session, cfg)
            if not places:
                known = ", ".join(sorted(session.places)) or "none"
                raise TargetError(f"labgrid coordinator {address} has no {place_spec(cfg)} "
                                  f"(its places: {known})")
            holders = []
            for place in places:
                claim, holder = await _try_place(session, address, place, on_output)
                if claim is not None:
                    claim.token, token = token or "", None
                    on_output("note", f"labgrid: acquired place {claim.name} as "
                                      f"{identity(session)}")
                    return claim
                holders.append(f"{place.name} by {holder}")
            left = deadline - time.monotonic()
            held = "; ".join(holders)
            if left <= 0:
                waited = f" after waiting {cfg.acquire_timeout:g} s" if cfg.acquire_timeout else ""
                raise TargetError(f"labgrid: {place_spec(cfg)} is held ({held}){waited}; "
                                  "acquire_timeout sets how long to wait")
            if token is None:
                token = await _reserve(session, cfg, places)
            step = 1.0 if left <= 10 else 5.0
            if told < 0 or told - left >= step:
                told = left
                queue = " in labgrid's queue" if token else ""
                on_output("note", f"labgrid: waiting{queue} for {place_spec(cfg)}, held "
                                  f"({held}): {left:.0f} s left")
            # A place the coordinator shows free but that could not be taken (another run
            # of ours still between its release and its unlock; a reservation someone else
            # is about to use): looked at again shortly, not at the next change only.
            soon = any(not place.acquired for place in places)
            await _turn(session, token, changed, min(step, left, SOON if soon else step))
            await session.sync_with_coordinator()
    finally:
        if token:
            await _cancel(session, token)


async def _reserve(session: Any, cfg: TargetConfig, places: list[Any]) -> str:
    """A reservation for the place (by name) or the tags; "" when the coordinator refuses."""
    import grpc
    from labgrid.remote.generated import labgrid_coordinator_pb2

    wanted = dict(cfg.place) if isinstance(cfg.place, dict) else {"name": places[0].name}
    request = labgrid_coordinator_pb2.CreateReservationRequest(filters={
        "main": labgrid_coordinator_pb2.Reservation.Filter(filter=wanted)}, prio=0)
    try:
        made = await session.stub.CreateReservation(request)
    except grpc.aio.AioRpcError:
        return ""
    return str(made.reservation.token)


async def _turn(session: Any, token: str, changed: asyncio.Event, most: float) -> None:
    """Back when the coordinator says a place changed, or after ``most`` seconds (then
    the reservation is asked about, which keeps it alive)."""
    import grpc
    from labgrid.remote.generated import labgrid_coordinator_pb2

    try:
        await asyncio.wait_for(changed.wait(), most)
        return
    except TimeoutError:
        pass
    if token:
        with contextlib.suppress(grpc.aio.AioRpcError):  # gone: the places decide
            await session.stub.PollReservation(
                labgrid_coordinator_pb2.PollReservationRequest(token=token))


def _place_change(session: Any) -> asyncio.Event:
    """An event set at the coordinator's next place update on the session's stream
    (labgrid's ClientSession calls on_place_changed for each; wrapped once here)."""
    waiters: list[asyncio.Event] = session.__dict__.setdefault("_vb_waiters", [])
    if "_vb_hooked" not in session.__dict__:
        told = session.on_place_changed

        async def on_place_changed(place: Any) -> None:
            await told(place)
            for event in waiters:
                event.set()
            waiters.clear()

        session.on_place_changed = on_place_changed
        session.__dict__["_vb_hooked"] = True
    if waiters:  # one event waits for the next change: a long wait's every turn shares it
        return waiters[0]
    event = asyncio.Event()
    waiters.append(event)
    return event


async def _cancel(session: Any, token: str) -> None:
    from labgrid.remote.generated import labgrid_coordinator_pb2

    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(session.stub.CancelReservation(
            labgrid_coordinator_pb2.CancelReservationRequest(token=token))), 5)


async def release(session: Any, claim: Claim, on_output: OutputCallback) -> None:
    """Give the place back (also on a cancel: shielded), then its reservation, then drop
    the lock."""
    if not claim.release:
        unlock(claim.fd)
        return
    try:
        await asyncio.wait_for(asyncio.shield(_release(session, claim.name)), 10)
        os.ftruncate(claim.fd, 0)
        on_output("note", f"labgrid: released place {claim.name}")
    except (Exception, asyncio.CancelledError) as e:
        on_output("note", f"labgrid: could not release place {claim.name}: {e!r} (the next "
                          "VerifyBot start releases it)")
    finally:
        if claim.token:
            await _cancel(session, claim.token)
        unlock(claim.fd)


async def release_leftovers(session: Any, address: str, on_output: OutputCallback) -> list[str]:
    """At a start: release every place this user holds that no VerifyBot of theirs uses
    (its lock file exists and is free: a VerifyBot took it and died)."""
    freed = []
    for name, place in sorted(session.places.items()):
        if place.acquired != identity(session):
            continue
        fd, path = try_lock(address, name)
        if fd is None:
            continue  # a live VerifyBot of ours holds it
        try:
            if not path.stat().st_size:
                continue  # never held by a VerifyBot: the user's own labgrid-client session
            on_output("note", f"labgrid: place {name} was left acquired by a VerifyBot that "
                              f"ended (pid {pid_in(path)}): released")
            await _release(session, name)
            os.ftruncate(fd, 0)
            freed.append(name)
        finally:
            unlock(fd)
    return freed
