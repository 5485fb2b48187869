"""A resumed session on the main screen: its conversation, its last version (with the
one before, for F4), that version's output, its attempt number and its verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifybot_tui.tui.screens.attempt import attempt_files, entry_name, read_output_file

if TYPE_CHECKING:
    from verifybot_tui.core.base.ports import ProgramFile
    from verifybot_tui.tui.screens.main.host import LoopHost


async def show_session(screen: LoopHost, session_id: int) -> list[ProgramFile]:
    """The panes show the session being resumed: its conversation, its last version
    and that version's output, so a follow-up is written knowing what it follows.
    Returns the version shown: F4 compares the next one with it."""
    history = screen.session.history
    conversation = screen.conversation
    await conversation.clear()
    attempts = history.attempts(session_id)
    numbers = {a["prompt_id"]: a["n"] for a in attempts if a.get("prompt_id")}
    for p in history.prompts(session_id):
        await conversation.add_prompt(p["text"], p["kind"], numbers.get(p["id"], 0))
        if p.get("answer"):
            await conversation.finish_answer(p["answer"])
    await conversation.end_answer()
    with_files = [a for a in attempts if a.get("files")]
    last = with_files[-1] if with_files else None
    files = attempt_files(screen.session.workspace, last)
    entry = entry_name(last)
    # F4 compares with the version before, as it does in the session's own run.
    previous = attempt_files(screen.session.workspace,
                             with_files[-2] if len(with_files) > 1 else None)
    await screen.code_pane.show_files(files, entry, previous)
    output = screen.output_pane
    output.clear()
    if last is not None and last.get("output_file"):
        screen.output_buffer.run_started(f"attempt {last['n']} on {last.get('target')}")
        read_output_file(screen.session.workspace / last["output_file"], screen.output_buffer)
        output.finish()
    screen.status_bar.attempt = last["n"] if last is not None else 0
    row = history.session(session_id)  # the verdict the session ended on
    screen.status_bar.verdict = str(row.get("status") or "") if row else ""
    return files
