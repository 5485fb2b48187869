"""Messages the background workers post; ``@on`` handlers turn them into widget changes.

They do not bubble: each is for the screen whose worker posted it.
Workers never touch widgets (harlequin's rule): a worker that drives the loop,
starts the browser or connects a target reports here, and the screen's
handlers own every state change, so there is one place to look for each.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from verifybot_tui.core.loop.events import Event


@dataclass
class LoopEvent(Message, bubble=False):
    """One event from VerifyLoop.events() (Output goes through the OutputBuffer)."""

    event: Event


@dataclass
class LoopEnded(Message, bubble=False):
    """The worker driving the loop is done; ``error`` is set when it raised."""

    error: BaseException | None = None


@dataclass
class LLMReady(Message, bubble=False):
    """The LLM backend started (or failed to: ``error``)."""

    error: BaseException | None = None


@dataclass
class TargetReady(Message, bubble=False):
    """A target finished connecting and probing (or failed to: ``error``)."""

    name: str
    error: BaseException | None = None


@dataclass
class FileEdited(Message, bubble=False):
    """A program file under programs/ was saved by an editor outside VerifyBot."""

    name: str
    content: str


@dataclass
class BackendState(Message, bubble=False):
    """The LLM backend or a target changed state (its on_state callback)."""

    kind: str  # "llm" or "target"
    name: str
    state: str


@dataclass
class DesktopNotified(Message, bubble=False):
    """A run ended while the app was in the background: ``sequence`` went to the terminal."""

    kind: str  # "osc9", "osc777" or "bell"
    sequence: str
