"""The local test chat site (a stand-in for chatgpt.com and claude.ai)."""

from .scenarios import SCENARIOS, Reply, Scenario
from .server import ChatSite, Options

__all__ = ["SCENARIOS", "ChatSite", "Options", "Reply", "Scenario"]
