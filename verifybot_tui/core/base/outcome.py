"""How a session ends: one status from a closed set, its exit code and a message.

Statuses are a StrEnum so they compare equal to (and are stored as) the plain
strings of the CLI's contract, while a typo is a type error instead of a silent branch
that never matches.

Before the verification work landed, a run that passed its mechanical check was
called ``SUCCESS``. It is ``PASSED`` now (``VERIFIED`` is kept for runs whose
criteria and judge agree); rows an older version wrote as ``SUCCESS`` read back
as ``PASSED`` (``Status.parse``, used by ``core.store.history``).
"""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import dataclass
from enum import StrEnum

from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_SUCCESS,
    LLMError,
    TargetError,
    VerifyBotError,
)


def attempts(n: int) -> str:
    """"1 attempt", "3 attempts": the count as a sentence says it."""
    return f"{n} attempt" if n == 1 else f"{n} attempts"


class Status(StrEnum):
    """The final status of a session (and the outcome of one attempt's run)."""

    VERIFIED = "VERIFIED"  # criteria and judge agree the program does what was asked
    PASSED = "PASSED"  # the mechanical checks passed (exit status, output)
    FAILED = "FAILED"
    STOPPED = "STOPPED"  # the user stopped it
    INTERRUPTED = "INTERRUPTED"  # Ctrl+C, or its process died (found at the next start)
    LLM_ERROR = "LLM_ERROR"
    TARGET_ERROR = "TARGET_ERROR"
    ERROR = "ERROR"  # bad input or an internal error

    @property
    def ok(self) -> bool:
        return self in (Status.VERIFIED, Status.PASSED)

    @classmethod
    def parse(cls, text: str) -> str:
        """A stored status as today's name: legacy ``SUCCESS`` is ``PASSED``.

        Other attempt-only states (RUNNING, PENDING, REJECTED) pass through.
        """
        if text == LEGACY_SUCCESS:
            return cls.PASSED
        try:
            return cls(text)
        except ValueError:
            return text


LEGACY_SUCCESS = "SUCCESS"


class AttemptState(StrEnum):
    """The states an attempt row has before (or instead of) a run's status."""

    PENDING = "PENDING"  # code shown, no decision yet
    RUNNING = "RUNNING"
    REJECTED = "REJECTED"


@dataclass(frozen=True)
class Outcome:
    """Every way a session ends, as the front ends report it."""

    status: Status
    exit_code: int
    message: str = ""

    @classmethod
    def of_error(cls, error: BaseException, stop_status: Status | None = None) -> Outcome:
        """The outcome of a session ended by an exception (a cancel is a stop)."""
        if isinstance(error, asyncio.CancelledError):
            status = stop_status or Status.STOPPED
            if status == Status.INTERRUPTED:
                return cls(status, EXIT_INTERRUPTED, "interrupted (Ctrl+C)")
            return cls(status, EXIT_FAILED, "stopped by the user")
        if isinstance(error, LLMError):
            return cls(Status.LLM_ERROR, error.exit_code, str(error))
        if isinstance(error, TargetError):
            return cls(Status.TARGET_ERROR, error.exit_code, str(error))
        if isinstance(error, VerifyBotError):
            return cls(Status.ERROR, error.exit_code, str(error))
        if isinstance(error, OSError | sqlite3.Error):  # a full disk: not a bug of ours
            where = f" {error.filename}" if isinstance(error, OSError) and error.filename else ""
            why = error.strerror if isinstance(error, OSError) and error.strerror else error
            return cls(Status.ERROR, EXIT_FAILED, f"cannot write{where}: {why}; free some "
                       "space (what was saved before is kept)")
        return cls(Status.ERROR, EXIT_FAILED, f"internal error: {error!r}")

    @classmethod
    def passed(cls) -> Outcome:
        return cls(Status.PASSED, EXIT_SUCCESS)

    @classmethod
    def failed(cls, message: str) -> Outcome:
        return cls(Status.FAILED, EXIT_FAILED, message)
