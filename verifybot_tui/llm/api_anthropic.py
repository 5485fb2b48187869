"""``kind = "anthropic"``: the Messages API with the official ``anthropic`` library, streamed.

Extended thinking (``thinking_budget``) arrives as ``thinking`` blocks: shown
as thinking as it streams, never taken as the answer, which is the text blocks
only. An answer counts as whole only after ``message_stop``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from verifybot_tui.llm.api_common import ApiLLM, Message, Piece, StreamEnd

DEFAULT_MAX_TOKENS = 8192


class AnthropicChat(ApiLLM):
    kind = "anthropic"
    library = "anthropic"
    client_class = "AsyncAnthropic"
    end_signal = "message_stop"
    images_first = True  # as the API guide advises: each image before the text about it

    def request(self, messages: list[Message]) -> dict[str, Any]:
        max_tokens = self.cfg.max_tokens or DEFAULT_MAX_TOKENS
        args: dict[str, Any] = {"model": self.cfg.model, "messages": messages,
                                "max_tokens": max_tokens, "stream": True}
        if self.cfg.system:
            args["system"] = self.system_prompt
        if self.cfg.thinking_budget:
            args["thinking"] = {"type": "enabled", "budget_tokens": self.cfg.thinking_budget}
        elif self.cfg.temperature >= 0:  # the API refuses a temperature with thinking on
            args["extra_body"] = {"temperature": self.cfg.temperature}
        return args

    def image_part(self, data: str) -> dict[str, Any]:
        """A Messages API image block (base64)."""
        return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                            "data": data}}

    def open_stream(self, args: dict[str, Any]) -> Any:
        return self._client.messages.create(**args)

    def pieces(self, event: Any, end: StreamEnd) -> Iterator[Piece]:
        kind = event.type
        if kind == "message_start":
            end.model = getattr(event.message, "model", None) or ""
            u = event.message.usage
            end.usage.input_tokens = u.input_tokens or 0
            end.usage.output_tokens = u.output_tokens or 0
        elif kind == "content_block_delta":
            delta = event.delta
            if delta.type == "text_delta":
                yield Piece(text=delta.text)
            elif delta.type == "thinking_delta":
                yield Piece(thinking=delta.thinking)
        elif kind == "message_delta":
            end.stop_reason = event.delta.stop_reason or end.stop_reason
            if event.usage is not None and event.usage.output_tokens is not None:
                end.usage.output_tokens = event.usage.output_tokens
        elif kind == "message_stop":
            end.complete = True
