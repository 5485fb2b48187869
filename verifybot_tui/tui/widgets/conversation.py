"""The conversation pane: what was sent to the LLM and what it answered.

Answers stream in through a MarkdownStream: only the new part of the text is
appended (the stream coalesces fast appends), so a long answer never
re-renders per token. Prompts are shown as plain text because a feedback
prompt carries raw program output that must not be read as markdown.

An API model's reasoning (extended thinking) gets its own block above the
answer: folded, dimmed, titled "thinking" with its latest line as a preview,
plain text through the ANSI sanitiser. It is never part of the answer's text.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.markup import escape
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Collapsible, LoadingIndicator, Static

from verifybot_tui.core.base.ansi import one_line, sanitize, visible

if TYPE_CHECKING:
    from textual.widgets import Markdown
    from textual.widgets.markdown import MarkdownStream

PROMPT_TITLES = {
    "initial": "You asked",
    "feedback": "Feedback sent",
    "edit": "Edited version noted",
    "reject": "Rejected, asked again",
    "duplicate": "Same code again, asked for a change",
    "free": "You said",
}
_FOLD_LINES = 8
_PREVIEW = 60  # characters of the latest thinking line in the folded block's title
KEPT_TURNS = 6  # turns (a prompt and what followed it) kept as widgets; older ones as text
SPIN = 1 / 16  # seconds between the waiting spinner's frames (LoadingIndicator's own)


class _Turn:
    """One prompt and what followed it: its widgets while shown, always what rebuilds them."""

    def __init__(self) -> None:
        self.widgets: list[Widget] = []
        self.parts: list[list[str]] = []  # ["prompt", text, kind, attempt], ["answer", text]


class ConversationPane(VerticalScroll):
    """Prompts and answers, newest at the bottom, anchored while it grows."""

    DEFAULT_CSS = """
    ConversationPane {
        & > .answer { margin: 0 0 1 0; padding: 0 1; background: $surface; }
        & > .prompt { margin: 0 0 1 0; }
        & > .prompt-text { margin: 0 0 1 0; padding: 0 1; color: $text-muted; }
        & > .notice { padding: 0 1; color: $text-muted; text-style: italic; }
        & > .notice.-warning { color: $warning; }
        & > .notice.-error { color: $error; }
        & > .thinking { margin: 0 0 1 0; color: $text-muted; }
        & > .thinking CollapsibleTitle { color: $text-muted; text-style: italic; }
        & > .thinking .thinking-text { color: $text-muted; text-style: dim; padding: 0 1; }
        & > #older { color: $text-muted; text-style: italic; padding: 0 1; display: none; }
        & > #older.-some { display: block; }
        & > #answer-wait { height: 1; display: none; }  /* shown while waiting */
    }
    """

    # The spinner below the last prompt: from a prompt (or a run) until its answer ends.
    waiting: var[bool] = var(False)
    # Every prompt shown in full, as sent (`run --verbose` in the app); else long ones fold.
    verbose: var[bool] = var(False)

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._answer: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self._text = ""  # the current answer's text so far
        self._thinking: Collapsible | None = None  # the current answer's reasoning block
        self._thought = ""
        self._plain: Static | None = None  # the answer shown as plain text (too big)
        self._plain_full = False  # it shows all it will: the first _PLAIN_SHOWN characters
        self._answer_part = ["answer", ""]  # the current answer's text, as its turn keeps it
        self._thinking_part = ["thinking", ""]
        self._lock = asyncio.Lock()
        # A long session stays as cheap as a short one: only the last KEPT_TURNS turns
        # are widgets; older ones are kept as text and shown again on demand (#older).
        self._turns: list[_Turn] = [_Turn()]
        self._shown_from = 0  # index of the first turn whose widgets are mounted

    def compose(self):
        yield Static("", id="older")
        yield LoadingIndicator(id="answer-wait")

    def on_mount(self) -> None:
        self.anchor()
        self.watch_waiting(self.waiting)  # the spinner starts hidden and still
        if getattr(self.app, "ui_state", {}).get("verbose_prompts") is True:
            self.verbose = True

    def watch_waiting(self, waiting: bool) -> None:
        # The spinner's own display, not a class of the pane: a class of the pane restyles
        # every block of the conversation, and this changes twice an attempt.
        # Hidden, it stops ticking too: its 16-a-second refresh otherwise runs for as long
        # as the app is open, the only thing keeping an idle app off zero CPU.
        for spinner in self.query_children("#answer-wait"):
            spinner.display = waiting
            spinner.auto_refresh = SPIN if waiting else None

    def watch_verbose(self, verbose: bool) -> None:
        for fold in self.query(".prompt"):
            if isinstance(fold, Collapsible):
                fold.collapsed = not verbose

    @property
    def answer_text(self) -> str:
        return self._text

    async def _add(self, widget) -> None:
        self._turns[-1].widgets.append(widget)
        await self.mount(widget, before=self.query_one("#answer-wait"))

    async def add_prompt(self, text: str, kind: str = "initial", attempt: int = 0) -> None:
        await self.end_answer()
        if self._turns[-1].parts:
            self._turns.append(_Turn())
            await self._fold_old()
        self._turns[-1].parts.append(["prompt", text, kind, str(attempt)])
        for widget in self._prompt_widgets(text, kind, attempt):
            await self._add(widget)
        self.waiting = True

    def _prompt_widgets(self, text: str, kind: str, attempt: int) -> list[Widget]:
        title = PROMPT_TITLES.get(kind, "Prompt")
        text = visible(text)  # a feedback prompt quotes the program's output
        if attempt:
            title = f"{title} (attempt {attempt})"
        # As sent, as `run --verbose` prints it: it quotes program output, so escapes
        # and invisible characters are shown escaped.
        text = visible(sanitize(text, keep_colours=False))
        folded = text.count("\n") >= _FOLD_LINES
        body = Static(text, markup=False,
                      classes="prompt-body" if folded else "prompt-body prompt-text")
        if folded:
            first = text.strip().splitlines()[0][:80] if text.strip() else ""
            return [Collapsible(body, title=escape(f"{title}: {first} …"),
                                collapsed=not self.verbose, classes="prompt")]
        return [Static(f"[b]{title}[/b]", classes="prompt-title"), body]

    async def add_notice(self, text: str, level: str = "info") -> None:
        self._turns[-1].parts.append(["notice", text, level])
        await self._add(Static(visible(text), markup=False, classes=f"notice -{level}"))

    async def _fold_old(self) -> None:
        """Turns beyond the last KEPT_TURNS leave the screen (their text stays)."""
        while len(self._turns) - self._shown_from > KEPT_TURNS:
            turn = self._turns[self._shown_from]
            widgets, turn.widgets = turn.widgets, []
            self._shown_from += 1
            await self.remove_children(widgets)
        self._show_older_count()

    def _show_older_count(self) -> None:
        older = self.query_one("#older", Static)
        hidden = sum(1 for t in self._turns[:self._shown_from] if t.parts)
        older.set_class(hidden > 0, "-some")
        older.update(f"▲ {hidden} earlier {'turn' if hidden == 1 else 'turns'} not shown: "
                     "click here to show them" if hidden else "")

    async def on_click(self, event) -> None:  # type: ignore[no-untyped-def]
        if getattr(event.widget, "id", None) == "older":
            await self.show_older()

    async def show_older(self, count: int = KEPT_TURNS) -> None:
        """Show up to ``count`` more of the turns folded away, above the ones shown."""
        first = max(0, self._shown_from - count)
        anchor: Widget = self.query_one("#older")
        for turn in self._turns[first:self._shown_from]:
            turn.widgets = [w for part in turn.parts for w in self._rebuilt(part)]
            if turn.widgets:
                await self.mount_all(turn.widgets, after=anchor)
                anchor = turn.widgets[-1]
        self._shown_from = first
        self._show_older_count()

    def _rebuilt(self, part: list[str]) -> list[Widget]:
        kind = part[0]
        if kind == "prompt":
            return self._prompt_widgets(part[1], part[2], int(part[3]))
        if kind == "notice":
            return [Static(visible(part[1]), markup=False, classes=f"notice -{part[2]}")]
        if kind == "thinking":
            return [Collapsible(Static(part[1], markup=False, classes="thinking-text"),
                                title="thinking", collapsed=True, classes="thinking")]
        from textual.widgets import Markdown

        return [Markdown(part[1], classes="answer")]

    @property
    def thinking_text(self) -> str:
        """The current answer's reasoning as shown (sanitised)."""
        return self._thought

    async def show_thinking(self, text: str) -> None:
        """The model's reasoning so far, in its folded block above the answer."""
        async with self._lock:
            shown = visible(sanitize(text, keep_colours=False))
            if self._thinking is None:
                body = Static(shown, markup=False, classes="thinking-text")
                self._thinking = Collapsible(body, title="thinking", collapsed=True,
                                             classes="thinking")
                self._thinking_part = ["thinking", ""]
                turn = self._turns[-1]
                if self._answer is not None:
                    turn.parts.insert(turn.parts.index(self._answer_part), self._thinking_part)
                    turn.widgets.insert(turn.widgets.index(self._answer), self._thinking)
                    await self.mount(self._thinking, before=self._answer)
                else:
                    turn.parts.append(self._thinking_part)
                    await self._add(self._thinking)
            else:
                self._thinking.query_one(".thinking-text", Static).update(shown)
            self._thought = self._thinking_part[1] = shown
            lines = [line for line in shown.splitlines() if line.strip()]
            last = one_line(lines[-1].strip()) if lines else ""
            if len(last) > _PREVIEW:
                last = "…" + last[-(_PREVIEW - 1):]
            words = len(shown.split())
            self._thinking.title = escape(f"thinking ({words} words): {last}" if last
                                          else "thinking")

    async def show_answer(self, text: str) -> None:
        """The answer's whole text so far: append what is new, or start over if it changed.

        Control characters are shown escaped: ``visible`` maps each character on its
        own, so the escaped text of a longer answer still starts with the shorter's."""
        text = visible(text)
        async with self._lock:
            if self._plain is not None or _too_big_for_markdown(text):
                await self._show_plain(text)
                return
            if self._answer is None:
                from textual.widgets import Markdown  # markdown-it: after the first frame

                self._answer = Markdown(classes="answer")
                self._answer_part = ["answer", ""]
                self._turns[-1].parts.append(self._answer_part)
                await self._add(self._answer)
                self._stream = Markdown.get_stream(self._answer)
                self._text = ""
            assert self._stream is not None
            if text.startswith(self._text):
                delta = text[len(self._text):]
                if delta:
                    await self._stream.write(delta)
            else:
                # The site rewrote earlier text (a re-render): replace, then stream on.
                await _stop(self._stream)
                await self._answer.update(text)
                self._stream = type(self._answer).get_stream(self._answer)
            self._text = self._answer_part[1] = text

    async def _show_plain(self, text: str) -> None:
        """A huge answer as plain text: markdown parsing of it would hold the event loop
        for minutes (4.8 MB of ``![`` took 45 s), so a stop could not be seen."""
        if self._plain is None:
            if self._stream is not None:
                await _stop(self._stream)
                self._stream = None
            if self._answer is not None:
                await self._answer.remove()
                self._answer = None
            else:
                self._answer_part = ["answer", ""]
                self._turns[-1].parts.append(self._answer_part)
            # Kept in its turn as plain text too: a redraw never parses it as markdown.
            self._answer_part[:] = ["notice", "", "info"]
            self._plain = Static("", markup=False, classes="answer")
            self._plain_full = False
            await self._add(self._plain)
        self._text = text
        if self._plain_full:
            return  # what shows is the same: re-wrapping it on every piece costs frames
        self._plain_full = len(text) > _PLAIN_SHOWN
        shown = text[:_PLAIN_SHOWN] + (
            "\n[… the answer is too long to show here; the code pane has the code, raw_md "
            "the whole answer]" if len(text) > _PLAIN_SHOWN else "")
        self._answer_part[1] = shown
        self._plain.update(shown)

    async def finish_answer(self, markdown: str) -> None:
        """The final markdown: usually what streamed; if not (exact copy), show it once."""
        await self.show_answer(markdown)
        await self.end_answer()

    async def end_answer(self) -> None:
        async with self._lock:
            if self._stream is not None:
                await _stop(self._stream)
            self._stream = None
            self._answer = None
            self._plain = None
            self._text = ""
            self._thinking = None
            self._thought = ""
            self.waiting = False

    async def clear(self) -> None:
        await self.end_answer()
        await self.query(".prompt, .prompt-title, .prompt-text, .answer, .notice, .thinking"
                         ).remove()
        self._turns, self._shown_from = [_Turn()], 0
        self._show_older_count()


_MARKDOWN_MOST = 64 * 1024  # characters of an answer rendered as markdown
_BRACKETS_MOST = 4000  # '[' in it: unmatched ones make markdown parsing quadratic
_PLAIN_SHOWN = 16 * 1024  # characters of a bigger answer shown as plain text


def _too_big_for_markdown(text: str) -> bool:
    return len(text) > _MARKDOWN_MOST or text.count("[") > _BRACKETS_MOST


async def _stop(stream: MarkdownStream) -> None:
    """Stop a Markdown stream, even one whose task has not run yet.

    Textual's ``stop()`` cancels the stream's task and awaits it; a task cancelled
    before its first step ends in CancelledError, and awaiting it raises that here.
    Escaping a message handler, it ended the main screen's message loop without a
    word (no event was shown after it): an answer re-rendered by the site right
    before it ended did that. Nothing was written to such a stream, so nothing is
    lost; a cancellation of our own task still propagates.
    """
    try:
        await stream.stop()
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise
