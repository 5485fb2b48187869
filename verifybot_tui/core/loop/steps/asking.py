"""The ask step: the chat opened, the prompt composed and sent, the answer waited for.

Everything that talks to the LLM lives here: which conversation the session is in,
the first prompt (with the target's context and the criteria), the target's context
when it changed and a note on a hand edit, the answer recorded with the model that
wrote it, and an answer still being written kept as pending (or waited for again).
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from verifybot_tui.core.base.errors import AnswerPending, LLMError
from verifybot_tui.core.base.ports import Answer, Reattaches, ShowsThinking, Target
from verifybot_tui.core.loop import prompts
from verifybot_tui.core.loop.events import AnswerDone, AnswerText, Notice, PromptSent, ThinkingText
from verifybot_tui.core.loop.project_tree import ProjectTree, tree_from_history
from verifybot_tui.core.loop.steps.state import Conversation, LoopState, Turn
from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.core.verify import tests_alongside


async def open_chat(loop: LoopState, *, new_chat: bool, resume: bool) -> None:
    """Start the backend in the right conversation: a resumed one, a new one, or this one."""
    loop.emit(Notice(f"starting {loop.llm.name}"))
    await loop.llm.start()
    if resume:
        row = loop.recorder.session_row()
        url = row.get("conversation_url")
        if url and url != loop.llm.conversation_url:  # not already there (a follow-up)
            await loop.llm.resume(url)
            loop.context_target = row.get("target")
            # The chat's files as its last attempt ran them: the next answer's base.
            loop.tree = tree_from_history(
                loop.workspace.root, loop.history.attempts(loop.recorder.session_id))
        elif not url:
            await loop.llm.new_chat()
    elif new_chat:
        await loop.llm.new_chat()
        loop.context_target = None
        loop.tree = ProjectTree()  # a new chat starts an empty tree


async def first_turn(loop: LoopState, prompt: str, target: Target, *, fresh: bool) -> Turn:
    """The user's prompt; in a fresh chat with the target's context and the criteria."""
    if not fresh:
        return Turn(prompt, "free")
    context = await loop.probe(target)
    loop.context_target = target.name
    text = prompts.first_prompt(prompt, target=target.name, context=context,
                                timeout=loop.timeout)
    extra = [crit.prompt_text(loop.verification.criteria)]
    if loop.verification.ask_for_tests:
        extra.append(tests_alongside.PROMPT)
    return Turn("\n\n".join([text, *[e for e in extra if e]]), "initial")


async def compose(loop: LoopState, turn: Turn, conv: Conversation) -> Turn:
    """The prompt as sent: with the new target's context, and a note on a hand edit."""
    if loop.target is not conv.target:
        conv.target = loop.target
        await loop.probe(conv.target)
    text = turn.text
    name = conv.target.name
    if loop.context_target != name and turn.kind != "initial":
        context = loop.contexts.get(name) or await loop.probe(conv.target)
        text = prompts.context_update(name, context) + text
    if loop.pending_edit_note and turn.kind != "initial":
        text = f"{loop.pending_edit_note}\n\n{text}"
    loop.pending_edit_note = ""
    loop.context_target = name
    return Turn(text, turn.kind)


async def ask(loop: LoopState, turn: Turn) -> tuple[int, str]:
    """Send the prompt (its secrets cut) and wait for the answer: (prompt id, markdown)."""
    rec = loop.recorder
    turn = Turn(loop.redact(turn.text), turn.kind)  # a secret never goes to the LLM
    prompt_id = rec.prompt_sent(turn.kind, turn.text)
    loop.emit(PromptSent(turn.text, turn.kind, loop.attempt + 1))
    llm = loop.llm
    if isinstance(llm, ShowsThinking):  # an API backend: reasoning apart, waits told
        llm.on_thinking = lambda so_far: loop.emit(ThinkingText(so_far))
        llm.on_notice = lambda note: loop.emit(Notice(note, "warning"))
    answer = await _answer(loop, prompt_id, llm.ask(turn.text, partial(_on_answer_text, loop)))
    return prompt_id, answer.markdown


async def _answer(loop: LoopState, prompt_id: int, waiting: Any) -> Answer:
    """Wait for an answer (asked, or re-attached to) and record it with the model that
    wrote it; one still being written when the wait ends is kept as pending."""
    rec = loop.recorder
    try:
        answer: Answer = await waiting
    except AnswerPending as e:
        rec.answer_pending(prompt_id, e.conversation_url, e.message)
        sid = rec.session_id
        raise AnswerPending(f"{e.message} To wait for it again: verifybot run --resume "
                            f"{sid} (or resume session {sid} in the app).",
                            conversation_url=e.conversation_url,
                            evidence=e.evidence) from None
    except BaseException:
        # The browser died or the user stopped: keep where the conversation lives,
        # so the next prompt goes back to it rather than to a new chat.
        if loop.llm.conversation_url:
            rec.conversation(loop.llm.conversation_url)
        raise
    url = answer.conversation_url or loop.llm.conversation_url
    _check_answer_size(loop, answer.markdown)
    note = _other_model(loop, answer.model)
    # A temporary chat cannot be reopened: its session keeps no URL to resume.
    rec.answer(prompt_id, answer.markdown, url if answer.resumable else None,
               renderer=answer.renderer, thinking=answer.thinking, details=answer.details,
               model=answer.model, model_note=note)
    if note:
        llm_cfg = loop.config.llm.get(loop.llm.name)
        if llm_cfg is not None and llm_cfg.strict_model:
            raise LLMError(f"{note} ([llm.{loop.llm.name}] strict_model = true refuses "
                           f"it: pick the model again, or set strict_model = false to go "
                           f"on with a notice)")
        loop.emit(Notice(note, "warning"))
    loop.emit(AnswerDone(answer.markdown, url))
    return answer


def _other_model(loop: LoopState, answered: str) -> str:
    """A note when the model that answered is not the one [llm.NAME] model asks for."""
    llm_cfg = loop.config.llm.get(loop.llm.name)
    wanted = llm_cfg.model if llm_cfg is not None else ""
    if not answered or not wanted.strip() or same_model(answered, wanted):
        return ""
    return (f"the answer came from {answered!r}, not from the model asked for "
            f"({wanted!r})")


async def reattach(loop: LoopState, pending: dict[str, Any], prompt: str) -> Turn:
    """A resumed session whose last answer was still being written: wait for that same
    answer in its conversation (nothing is sent again), then go on with it."""
    llm = loop.llm
    assert isinstance(llm, Reattaches)
    sid = loop.recorder.session_id
    loop.emit(Notice(f"session {sid}'s last answer was still being written: waiting for "
                     f"it in {llm.conversation_url or 'its conversation'} instead "
                     f"of asking again"))
    if prompt.strip() and prompt.strip() != pending["text"].strip():
        loop.emit(Notice("your new prompt is not sent now: the pending answer comes "
                         "first; send it again as a follow-up once this run ends",
                         "warning"))
    loop.recorder.reattached(pending["id"])
    answer = await _answer(loop, pending["id"],
                           llm.reattach(pending["text"], partial(_on_answer_text, loop)))
    return Turn("", pending["kind"], answer=answer.markdown, prompt_id=pending["id"])


def _on_answer_text(loop: LoopState, so_far: str) -> None:
    _check_answer_size(loop, so_far)
    if so_far:
        loop.recorder.llm_answered()
    loop.emit(AnswerText(so_far))


def _check_answer_size(loop: LoopState, text: str) -> None:
    """An answer past [run] max_answer_mb is refused, not extracted or shown."""
    limit = int(loop.config.run.max_answer_mb * 1024 * 1024)
    if len(text) > limit:
        raise LLMError(f"the answer has more than {limit:,} characters ([run] "
                       f"max_answer_mb = {loop.config.run.max_answer_mb:g}); ask for a "
                       "shorter program, or raise max_answer_mb in the config")


def same_model(answered: str, wanted: str) -> bool:
    """The page's or API's name of a model against the one asked for: case, spaces and
    punctuation aside ("gpt-5-thinking" is "GPT-5 Thinking"), a dated version counts as
    its model ("gpt-4o-2024-08-06" is "gpt-4o")."""
    def norm(name: str) -> str:
        return "-".join(re.findall(r"[a-z0-9]+", name.lower()))
    a, w = norm(answered), norm(wanted)
    return a == w or a.startswith(w + "-") and bool(re.fullmatch(r"[0-9-]+", a[len(w) + 1:]))
