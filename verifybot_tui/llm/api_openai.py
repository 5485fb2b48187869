"""``kind = "openai"``: any OpenAI-compatible chat-completions server, streamed.

The official ``openai`` library with ``base_url`` covers the compatible servers
(Ollama, LM Studio, vLLM, llama.cpp's server, OpenRouter). Reasoning that such
servers stream apart (``reasoning_content`` or ``reasoning`` in the delta) is
shown as thinking, never taken into the answer. The library's own retries are
off: a 429 is retried once by us, after its Retry-After.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from verifybot_tui.llm.api_common import ApiLLM, Message, Piece, StreamEnd, Usage


class OpenAIChat(ApiLLM):
    kind = "openai"
    library = "openai"
    client_class = "AsyncOpenAI"
    end_signal = "finish reason"

    def request(self, messages: list[Message]) -> dict[str, Any]:
        if self.cfg.system:
            messages = [{"role": "system", "content": self.system_prompt}, *messages]
        args: dict[str, Any] = {"model": self.cfg.model, "messages": messages, "stream": True,
                                "stream_options": {"include_usage": True}}
        if self.cfg.temperature >= 0:
            args["temperature"] = self.cfg.temperature
        if self.cfg.max_tokens:
            # The official service wants the newer name; compatible servers the classic one.
            name = "max_tokens" if self.cfg.base_url else "max_completion_tokens"
            args[name] = self.cfg.max_tokens
        return args

    def image_part(self, data: str) -> dict[str, Any]:
        """A chat completions image part: a data: URL, after the text."""
        return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + data}}

    def open_stream(self, args: dict[str, Any]) -> Any:
        return self._client.chat.completions.create(**args)

    def pieces(self, chunk: Any, end: StreamEnd) -> Iterator[Piece]:
        end.model = getattr(chunk, "model", None) or end.model  # every chunk names it
        if chunk.usage is not None:
            extra = chunk.usage.model_extra or {}
            cost = extra.get("cost")
            end.usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0,
                              float(cost) if isinstance(cost, int | float) else None)
        for choice in chunk.choices:
            delta = choice.delta
            extra = (delta.model_extra or {}) if delta is not None else {}
            thinking = extra.get("reasoning_content") or extra.get("reasoning")
            if isinstance(thinking, str) and thinking:
                yield Piece(thinking=thinking)
            if delta is not None and delta.content:
                yield Piece(text=delta.content)
            if choice.finish_reason:
                end.stop_reason = choice.finish_reason
                end.complete = True
