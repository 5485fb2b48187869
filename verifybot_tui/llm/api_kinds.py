"""The registry of API kinds: which backend class serves ``kind = "openai"`` and the like.

The shared HTTP plumbing (``api_common``) must not know its subclasses, or the two
import each other; this small table is the one place that names them, and loads
each module only when a table of that kind is used (the client libraries are slow
to import).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from verifybot_tui.core.base.errors import ConfigError
from verifybot_tui.core.settings.config import API_KINDS, LLMConfig
from verifybot_tui.llm.api_common import ApiLLM

# kind -> (module, class); config.API_KINDS says which kinds a config may name.
BACKENDS: dict[str, tuple[str, str]] = {
    "openai": ("verifybot_tui.llm.api_openai", "OpenAIChat"),
    "anthropic": ("verifybot_tui.llm.api_anthropic", "AnthropicChat"),
}
assert set(BACKENDS) == set(API_KINDS), "every API kind of the config has a backend"


def make_api_llm(cfg: LLMConfig, workspace: Path) -> ApiLLM:
    """The backend object for an ``[llm.NAME]`` table of an API kind."""
    if cfg.kind not in BACKENDS:
        raise ConfigError(f"[llm.{cfg.name}] kind {cfg.kind!r} is not an API kind")
    module, cls = BACKENDS[cfg.kind]
    backend: type[ApiLLM] = getattr(importlib.import_module(module), cls)
    return backend(cfg, workspace)
