"""What the HTTP API backends share: the conversation, the key, usage, and error messages.

An API backend keeps the message list of its session itself (the server keeps
nothing), so a follow-up or a feedback prompt goes in the same conversation as
with the browser. Its "conversation URL" is ``api:NAME/ID``; resuming one
rebuilds the messages from the workspace's history.db, where every prompt and
answer is kept.

The key is read from the environment at each request and never stored: it is
scrubbed from every message we build from a server's reply, because servers
echo keys back ("Incorrect API key provided: sk-...").
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import email.utils
import importlib
import re
import uuid
from collections.abc import AsyncGenerator, Callable, Iterator
from contextlib import aclosing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verifybot_tui.core.base.errors import LLMError
from verifybot_tui.core.base.ports import Answer, ReportsState, TextCallback
from verifybot_tui.core.settings.config import LLMConfig, key_env
from verifybot_tui.core.settings.secrets import Redactor, secret_env, secret_values
from verifybot_tui.llm.api_limits import BoundedTransport, is_odd_body

OFFICIAL_URL = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
MAX_RETRY_AFTER = 120.0  # a longer wait is reported, not slept through
_KEYISH = re.compile(r"\b(sk|key|pk|rk)-[A-Za-z0-9_\-*.]{6,}")


# A message's content: its text, or (a prompt with images) this API's content parts.
Content = str | list[dict[str, Any]]
Message = dict[str, Any]  # {"role": ..., "content": Content}


def text_of(content: Content) -> str:
    """The text parts of a message's content (an image counts for nothing)."""
    if isinstance(content, str):
        return content
    return "".join(str(p.get("text", "")) for p in content if p.get("type") == "text")


def base64_png(image: bytes) -> str:
    return base64.b64encode(image).decode("ascii")


@dataclass
class Usage:
    """Tokens (and cost, when the provider reports it) of one answer or of a session."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None  # in the provider's currency (USD for the known ones)

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost

    def summary(self) -> str:
        text = f"{self.input_tokens:,} in / {self.output_tokens:,} out tokens"
        return text + (f", ${self.cost:.4f}" if self.cost is not None else "")


def usage_text(llm: object) -> str:
    """The status bar's account of a backend's tokens and cost; "" when it keeps none."""
    usage = getattr(llm, "usage", None)
    if not isinstance(usage, Usage) or not (usage.input_tokens or usage.output_tokens):
        return ""
    return usage.summary()


@dataclass
class Piece:
    """One thing a stream yields: answer text, thinking text, or the end with its usage."""

    text: str = ""
    thinking: str = ""
    done: bool = False
    stop_reason: str = ""
    usage: Usage | None = None
    model: str = ""  # with done: the model the server says answered ("": not said)


class StreamCut(Exception):
    """The stream ended before the server said the answer was complete."""


@dataclass
class StreamEnd:
    """What a stream said of its end, as its events come: whether the server said the
    answer is complete, why it stopped, the tokens, and the model that answered."""

    complete: bool = False
    stop_reason: str = ""
    usage: Usage = field(default_factory=Usage)
    model: str = ""


def base_url(cfg: LLMConfig) -> str:
    return (cfg.base_url or OFFICIAL_URL[cfg.kind]).rstrip("/")


def read_key(cfg: LLMConfig) -> str:
    """The key from its variable; a local server may need none (an empty key is sent as such)."""
    env = key_env(cfg)
    key = secret_env(env) or ""
    if not key and not cfg.base_url:
        raise LLMError(f"llm {cfg.name}: ${env} is not set. Put the API key of {cfg.kind} in "
                       f"that variable (export {env}=...), or name another one with "
                       f"api_key_env in [llm.{cfg.name}]; keys are never read from files")
    return key


def scrub(text: str, key: str) -> str:
    """A server's message without the key or anything that looks like one."""
    if key:
        text = text.replace(key, "<key>")
        if len(key) >= 8:  # servers show the key's start and end ("sk-ab...wxyz")
            text = text.replace(key[:8], "<key>").replace(key[-4:], "****")
    return _KEYISH.sub("<key>", text)


def conversation_messages(workspace: Path, conversation_url: str) -> list[tuple[str, str]]:
    """The (prompt, answer) pairs of the session living at this URL, from history.db.

    A prompt left without an answer (a stream cut, a stop) is skipped: the
    server never saw a reply to it, and two user turns in a row confuse some.
    """
    from verifybot_tui.core.store.history import History

    if not (workspace / "history.db").is_file():
        return []
    history = History(workspace)
    try:
        session = next((s for s in history.sessions(limit=1_000_000)
                        if s["conversation_url"] == conversation_url), None)
        prompts = history.prompts(session["id"]) if session else []
    finally:
        history.close()
    return [(p["text"], p["answer"]) for p in prompts if p["answer"]]


class ApiLLM(ReportsState):
    """The LLMBackend protocol over an HTTP API; subclasses only open the stream.

    Its state is "sent" until the first byte of the answer arrives, "thinking"
    while the model's reasoning streams, "streaming" while the answer does, and
    "waiting" during a rate-limit wait.
    """

    kind = ""

    def __init__(self, cfg: LLMConfig, workspace: Path) -> None:
        self.cfg = cfg
        self.workspace = workspace
        self.name = cfg.name
        self.state = "stopped"
        self.conversation_url: str | None = None
        self.messages: list[Message] = []
        # Tokens and cost of this backend's session, for the status bar; on_usage is
        # called with it after each answer.
        self.usage = Usage()
        self.on_usage: Callable[[Usage], None] | None = None
        # The model's reasoning, as it arrives (whole text so far), shown apart from
        # the answer; the loop sets it when a front end wants it.
        self.on_thinking: TextCallback | None = None
        # Something the user should know while the answer is awaited (a rate-limit wait).
        self.on_notice: Callable[[str], None] | None = None
        # [run] max_answer_mb in bytes: bounds the answer, the thinking and every line of
        # the stream (make_llm sets it from the config).
        self.max_answer_bytes = 5 * 1024 * 1024
        self._client: Any = None
        # Where the key may go: base_url as the config said it when the backend was made
        # (the user's own config, or a file the user approved by its hash); every request
        # is checked against it as it is made (a redirect, a later change: not sent).
        self.key_url = base_url(cfg)

    @property
    def url(self) -> str:
        return base_url(self.cfg)

    # -- the protocol -----------------------------------------------------------

    async def start(self) -> None:
        if self._client is None:
            self._client = self.make_client(read_key(self.cfg))
        self.state = "idle"

    async def new_chat(self) -> None:
        self.messages = []
        self.conversation_url = None

    async def resume(self, conversation_url: str) -> None:
        """Rebuild the conversation's messages from the prompts and answers in history."""
        pairs = conversation_messages(self.workspace, conversation_url)
        self.messages = []
        for prompt, answer in pairs:
            self.messages += [{"role": "user", "content": prompt},
                              {"role": "assistant", "content": answer}]
        self.conversation_url = conversation_url

    async def ask(self, prompt: str, on_text: TextCallback | None = None) -> Answer:
        return await self._ask(prompt, prompt, on_text)

    async def ask_with_images(self, prompt: str, images: list[bytes],
                              on_text: TextCallback | None = None) -> Answer:
        """The prompt with PNG images in the same user turn (doctor --repair sends a
        screenshot of the page). The conversation keeps the prompt's text only: an
        image goes once, with the prompt it belongs to."""
        return await self._ask(prompt, self.image_content(prompt, images), on_text)

    async def _ask(self, prompt: str, content: Content, on_text: TextCallback | None) -> Answer:
        await self.start()
        messages = [*self.messages, {"role": "user", "content": content}]
        text, thinking = "", ""
        self.state = "sent"  # "streaming" once the first text has come, not before
        try:
            async with asyncio.timeout(self.cfg.answer_timeout):
                final = None
                async with aclosing(self._stream_with_retry(messages)) as pieces:
                    async for piece in pieces:
                        if piece.thinking:
                            self.state = "thinking"
                            thinking += piece.thinking
                            self._bounded("thinking", thinking)
                            if self.on_thinking:
                                self.on_thinking(thinking)
                        if piece.text:
                            self.state = "streaming"
                            text += piece.text
                            self._bounded("answer", text)
                            if on_text:
                                on_text(text)
                        if piece.done:
                            final = piece
        except TimeoutError:
            self.state = "error"
            raise LLMError(f"llm {self.name}: no whole answer from {self.url} within "
                           f"{self.cfg.answer_timeout:g} s (answer_timeout in "
                           f"[llm.{self.name}])") from None
        except asyncio.CancelledError:
            self.state = "idle"  # the stream's context closed the connection on the way out
            raise
        except LLMError:
            self.state = "error"
            raise
        except StreamCut as e:
            self.state = "error"
            raise LLMError(f"llm {self.name}: the answer stopped half-way ({e}) after "
                           f"{len(text)} characters; it is not used. Send the prompt again "
                           "(ctrl+r in the app)") from None
        self.state = "idle"
        if final is None:
            raise LLMError(f"llm {self.name}: the stream from {self.url} ended without "
                           "saying the answer was complete; it is not used")
        if final.stop_reason in ("length", "max_tokens"):
            raise LLMError(f"llm {self.name}: the answer was cut at the token limit after "
                           f"{len(text)} characters; raise max_tokens in [llm.{self.name}]")
        if not self.conversation_url:
            self.conversation_url = f"api:{self.name}/{uuid.uuid4().hex[:12]}"
        self.messages = [*self.messages, {"role": "user", "content": prompt},
                         {"role": "assistant", "content": text}]
        usage = final.usage or Usage()
        self.usage.add(usage)
        if self.on_usage:
            self.on_usage(self.usage)
        details = (f"{self.kind} at {self.url}, model {self.cfg.model}, "
                   f"{usage.summary()}")
        return Answer(markdown=text, conversation_url=self.conversation_url,
                      thinking=thinking, details=details, model=final.model)

    def _bounded(self, what: str, text: str) -> None:
        """An answer or its thinking past [run] max_answer_mb ends the stream."""
        if len(text) > self.max_answer_bytes:
            mb = self.max_answer_bytes / (1024 * 1024)
            raise LLMError(f"llm {self.name}: the {what} passed {self.max_answer_bytes:,} "
                           f"characters ([run] max_answer_mb = {mb:g}) and is not used; ask "
                           "for less, or raise max_answer_mb in the config")

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()
        self.state = "stopped"

    # -- errors -------------------------------------------------------------------

    async def _stream_with_retry(
            self, messages: list[Message]) -> AsyncGenerator[Piece, None]:
        """The stream; a refusal for the server's sake (429, 500, 502, 503, 504, 529,
        before any text came) is sent again up to ``retries`` times, after the server's
        Retry-After or a doubling wait, then reported. A timeout or a refused connection
        is reported at once (a wrong base_url should not cost minutes), but, like those,
        marked as the infrastructure's failure, not the model's."""
        tries = 0
        while True:
            started = False
            try:
                async with aclosing(self.stream(messages)) as pieces:
                    async for piece in pieces:
                        started = True
                        yield piece
                return
            except (asyncio.CancelledError, StreamCut, LLMError):
                raise
            except Exception as e:
                odd = is_odd_body(e)
                if odd is not None:
                    raise LLMError(f"llm {self.name} ({self.url}): {odd}") from None
                if started and not self.is_status_error(e):
                    raise StreamCut(type(e).__name__ + ": " + scrub(str(e), self.key)) from e
                wait = self.retry_after(e)
                why = self.passing_trouble(e)
                status = getattr(e, "status_code", None)
                if status is not None and why and tries < max(0, self.cfg.retries) and (
                        wait is None or wait <= MAX_RETRY_AFTER):
                    tries += 1
                    wait = wait if wait is not None else self.cfg.retry_wait * 2 ** (tries - 1)
                    if self.on_notice:
                        self.on_notice(f"{self.name}: {why}; waiting {wait:g} s"
                                       + (" as the server asks" if self.retry_after(e)
                                          is not None else "")
                                       + f", then trying again ({tries} of "
                                       f"{self.cfg.retries})")
                    self.state = "waiting"
                    await asyncio.sleep(wait)
                    self.state = "sent"
                    continue
                err = await self.describe(e, messages, wait)
                if why:
                    err.infrastructure = why
                    if tries:
                        err.message += f" (tried {tries + 1} times)"
                raise err from None

    def passing_trouble(self, e: Exception) -> str:
        """What about this error may pass by itself ("" when nothing does): a rate
        limit, an overloaded or failing server, a timeout, a refused connection."""
        status = getattr(e, "status_code", None)
        if status == 429:
            return "rate limited (429)"
        if status in (500, 502, 503, 504, 529):
            return f"the server answered {status}"
        if status is not None:
            return ""
        name = type(e).__name__.lower()
        text = f"{e} {e.__cause__ or e.__context__ or ''}".lower()
        if "timeout" in name or "timed out" in text:
            return "the server did not answer in time"
        if "connect" in name or "refused" in text:
            return "the server could not be reached"
        return ""

    @property
    def system_prompt(self) -> str:
        """The config's ``system`` text as sent: a secret in it (any variable VerifyBot
        holds as one, this provider's key included) goes out as [redacted]."""
        values = secret_values(None, self.workspace) | {self.key}
        return Redactor(values)(self.cfg.system)

    @property
    def key(self) -> str:
        return secret_env(key_env(self.cfg)) or ""

    async def describe(self, e: Exception, messages: list[Message],
                       wait: float | None) -> LLMError:
        """One error, one message that says what to do; never the key."""
        status = getattr(e, "status_code", None)
        server = scrub(self.server_message(e), self.key)
        where = f"llm {self.name} ({self.url})"
        if (status == 401 or status == 403) and not self.key:
            return LLMError(f"{where}: the server wants an API key ({status}) and "
                            f"${key_env(self.cfg)} is not set: put the key in that variable")
        if status == 401 or status == 403:
            return LLMError(f"{where}: the server refused the key in ${key_env(self.cfg)} "
                            f"({status}). Check that variable holds a valid key for "
                            f"{self.kind}")
        if status == 404:
            models = await self.model_ids()
            offer = (f"; the server offers: {', '.join(models)}" if models else
                     "; the server did not list its models")
            return LLMError(f"{where}: no model {self.cfg.model!r} (404){offer}. Set model "
                            f"in [llm.{self.name}]")
        if status == 429:
            after = (f"it asks to wait {wait:g} s" if wait is not None else
                     "it gave no wait time")
            return LLMError(f"{where}: rate limit (429), {after}. "
                            "Try again later or use another model")
        if status in (400, 413) and _context_error(server):
            chars = sum(len(text_of(m["content"])) for m in messages) + len(self.cfg.system)
            return LLMError(f"{where}: the prompt is too long for the model: the conversation "
                            f"is {chars:,} characters (about {chars // 4:,} tokens) in "
                            f"{len(messages)} messages. Start a new chat (ctrl+n) or use a "
                            f"model with a longer context. The server said: {server}")
        if status is not None:
            return LLMError(f"{where}: the server answered {status}: {server}")
        cause = e.__cause__ or e.__context__
        text = f"{e} {cause or ''}".lower()
        if "timed out" in text or "timeout" in type(e).__name__.lower():
            return LLMError(f"{where}: no answer within {self.cfg.timeout:g} s (timeout in "
                            f"[llm.{self.name}]); is the server overloaded?")
        if "refused" in text or "connect" in type(e).__name__.lower():
            return LLMError(f"{where}: cannot connect to {self.url} (connection refused or "
                            f"no route): is the server running? Check base_url in "
                            f"[llm.{self.name}]")
        return LLMError(f"{where}: {type(e).__name__}: {scrub(str(e), self.key)}")

    async def model_ids(self) -> list[str]:
        """The models the server offers, or [] when it will not say."""
        try:
            async with asyncio.timeout(min(self.cfg.timeout, 20)):
                return sorted([m.id async for m in self._client.models.list()])
        except Exception:
            return []

    @staticmethod
    def server_message(e: Exception) -> str:
        body = getattr(e, "body", None)
        if isinstance(body, dict):
            err = body.get("error", body)
            if isinstance(err, dict) and isinstance(err.get("message"), str):
                return err["message"]
        return str(getattr(e, "message", e))

    @staticmethod
    def retry_after(e: Exception) -> float | None:
        if getattr(e, "status_code", None) not in (429, 503, 529):
            return None
        response = getattr(e, "response", None)
        return parse_retry_after(response.headers) if response is not None else None

    @staticmethod
    def is_status_error(e: Exception) -> bool:
        return getattr(e, "status_code", None) is not None

    # -- for subclasses ---------------------------------------------------------------

    # The official library (imported when the backend starts, not with the app) and
    # its async client class: "openai", "AsyncOpenAI".
    library = ""
    client_class = ""

    def make_client(self, key: str) -> Any:
        """The library's client: no retries of its own (we retry a 429 once, after its
        Retry-After), and none of its headers about this machine."""
        lib = importlib.import_module(self.library)
        http = lib.DefaultAsyncHttpxClient(
            transport=BoundedTransport(self.max_answer_bytes, self.key_url))
        return getattr(lib, self.client_class)(
            api_key=key or "none", base_url=self.url, timeout=self.cfg.timeout, max_retries=0,
            http_client=http,
            default_headers={h: lib.Omit() for h in QUIET_HEADERS} | {"User-Agent": "verifybot"})

    # What the server sends last when the answer is whole ("message_stop"), for the
    # message of a stream cut before it; and whether a prompt's images go before its text.
    end_signal = ""
    images_first = False

    async def stream(self, messages: list[Message]) -> AsyncGenerator[Piece, None]:
        """The answer's pieces as the server streams them, then its end (``done``); a
        stream that ends before the server says the answer is complete is cut."""
        end = StreamEnd()
        stream = await self.open_stream(self.request(messages))
        async with stream:  # leaving it (a cancel included) closes the connection at once
            async for event in stream:
                for piece in self.pieces(event, end):
                    yield piece
        if not end.complete:
            raise StreamCut(f"no {self.end_signal} before the end of the stream")
        yield Piece(done=True, stop_reason=end.stop_reason, usage=end.usage, model=end.model)

    def image_content(self, prompt: str, images: list[bytes]) -> Content:
        """A user turn's content: the prompt and the images (PNG, base64), as this API's
        parts, the images before the text or after it as the API wants them."""
        text = {"type": "text", "text": prompt}
        pictures = [self.image_part(base64_png(image)) for image in images]
        return [*pictures, text] if self.images_first else [text, *pictures]

    def request(self, messages: list[Message]) -> dict[str, Any]:
        """The arguments of the library's create call for this conversation."""
        raise NotImplementedError

    def open_stream(self, args: dict[str, Any]) -> Any:
        """The library's create call (awaited, it gives the stream of events)."""
        raise NotImplementedError

    def pieces(self, event: Any, end: StreamEnd) -> Iterator[Piece]:
        """The answer's pieces in one event of the stream; what it says of the end, in end."""
        raise NotImplementedError

    def image_part(self, data: str) -> dict[str, Any]:
        """One PNG image (its base64 text) as a content part of this API."""
        raise NotImplementedError


def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, (when - datetime.datetime.now(datetime.UTC)).total_seconds())


def _context_error(message: str) -> bool:
    m = message.lower()
    return ("context" in m and ("length" in m or "size" in m or "window" in m)) or \
        "too long" in m or "too many tokens" in m


# Headers the client libraries add about this machine (OS, CPU, Python version):
# nothing but the prompt and the key should leave it.
QUIET_HEADERS = ("X-Stainless-Lang", "X-Stainless-Package-Version", "X-Stainless-OS",
                 "X-Stainless-Arch", "X-Stainless-Runtime", "X-Stainless-Runtime-Version",
                 "X-Stainless-Async", "X-Stainless-Retry-Count", "X-Stainless-Read-Timeout",
                 "X-Stainless-Timeout")
