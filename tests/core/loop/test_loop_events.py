"""The loop as the front ends see it: its events, its questions, stop, resume, target switch.

Real parts only: the replay backend, the local target running real programs,
history.db and the files on disk.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from loop_runs import make_loop, write_answers
from project import EXAMPLES

from verifybot_tui.core.loop import events as ev
from verifybot_tui.targets.local.target import LocalTarget


async def test_event_order_and_feedback_review(tmp_path: Path) -> None:
    loop = make_loop(tmp_path / "ws", EXAMPLES / "word_count.md", review_feedback=True)
    seen: list[type] = []
    async for event in loop.events("count words"):
        seen.append(type(event))
        if isinstance(event, ev.ApprovalNeeded):
            event.decision.set_result(ev.Decision("accept"))
        elif isinstance(event, ev.FeedbackReady):
            assert "TypeError" in event.prompt
            event.decision.set_result(ev.FeedbackDecision(
                True, event.prompt + "\n\nAlso keep it short."))
        elif isinstance(event, ev.Finished):
            assert event.status == "PASSED" and event.exit_code == 0
    order = [t for t in seen if t in (ev.SessionStarted, ev.PromptSent, ev.CodeReady,
                                      ev.ApprovalNeeded, ev.RunFinished, ev.VerdictReached,
                                      ev.FeedbackReady, ev.Finished)]
    assert order == [ev.SessionStarted, ev.PromptSent, ev.CodeReady, ev.ApprovalNeeded,
                     ev.RunFinished, ev.VerdictReached, ev.FeedbackReady, ev.PromptSent,
                     ev.CodeReady, ev.ApprovalNeeded, ev.RunFinished, ev.VerdictReached,
                     ev.Finished]
    assert ev.AnswerText in seen and ev.Output in seen
    sent = loop.history.prompts(loop.session_id)
    assert sent[1]["text"].endswith("Also keep it short."), "the edited feedback is what was sent"


async def test_stop_while_waiting_for_approval(tmp_path: Path) -> None:
    loop = make_loop(tmp_path / "ws", EXAMPLES / "word_count.md")
    finished = None
    async for event in loop.events("count words"):
        if isinstance(event, ev.ApprovalNeeded):
            loop.stop()
        if isinstance(event, ev.Finished):
            finished = event
    assert finished is not None and finished.status == "STOPPED" and finished.exit_code == 1
    assert loop.history.sessions()[0]["status"] == "STOPPED"


async def test_stop_during_a_run_kills_it_and_finishes(tmp_path: Path) -> None:
    t = write_answers(tmp_path / "t.md", """
        import time
        print("started", flush=True)
        time.sleep(300)
        """)
    loop = make_loop(tmp_path / "ws", t, auto_accept=True)
    statuses = []
    async for event in loop.events("sleep"):
        if isinstance(event, ev.Output) and "started" in event.text:
            loop.stop()
        if isinstance(event, ev.Finished):
            statuses.append(event.status)
    assert statuses == ["STOPPED"]
    attempts = loop.history.attempts(loop.session_id)
    assert attempts[0]["status"] == "STOPPED"
    out = (tmp_path / "ws" / "outputs" / "sleep_1.txt").read_text()
    assert "started" in out and "stopped by the user" in out


async def test_follow_up_and_resume_continue_the_conversation(tmp_path: Path) -> None:
    t = write_answers(tmp_path / "t.md", "print('one')", "print('two')", "print('three')")
    ws = tmp_path / "ws"
    loop = make_loop(ws, t, auto_accept=True)
    kinds = []
    async for event in loop.events("first"):
        if isinstance(event, ev.PromptSent):
            kinds.append(event.kind)
    async for event in loop.events("now print two", new_chat=False):
        if isinstance(event, ev.PromptSent):
            kinds.append(event.kind)
            assert event.text == "now print two", "a follow-up is sent as typed"
    assert kinds == ["initial", "free"]
    assert len(loop.history.sessions()) == 1, "a follow-up stays in its session"
    first_session = loop.history.sessions()[-1]
    # a new loop (a later start of the app) resumes that session where it stopped
    later = make_loop(ws, t, auto_accept=True)
    outputs = []
    async for event in later.events("and three", resume=first_session["id"]):
        if isinstance(event, ev.Output):
            outputs.append(event.text)
        if isinstance(event, ev.Finished):
            assert event.status == "PASSED"
    assert "".join(outputs) == "three\n"
    assert later.history.session(first_session["id"])["status"] == "PASSED"


async def test_switching_target_sends_the_new_context(tmp_path: Path) -> None:
    t = write_answers(tmp_path / "t.md", "import sys\nsys.exit(1)", "print('ok')")
    ws = tmp_path / "ws"
    loop = make_loop(ws, t)
    other = LocalTarget(loop.config.targets["other"], ws)
    prompts_sent = []
    async for event in loop.events("do it"):
        if isinstance(event, ev.ApprovalNeeded):
            if event.attempt == 1:  # switched while the code is shown: it runs on the new one
                loop.set_target(other)
            event.decision.set_result(ev.Decision("accept"))
        if isinstance(event, ev.PromptSent):
            prompts_sent.append(event.text)
    assert "runs on another machine (other)" in prompts_sent[1]
    assert (ws / "context" / "other.md").exists()
    assert [a["target"] for a in loop.history.attempts(loop.session_id)] == ["other", "other"]


async def test_a_consumer_that_stops_listening_stops_the_loop(tmp_path: Path) -> None:
    t = write_answers(tmp_path / "t.md", "import time\ntime.sleep(300)")
    loop = make_loop(tmp_path / "ws", t, auto_accept=True)
    events = loop.events("sleep")
    async for event in events:
        if isinstance(event, ev.Output) or type(event).__name__ == "RunStarted":
            break
    await events.aclose()
    await asyncio.sleep(0)
    assert not loop.running
    assert loop.history.sessions()[0]["status"] == "STOPPED"


def test_no_textual_in_the_loop_process() -> None:
    import subprocess

    code = ("import sys, verifybot_tui.core.loop.verify_loop, verifybot_tui.cli.entry; "
            "sys.exit(1 if 'textual' in sys.modules else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


async def test_c_compile_error_is_fed_back_then_fixed(tmp_path: Path) -> None:
    t = tmp_path / "c.md"
    t.write_text("## Answer 1\n\n````markdown\n```c\n#include <stdio.h>\nint main(void) {\n"
                 "    printf(\"hi\\n\")\n    return 0;\n}\n```\n````\n\n"
                 "## Answer 2\n\n````markdown\n```c\n#include <stdio.h>\nint main(void) {\n"
                 "    printf(\"hi from C\\n\");\n    return 0;\n}\n```\n````\n")
    loop = make_loop(tmp_path / "ws", t, auto_accept=True)
    verdicts, sent = [], []
    async for event in loop.events("hello in C"):
        if isinstance(event, ev.VerdictReached):
            verdicts.append(event.verdict.status)
        if isinstance(event, ev.PromptSent):
            sent.append(event.text)
        if isinstance(event, ev.Finished):
            assert event.status == "PASSED"
    assert verdicts == ["compile_error", "success"]
    assert "The build failed" in sent[1] and "error:" in sent[1] and "expected" in sent[1]
    assert (tmp_path / "ws" / "programs" / "hello_in_c_1.c").exists()


async def test_a_hand_edit_is_told_to_the_llm_as_a_quoted_diff(tmp_path: Path) -> None:
    t = write_answers(tmp_path / "t.md", "import sys\nprint('a')\nsys.exit(2)",
                      "print('fixed')")
    loop = make_loop(tmp_path / "ws", t)
    sent = []
    async for event in loop.events("edit me"):
        if isinstance(event, ev.ApprovalNeeded):
            if event.attempt == 1:
                code = event.files[0].content.replace("print('a')", "print('b')")
                event.decision.set_result(ev.Decision("edit", files={event.files[0].name: code}))
            else:
                event.decision.set_result(ev.Decision("accept"))
        if isinstance(event, ev.PromptSent):
            sent.append(event.text)
    assert "I edited your code by hand" in sent[1]
    assert "-print('a')" in sent[1] and "+print('b')" in sent[1]
    assert "\n```diff\n--- edit_me.py (yours)\n" in sent[1]  # quoted exactly, in a fence
    files = sorted(p.name for p in (tmp_path / "ws" / "programs").iterdir())
    assert files == ["edit_me_1.py", "edit_me_2.py", "edit_me_3.py"]
    assert "print('b')" in (tmp_path / "ws" / "programs" / "edit_me_2.py").read_text()
