"""Test connection: is an API provider reachable, does it take the key, does it offer the model?

``verifybot doctor`` prints the result for each API provider, and the app's LLM
switch can show the same by awaiting ``check_provider`` (it imports no Textual
and sends no prompt: the models list, or a one-token request when the server
has no models list).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.settings.config import LLMConfig
from verifybot_tui.llm.api_common import key_env, scrub
from verifybot_tui.llm.api_kinds import make_api_llm


@dataclass
class ProviderCheck:
    state: str  # "ok", "model_missing", "key_refused", "unreachable", "no_key", "error"
    text: str  # one line for the user, saying what to do when it is not "ok"

    @property
    def ok(self) -> bool:
        return self.state == "ok"


async def check_provider(cfg: LLMConfig, workspace: Path | None = None) -> ProviderCheck:
    llm = make_api_llm(cfg, workspace or Path("."))
    where = llm.url
    try:
        await llm.start()
    except LLMError as e:
        return ProviderCheck("no_key", str(e).removeprefix(f"llm {cfg.name}: "))
    limit = min(cfg.timeout, 20.0)
    try:
        async with asyncio.timeout(limit):
            try:
                models = sorted([m.id async for m in llm._client.models.list()])
            except Exception as e:
                if getattr(e, "status_code", None) != 404:
                    raise
                try:  # no models list here: ask for one token instead
                    await _one_token(llm)
                except Exception as e2:
                    if getattr(e2, "status_code", None) != 404:
                        raise
                    return ProviderCheck("model_missing", f"{cfg.kind} at {where}: no model "
                                                          f"{cfg.model!r} (404; the server "
                                                          "lists no models). Set model in "
                                                          f"[llm.{cfg.name}]")
                return ProviderCheck("ok", f"{cfg.kind} at {where}: model {cfg.model} answered "
                                           "a one-token request")
        if cfg.model in models:
            return ProviderCheck("ok", f"{cfg.kind} at {where}: key accepted, model "
                                       f"{cfg.model} offered")
        shown = ", ".join(models[:20]) + (" ..." if len(models) > 20 else "")
        return ProviderCheck("model_missing", f"{cfg.kind} at {where}: no model {cfg.model!r};"
                                              f" the server offers: {shown or 'nothing'}. "
                                              f"Set model in [llm.{cfg.name}]")
    except TimeoutError:
        return ProviderCheck("unreachable", f"{where} did not answer within {limit:g} s")
    except Exception as e:
        status = getattr(e, "status_code", None)
        if status in (401, 403):
            return ProviderCheck("key_refused", f"{where} refused the key in "
                                                f"${key_env(cfg)} ({status}): check that "
                                                "variable")
        if status is None and "connect" in type(e).__name__.lower():
            return ProviderCheck("unreachable", f"cannot connect to {where}: is the server "
                                                f"running? Check base_url in [llm.{cfg.name}]")
        text = scrub(llm.server_message(e), llm.key)
        return ProviderCheck("error", f"{where} answered {status or type(e).__name__}: {text}")
    finally:
        await llm.close()


async def _one_token(llm: object) -> None:
    client = llm._client  # type: ignore[attr-defined]
    cfg: LLMConfig = llm.cfg  # type: ignore[attr-defined]
    messages = [{"role": "user", "content": "Say OK."}]
    if cfg.kind == "anthropic":
        await client.messages.create(model=cfg.model, max_tokens=1, messages=messages)
    else:
        await client.chat.completions.create(model=cfg.model, max_tokens=1, messages=messages)
