"""Errors that end a run, each carrying the exit code of the CLI's contract (docs/commands.md).

Front ends map an error to its exit code and print its message; the message
always says what to do, because it is the only thing the user sees.
"""

from __future__ import annotations

EXIT_SUCCESS = 0
EXIT_FAILED = 1  # failed after the last retry, or the user stopped
EXIT_USAGE = 2  # usage or config error
EXIT_LLM = 3  # LLM backend error (not logged in, bot check, limit, browser gone)
EXIT_TARGET = 4  # target error (unreachable, auth, host key)
EXIT_INTERRUPTED = 130  # Ctrl+C


class VerifyBotError(Exception):
    """Base of errors with a user-facing message and an exit code."""

    exit_code = EXIT_FAILED

    def __init__(self, message: str, *, evidence: list[str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        # Paths of files saved to explain the failure (screenshots, page HTML).
        self.evidence = list(evidence or [])

    def __str__(self) -> str:
        if not self.evidence:
            return self.message
        return f"{self.message} (saved: {', '.join(self.evidence)})"


class ConfigError(VerifyBotError):
    """A bad config file or bad command-line usage: nothing starts."""

    exit_code = EXIT_USAGE


class LLMError(VerifyBotError):
    """The LLM backend cannot answer: logged out, bot check, limit, browser gone."""

    exit_code = EXIT_LLM
    # What failed that may pass by itself ("HTTP 429", "the server answered 503", a chat
    # site's limit page); "" when it will not. compare keeps such cells out of pass@k.
    infrastructure = ""


class AnswerPending(LLMError):
    """The wait for an answer ended while the site was still writing it (a long
    "thinking" answer). The conversation is kept: resuming the session waits for this
    same answer instead of asking again."""

    def __init__(self, message: str, *, conversation_url: str,
                 evidence: list[str] | None = None) -> None:
        super().__init__(message, evidence=evidence)
        self.conversation_url = conversation_url


class TargetError(VerifyBotError):
    """The target cannot run anything: unreachable, auth, host key, connection lost.

    Not a failure of the program: the loop does not spend a retry on it.
    """

    exit_code = EXIT_TARGET
