"""The replay backend: answers read back, in order, from a saved transcript.

It re-runs a recorded session (on another target, say), runs the demo in
examples/ offline, and lets tests drive the whole loop without a browser.

Format: a markdown file with sections ``## Answer 1``, ``## Answer 2``, ...
(any text after the number is ignored). A section holding a ``markdown``
fenced block is that block's content, verbatim; that is how VerifyBot's own
raw_md transcripts store answers, so any transcript can be replayed. A
section without one is its raw text up to the next ``## `` heading.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from verifybot_tui.core.answers import extract
from verifybot_tui.core.base.errors import ConfigError, LLMError
from verifybot_tui.core.base.ports import Answer, ReportsState, TextCallback

STEPS = 100  # pieces an answer streams in, at most (about 0.4 s with the default delay)
_HEADING = re.compile(r"^answer\s+(\d+)\b", re.I)


# A line that may open an answer's heading (``## Answer 3``, or the first line of a
# setext one): a file without any is one answer, and is not parsed at all.
_MAYBE_HEADING = re.compile(r"^[ \t]{0,3}(?:##[ \t]+)?answer\s+\d", re.I | re.M)


def parse_answers(text: str) -> list[str]:
    """The answers of a transcript, in the order of their numbers."""
    if not _MAYBE_HEADING.search(text):
        return []
    # Headings and fences are block-level: inline parsing (emphasis, code spans) of
    # every paragraph would cost about a minute and gigabytes for a 50 MB answer.
    md = MarkdownIt("commonmark").disable("inline")
    text = text.replace("\r\n", "\n").replace("\r", "\n")  # lines as markdown-it counts them
    # A big file's fence bodies are cut out before parsing (markdown-it keeps several
    # ints per line: hundreds of MB for 50 MB of code); headings are all we look for.
    bodies: dict[int, tuple[int, str]] = {}
    cut = text
    if len(text) > extract.COLLAPSE_ABOVE:
        cut, bodies = extract.collapse_fences(text)
    line_of = extract.line_mapper(bodies)
    tokens = md.parse(cut)
    starts: list[int] = []  # where each line starts: only for an answer without a fence

    def lines_between(first: int, end: int | None) -> str:
        if not starts:
            starts.extend(m.end() for m in re.finditer("\n", text))
            starts.insert(0, 0)
        first = line_of(first)
        end = None if end is None else line_of(end)
        stop = len(text) if end is None or end >= len(starts) else starts[end]
        return text[starts[min(first, len(starts) - 1)]:stop]

    def content(fence: Token) -> str:
        line = fence.map[0] if fence.map else -1
        return bodies[line][1] if line in bodies else fence.content

    found: dict[int, str] = {}
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open" and tok.tag == "h2":
            m = _HEADING.match(tokens[i + 1].content.strip())
            if m:
                start = tok.map[1] if tok.map else 0
                j = i + 3
                end = None
                fence = None
                while j < len(tokens):
                    t = tokens[j]
                    if t.type == "heading_open" and t.tag in ("h1", "h2"):
                        end = t.map[0] if t.map else end
                        break
                    if fence is None and t.type == "fence" and t.info.strip() in ("markdown", "md"):
                        fence = content(t)
                    j += 1
                body = fence if fence is not None else lines_between(start, end).strip("\n") + "\n"
                found.setdefault(int(m.group(1)), body)
                i = j
                continue
        i += 1
    return [found[k] for k in sorted(found)]


class ReplayLLM(ReportsState):
    """Answers from a file; streams each answer in small pieces like a chat site."""

    def __init__(self, path: Path, *, chunk: int = 48, delay: float = 0.004) -> None:
        self.path = path
        self.name = f"replay:{path}"
        self.state = "stopped"
        self.conversation_url: str | None = None
        self.chunk = chunk
        self.delay = delay
        self.answers: list[str] = []
        self.index = 0

    async def start(self) -> None:
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as e:
            raise LLMError(f"cannot read the replay transcript {self.path}: {e.strerror}. "
                           "Give an existing file: --llm replay:PATH") from None
        except UnicodeDecodeError as e:
            raise ConfigError(f"the replay transcript {self.path} is not UTF-8 text (an "
                              f"invalid byte at offset {e.start}); save it as UTF-8") from None
        self.answers = parse_answers(text)
        if not self.answers:
            raise LLMError(f"{self.path} holds no answers: it needs sections '## Answer 1', "
                           "'## Answer 2', ... (see verifybot_tui/llm/replay.py)")
        self.state = "idle"

    async def new_chat(self) -> None:
        self.index = 0
        self.conversation_url = None

    async def resume(self, conversation_url: str) -> None:
        """A replayed conversation resumes where its answer counter says (``#n``)."""
        self.conversation_url = conversation_url
        _, _, n = conversation_url.partition("#")
        self.index = int(n) if n.isdigit() else 0

    async def ask(self, prompt: str, on_text: TextCallback | None = None) -> Answer:
        if not self.answers:
            await self.start()
        if self.index >= len(self.answers):
            raise LLMError(f"the replay transcript {self.path} has no answer "
                           f"{self.index + 1} (it holds {len(self.answers)})")
        answer = self.answers[self.index]
        self.index += 1
        self.state = "streaming"
        # At most STEPS pieces whatever the answer's size: a long answer streams in
        # bigger pieces rather than for minutes (each step hands over the whole prefix).
        step = max(self.chunk, -(-len(answer) // STEPS))
        try:
            for end in range(step, len(answer) + step, step):
                if on_text:
                    on_text(answer[:end])
                await asyncio.sleep(self.delay)
        finally:
            self.state = "idle"
        self.conversation_url = f"replay://{self.path.resolve()}#{self.index}"
        return Answer(markdown=answer, conversation_url=self.conversation_url)

    async def close(self) -> None:
        self.state = "stopped"
