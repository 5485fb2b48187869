"""``verifybot run`` and ``verifybot extract``: the loop without the app.

Both drive the same verify loop as the TUI and exit with the codes of docs/commands.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from verifybot_tui.cli.common import (
    EXIT_HANGUP,
    SIGNALS,
    check_prompt,
    close_all,
    config_for,
    install_stop_signals,
)
from verifybot_tui.cli.printer import Printer
from verifybot_tui.cli.terminal import Stdin
from verifybot_tui.core.base.ansi import one_line, visible
from verifybot_tui.core.base.errors import (
    EXIT_FAILED,
    EXIT_SUCCESS,
    ConfigError,
    TargetError,
)
from verifybot_tui.core.base.fresh_file import write_fresh
from verifybot_tui.core.base.toml_file import TomlFileError, read_text_file
from verifybot_tui.core.settings.config import MAX_TIMEOUT, Config
from verifybot_tui.core.store.transcript import wrap_fence


async def cmd_run(args: argparse.Namespace) -> int:
    if getattr(args, "race", None):
        from verifybot_tui.cli.compare.race import cmd_race

        return await cmd_race(args)
    from verifybot_tui.cli.approval import approve_files, board_files

    if args.resume is None:
        check_prompt(args.prompt, "verifybot run")  # nothing to send: nothing recorded either
    cfg = config_for(args, writes=True)  # first: bad config = no start
    session = _resumed(cfg, args) if args.resume is not None else {}
    from verifybot_tui.llm import make_llm
    from verifybot_tui.llm.verification_setup import build_verification
    from verifybot_tui.targets import choose_target, make_target

    if args.max_retries is not None and args.max_retries < 0:
        raise ConfigError("--max-retries must be 0 or more")
    if args.timeout is not None and not 0 < args.timeout <= MAX_TIMEOUT:
        raise ConfigError(f"--timeout must be more than 0 and at most {MAX_TIMEOUT:g} seconds, "
                          f"got {args.timeout!r}")
    ws = cfg.workspace
    stdin = Stdin()
    printer = Printer(json_mode=args.json, stdin=stdin, show_thinking=args.show_thinking,
                      verbose=args.verbose)
    # A resumed session goes on with its own LLM and target unless told otherwise.
    target_name, why = choose_target(cfg, args.prompt or session.get("prompt", ""),
                                     args.target or _known(session.get("target"), cfg.targets))
    llm_name = args.llm or _known(session.get("llm"), cfg.llm) or cfg.run.default_llm
    await approve_files(board_files(cfg, target_name), trusted=args.trust,
                        how="verifybot run --trust", stdin=stdin)
    llm = make_llm(cfg, llm_name, ws)
    target = make_target(cfg, target_name, ws, prompter=stdin,
                         trust_new_host=args.trust_new_host)
    if why:
        printer.say(why)
    try:
        _say_sandbox(cfg, target_name, printer)
    except BaseException:
        await close_all(llm, target)
        raise
    try:
        verification = build_verification(
            cfg, llm_spec=llm_name, judge=args.judge,
            expect=args.expect, criteria_file=args.criteria, workspace=ws)
    except BaseException:
        await close_all(llm, target)
        raise
    try:
        return await _drive(args, cfg, llm, target, printer, args.prompt,
                            max_retries=args.max_retries, timeout=args.timeout,
                            verification=verification, resume=args.resume)
    finally:
        if verification.judge_llm is not None:
            await close_all(verification.judge_llm)



def _resumed(cfg: Config, args: argparse.Namespace) -> dict[str, Any]:
    """The session --resume names; without a prompt it must have an answer pending."""
    from verifybot_tui.core.store.history import History

    history = History(cfg.workspace)
    try:
        row = history.session(args.resume)
        pending = history.pending_prompt(args.resume) if row else None
    finally:
        history.close()
    if row is None:
        raise ConfigError(f"--resume {args.resume}: there is no session {args.resume} in "
                          f"{cfg.workspace / 'history.db'} (`verifybot history` lists them)")
    if not args.prompt.strip() and pending is None:
        raise ConfigError(f"--resume {args.resume}: session {args.resume} has no answer still "
                          f"being written to wait for; give a PROMPT to send as a follow-up "
                          f"in its conversation")
    return row


def _known(name: str | None, tables: dict[str, Any]) -> str | None:
    return name if name and name in tables else None


def _say_sandbox(cfg: Config, name: str, printer: Printer) -> None:
    """Where the config turned the sandbox off, or none can be made, say so before
    anything is sent; with ``sandbox = "require"`` refuse (TargetError) instead."""
    from verifybot_tui.core.settings.config import sandbox_off_line
    from verifybot_tui.targets.sandbox.bubblewrap import (
        no_sandbox_message,
        sandbox_label,
        why_no_sandbox,
    )

    if off := sandbox_off_line(cfg, name):
        printer.say(off)
        return
    tcfg = cfg.targets.get(name)
    if tcfg is None or sandbox_label(tcfg.kind, tcfg.sandbox) != "no sandbox":
        return
    if tcfg.sandbox == "require":
        raise TargetError(no_sandbox_message(name))
    printer.say(f"target {name}: no sandbox here ({why_no_sandbox()}): what an "
                "answer brings runs with your user's powers, contained by process group "
                "only (README \"What is contained where\")")


async def _drive(args: argparse.Namespace, cfg: Config, llm: Any, target: Any,
                 printer: Printer, prompt: str, resume: int | None = None,
                 **loop_args: Any) -> int:
    """Run the loop for one prompt with Ctrl+C handling; close everything; the exit code."""
    from verifybot_tui.core.loop.verify_loop import VerifyLoop, drain
    from verifybot_tui.core.store.history import History

    history = History(cfg.workspace)
    loop = VerifyLoop(config=cfg, llm=llm, target=target, history=history,
                      auto_accept=True if args.yes else None,
                      workspace=cfg.workspace,
                      **loop_args)
    install_stop_signals(loop.stop, printer.stdin)
    try:
        finished = await drain(loop.events(prompt, new_chat=resume is None, resume=resume),
                               printer)
    finally:
        await close_all(llm, target)
        history.close()
    if finished is None:
        return EXIT_FAILED
    if SIGNALS["hangup"]:
        return EXIT_HANGUP  # stdout may be gone with the terminal: nothing more is printed
    if args.json:
        print(json.dumps(finished.record, indent=2))
    return finished.exit_code



async def cmd_extract(args: argparse.Namespace) -> int:
    from verifybot_tui.core.answers.extract import extract
    from verifybot_tui.llm.replay import parse_answers

    path = Path(args.file)
    limit_mb = config_for(args).run.max_answer_mb
    try:  # a regular file only, read up to the cap: /dev/zero or a FIFO never grows us
        text = read_text_file(path, int(limit_mb * 1024 * 1024))
    except TomlFileError as e:
        raise ConfigError(f"{path}: {e} (an answer is at most [run] max_answer_mb = "
                          f"{limit_mb:g}; a bigger one needs a higher max_answer_mb; "
                          "a text file must be UTF-8)") from None
    # A raw_md transcript or a replay file holds '## Answer N' sections: the code
    # is in the answers, not in the prompts, outputs and saved files around them.
    answers = parse_answers(text)
    if answers and args.answer is not None:
        if not 1 <= args.answer <= len(answers):
            raise ConfigError(f"{path} holds answers 1 to {len(answers)}; "
                              f"--answer {args.answer} is not one of them")
        numbered = [(args.answer, answers[args.answer - 1])]
    elif answers:
        numbered = list(enumerate(answers, 1))
    else:
        if args.answer is not None:
            raise ConfigError(f"{path} has no '## Answer N' sections: it is one answer; "
                              "leave out --answer")
        numbered = [(0, text)]
    if args.run:
        n, answer = numbered[-1]
        return await _extract_run(args, path, answer, n)
    found = [(n, extract(answer)) for n, answer in numbered]
    if args.json:
        if answers:
            print(json.dumps([{"answer": n, **dataclasses.asdict(ex)} for n, ex in found],
                             indent=2))
        else:
            print(json.dumps(dataclasses.asdict(found[0][1]), indent=2))
    else:
        for n, ex in found:
            if n:
                print(f"=== answer {n} of {len(answers)} ===")
            _print_extraction(ex)
    return EXIT_SUCCESS if any(ex.programs for _, ex in found) else EXIT_FAILED



def _print_extraction(ex: Any) -> None:
    if not ex.blocks:
        print("no code blocks")
    for i, b in enumerate(ex.blocks, 1):
        state = "program" if b.runnable else f"not run: {b.reason}"
        edit = f", an edit ({b.how})" if b.how not in ("whole", "not-a-file") else ""
        print(one_line(f"--- block {i} (line {b.line}): {b.language or 'unknown'}, "
                       f"{b.filename or 'no file name'}{edit}, {state} ---"))
        print(visible(b.code.rstrip("\n")))
    for note in ex.notes:
        print(one_line(f"note: {note}"))
    if ex.timeout:
        print(f"TIMEOUT: {ex.timeout:g}")
    if ex.dependencies:
        print(one_line(f"DEPENDENCIES: {', '.join(ex.dependencies)}"))



def kept_replay(ws: Path, path: Path, answer: str, n: int) -> Path:
    """The answer run, as a replay file kept in the workspace (``raw_md/replays/``): the
    session names it as its LLM, so a recipe made from the session (``recipe new``) or
    ``run --resume`` reads the same answer later (a temporary file was gone by then).
    Named by the answer's own hash: the same answer is one file, another never
    replaces it."""
    digest = hashlib.sha256(answer.encode()).hexdigest()[:8]
    kept = ws / "raw_md" / "replays" / f"{path.stem}_answer_{n or 1}_{digest}.md"
    if not kept.is_file():
        kept.parent.mkdir(parents=True, exist_ok=True)
        write_fresh(kept, f"# The answer `verifybot extract --run` ran, from {path.name}\n\n"
                          f"## Answer 1\n\n{wrap_fence(answer, 'markdown')}", 0o600)
    return kept


async def _extract_run(args: argparse.Namespace, path: Path, answer: str, n: int) -> int:
    """--run: the loop with this one answer and no retries, so nothing is done twice."""
    from verifybot_tui.cli.approval import approve_files, board_files
    from verifybot_tui.llm.replay import ReplayLLM
    from verifybot_tui.targets import make_target

    cfg = config_for(args, writes=True)
    ws = cfg.workspace
    stdin = Stdin()
    printer = Printer(json_mode=args.json, stdin=stdin)
    llm = ReplayLLM(kept_replay(ws, path, answer, n))
    await approve_files(board_files(cfg, args.target or cfg.run.default_target),
                        trusted=args.trust, how="verifybot extract --run --trust",
                        stdin=stdin)
    target = make_target(cfg, args.target or cfg.run.default_target, ws, prompter=stdin,
                         trust_new_host=args.trust_new_host)
    try:
        _say_sandbox(cfg, target.name, printer)
    except BaseException:
        await close_all(llm, target)
        raise
    what = f"answer {n} of {path.name}" if n else path.name
    return await _drive(args, cfg, llm, target, printer, f"Run the code of {what}",
                        max_retries=0)

