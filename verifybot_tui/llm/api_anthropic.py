"""``kind = "anthropic"``: the Messages API with the official ``anthropic`` library, streamed.

Extended thinking (``thinking_budget``) arrives as ``thinking`` blocks: shown
as thinking as it streams, never taken as the answer, which is the text blocks
only. An answer counts as whole only after ``message_stop``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from verifybot_tui.llm.api_common import (
    ApiLLM,
    Content,
    Message,
    Piece,
    StreamCut,
    Usage,
    base64_png,
)

DEFAULT_MAX_TOKENS = 8192


class AnthropicChat(ApiLLM):
    kind = "anthropic"
    library = "anthropic"
    client_class = "AsyncAnthropic"

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

    def image_content(self, prompt: str, images: list[bytes]) -> Content:
        """Messages API content blocks: each image (base64, as the API guide advises,
        before the text that asks about it), then the text."""
        return [*({"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                               "data": base64_png(image)}}
                  for image in images),
                {"type": "text", "text": prompt}]

    async def stream(self, messages: list[Message]) -> AsyncGenerator[Piece, None]:
        stopped = False
        stop_reason = ""
        model = ""
        usage = Usage()
        stream = await self._client.messages.create(**self.request(messages))
        async with stream:  # leaving it (a cancel included) closes the connection at once
            async for event in stream:
                kind = event.type
                if kind == "message_start":
                    model = getattr(event.message, "model", None) or ""
                    u = event.message.usage
                    usage.input_tokens = u.input_tokens or 0
                    usage.output_tokens = u.output_tokens or 0
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        yield Piece(text=delta.text)
                    elif delta.type == "thinking_delta":
                        yield Piece(thinking=delta.thinking)
                elif kind == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    if event.usage is not None and event.usage.output_tokens is not None:
                        usage.output_tokens = event.usage.output_tokens
                elif kind == "message_stop":
                    stopped = True
        if not stopped:
            raise StreamCut("no message_stop before the end of the stream")
        yield Piece(done=True, stop_reason=stop_reason, usage=usage, model=model)
