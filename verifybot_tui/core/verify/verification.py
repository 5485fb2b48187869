"""What a session checks beyond the exit status, and the judge step that applies it.

The loop's judge seam (``core.verify.judging.Judge``) takes a finished run and returns a
verdict. ``checked`` wraps the mechanical judge: a mechanical pass that misses a
success criterion becomes a failure whose feedback names each unmet criterion with
its evidence; a pass that trips a sanity check is kept a pass but carries the hits,
so the loop holds it for a judgement instead of calling it a success.

Which judge reads a passing run's output: ``off`` (criteria and sanity only),
``same-chat`` (the coding conversation itself), or a separate ``LLMBackend`` (an
``[llm.NAME]`` table or a replay transcript), which gets a new chat per judgement
so that the judge did not write the code.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from verifybot_tui.core.base.offload import in_thread
from verifybot_tui.core.base.ports import LLMBackend, RunResult
from verifybot_tui.core.verify import criteria as crit
from verifybot_tui.core.verify import sanity
from verifybot_tui.core.verify.criterion import Criterion
from verifybot_tui.core.verify.judging import FinishedRun, Judge, mechanical
from verifybot_tui.core.verify.verdict import Verdict

OFF = "off"
SAME_CHAT = "same-chat"


@dataclass
class Verification:
    """A session's criteria, whether sanity checks run, and which judge (if any)."""

    criteria: list[Criterion] = field(default_factory=list)
    sanity: bool = True
    judge: str = OFF  # "off", "same-chat", or the name of the separate judge below
    judge_llm: LLMBackend | None = None  # a separate judge
    fresh_chat: bool = True  # a separate judge opens a new chat per judgement (not replay)
    ask_for_tests: bool = False  # a test file is asked for and run after the program
    # A recipe's build (C/C++): the target compiles with these; compiles-clean checks it.
    compiler: str = ""
    flags: list[str] = field(default_factory=list)

    @property
    def judging(self) -> bool:
        return self.judge != OFF

    @property
    def separate(self) -> bool:
        return self.judge_llm is not None


def default_judge(llm_kind: str) -> str:
    """``[run] judge`` left empty: the same chat for chat sites, off for replays."""
    return SAME_CHAT if llm_kind == "browser" else OFF


def checked(verification: Verification, inner: Judge = mechanical) -> Judge:
    """The judge step with the session's criteria and sanity checks applied."""

    silence = silence_allowed(verification.criteria)

    async def judge(run: FinishedRun) -> Verdict:
        verdict = await inner(run)
        if verdict.status == "silent" and silence:
            verdict = replace(verdict, status="success", ok=True, retry_hint="",
                              reason="the program exited with status 0 (printing nothing, "
                                     "which its criteria allow)")
        if not verdict.ok:
            return verdict
        run_dir = Path(run.result.workdir) if run.result.workdir else None
        checks = await in_thread(crit.evaluate, verification.criteria, run.result, run_dir,
                                 run.scan, run.builds)
        missed = crit.unmet(checks)
        if missed:
            first = missed[0]
            more = f" (and {len(missed) - 1} more)" if len(missed) > 1 else ""
            reason = (f"It exited {run.result.exit_code} but missed a success criterion: "
                      f"{first.criterion.describe()}; seen: {first.evidence}{more}.")
            return replace(verdict, status="criteria_unmet", ok=False, reason=reason,
                           retry_hint=crit.feedback_text(checks), checks=checks)
        held = await in_thread(sanity.check, run.result) if verification.sanity else []
        if silence:
            held = [h for h in held if h.name != "empty-output"]
        return replace(verdict, checks=checks, held=held)

    return judge


def silence_allowed(criteria: list[Criterion]) -> bool:
    """Whether the task's criteria say a program may rightly print nothing: its job is a
    file (``file:``), or the whole output must match a pattern the empty text matches.
    Otherwise a silent exit 0 fails (the rules ask every program to print what it did)."""
    empty = RunResult(exit_code=0, stdout="", stderr="", duration=0.0)
    return any(c.kind == "file" or (c.kind == "regex-whole" and crit.check(c, empty).met)
               for c in criteria)
