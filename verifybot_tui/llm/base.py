"""The LLM backend protocol: one small surface the loop talks to.

A backend starts a new chat, sends a prompt (new or follow-up) while streaming
the answer's text, returns the answer's final markdown, and says where the
conversation lives so a session can be resumed in it later.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

# Called with the answer's whole text so far (not a delta) each time it grows.
TextCallback = Callable[[str], None]


@dataclass
class Answer:
    markdown: str  # the model's own markdown, fences and language tags included
    conversation_url: str | None = None
    thinking: str = ""  # the model's reasoning, when it shows it: never part of the answer
    details: str = ""  # for the transcript: provider, model, token usage (API backends)


class LLMBackend(Protocol):
    name: str
    state: str  # "stopped", "starting", "logged_out", "idle", "streaming", "error"
    conversation_url: str | None

    async def start(self) -> None:
        """Get ready to answer (launch the browser...). Raises LLMError."""

    async def new_chat(self) -> None:
        """The next prompt opens a new conversation."""

    async def resume(self, conversation_url: str) -> None:
        """The next prompt goes to this existing conversation."""

    async def ask(self, prompt: str, on_text: TextCallback | None = None) -> Answer:
        """Send a prompt in the current conversation and wait for the whole answer."""

    async def close(self) -> None:
        """Close the browser or files; the login profile stays on disk."""
