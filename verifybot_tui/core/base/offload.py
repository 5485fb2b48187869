"""Work that grows with the input, done off the event loop, so a stop is never kept waiting.

Extraction of a 5 MB answer, saving a hundred files, an AST scan or a criterion over a
long output can take seconds; on the event loop they would delay Ctrl+C, SIGTERM and
SIGHUP by as long. ``in_thread`` runs such work in a daemon thread: the awaiting task
can be cancelled at once (the thread's result is dropped), and a daemon thread never
holds up the exit the way ``asyncio.to_thread``'s pool does at ``asyncio.run``'s end.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


async def in_thread(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` in a daemon thread; cancelling the caller drops it."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[T] = loop.create_future()

    def deliver(ok: bool, value: Any) -> None:
        if fut.done():
            return  # cancelled meanwhile: nobody waits for it any more
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)

    def work() -> None:
        try:
            result = fn(*args, **kwargs)
        except BaseException as e:  # handed to the awaiting task, raised there
            outcome: tuple[bool, Any] = (False, e)
        else:
            outcome = (True, result)
        try:
            loop.call_soon_threadsafe(deliver, *outcome)
        except RuntimeError:
            pass  # the loop is closed: the process is ending

    threading.Thread(target=work, name=f"verifybot-{getattr(fn, '__name__', 'work')}",
                     daemon=True).start()
    return await fut
