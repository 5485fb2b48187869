"""A loopback stand-in for OpenAI-compatible and Anthropic API servers."""

from .server import CONTEXT_TOKENS, KNOWN_MODELS, ApiServer, Recorded

__all__ = ["CONTEXT_TOKENS", "KNOWN_MODELS", "ApiServer", "Recorded"]
