"""The app's back-end objects: the LLM backend, the targets, the loop, history.

No Textual here: this is the same wiring the CLI does, held for the life of the
app. The loop and the backends are imported when first used, after the first
frame. Starting the LLM and connecting a target are shared tasks, so a prompt
sent while the browser is still starting waits for that start instead of
launching a second browser on the same profile. An LLM that cannot start here (a
visible browser and no display) is refused before it runs, with what to do (the
first start, at the end of this module).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypeVar

from verifybot_tui.core.base.ansi import one_line
from verifybot_tui.core.base.errors import ConfigError, LLMError
from verifybot_tui.core.base.ports import LLMBackend, Prompter, Target
from verifybot_tui.core.loop.recorder import sweep
from verifybot_tui.core.settings import trust
from verifybot_tui.core.settings.config import (
    API_KINDS,
    Config,
    LLMConfig,
    check_llm_spec,
    check_target_name,
    user_config_dir,
)
from verifybot_tui.core.store.history import History
from verifybot_tui.llm.verification_setup import build_verification
from verifybot_tui.targets import live_runs

if TYPE_CHECKING:
    from verifybot_tui.core.loop.verify_loop import VerifyLoop
    from verifybot_tui.core.verify.recipe import Recipe
    from verifybot_tui.llm.browser.first_start import NewProfile

T = TypeVar("T")
# What a refusal tells the user to do to run such a file after all.
TRUST_HOW = "in the app: answer \"Run it\" when asked, or start it with verifybot --trust"


class AppSession:
    def __init__(self, config: Config, *, llm_spec: str, target_name: str,
                 workspace: Path | None = None, review_feedback: bool = True) -> None:
        check_llm_spec(config, llm_spec)
        check_target_name(config, target_name)
        self.config = config
        self.workspace = (workspace or config.workspace).resolve()
        self.llm_spec = llm_spec
        # What F8 cycles through: a replay given with --llm stays in the round.
        self.llm_names = list(config.llm) if llm_spec in config.llm else [llm_spec,
                                                                          *config.llm]
        self.target_name = target_name
        self.review_feedback = review_feedback
        self.auto_accept = config.run.auto_accept
        self.history = History(self.workspace)
        sweep(self.history, self.workspace)  # dead sessions INTERRUPTED before any listing
        live_runs.sweep_live(self.workspace)  # and what their local runs left, killed
        # Criteria and the judge: the criteria editor and an opened recipe change it.
        self.verification = build_verification(config, llm_spec=llm_spec,
                                               workspace=self.workspace)
        self.judge_choice: str | None = None  # a judge chosen on purpose (a recipe's)
        self.llm: LLMBackend | None = None
        self.targets: dict[str, Target] = {}
        self.loop: VerifyLoop | None = None
        self.prompter: Prompter | None = None
        # Files from others that set commands (a board file's qemu, a recipe's flags): the
        # app's dialog asks (True: run it; with --trust it says yes unasked); None refuses.
        self.ask_trust: Callable[[list[trust.FileToTrust]], Awaitable[bool]] | None = None
        self._asking: dict[frozenset[str], asyncio.Task[bool]] = {}
        # Called as (kind, name, state) when the LLM ("llm") or a target ("target") changes
        # state; the main screen turns it into a message for its status bar.
        self.on_backend_state: Callable[[str, str, str], None] = lambda kind, name, state: None
        self._llm_start: asyncio.Task[None] | None = None
        self._connecting: dict[str, asyncio.Task[Target]] = {}
        self.stopping = False  # a stop was asked for this run: the next one kills at once
        self._profiles: dict[str, NewProfile] = {}  # browser profiles as they were at start

    @property
    def target(self) -> Target | None:
        return self.targets.get(self.target_name)

    @property
    def target_names(self) -> list[str]:
        return list(self.config.targets)

    def next_target_name(self, after: str | None = None) -> str:
        names = self.target_names
        current = after or self.target_name
        i = names.index(current) if current in names else -1
        return names[(i + 1) % len(names)]

    async def use_llm(self, spec: str) -> None:
        """Switch to another LLM: the old one is closed, the loop is rebuilt for the
        new one at the next prompt (a new chat: a conversation lives on one site)."""
        check_llm_spec(self.config, spec)
        if self.loop is not None and self.loop.running:
            raise ConfigError("a run is going on: stop it before switching the LLM")
        old, self.llm = self.llm, None
        task, self._llm_start = self._llm_start, None
        if task is not None and not task.done():
            task.cancel()
        self.loop = None
        self.llm_spec = spec
        self._default_judge_for(spec)
        if old is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(old.close(), 10)

    def _default_judge_for(self, spec: str) -> None:
        """A judge nobody chose follows the LLM: the same chat for a chat site, off for a
        replay or an API model; a ``[run] judge`` or a recipe's judge is kept as chosen."""
        if self.judge_choice or self.config.run.judge:
            return
        from verifybot_tui.core.verify.verification import default_judge
        from verifybot_tui.llm.verification_setup import llm_kind

        self.verification.judge = default_judge(llm_kind(self.config, spec))

    def api_config(self) -> LLMConfig | None:
        """The current LLM's table when it is an API provider (openai, anthropic)."""
        cfg = self.config.llm.get(self.llm_spec)
        return cfg if cfg is not None and cfg.kind in API_KINDS else None

    def make_llm(self) -> LLMBackend:
        if self.llm is None:
            from verifybot_tui.llm import make_llm  # the browser import is the slow one

            llm = make_llm(self.config, self.llm_spec, self.workspace)
            llm.on_state(lambda state: self._llm_state(llm.name, state))
            self.llm = llm
        return self.llm

    def _llm_state(self, name: str, state: str) -> None:
        profile = self._profiles.get(self.llm_spec)
        if profile is not None and state in ("idle", "streaming", "thinking", "sent"):
            profile.started = True  # a start succeeded: the profile is the user's now
        self.on_backend_state("llm", name, state)

    def _watch_profile(self) -> None:
        """Note whether the browser LLM's profile exists before anything starts on it."""
        cfg = self.config.llm.get(self.llm_spec)
        if cfg is not None and cfg.kind == "browser" and self.llm_spec not in self._profiles:
            from verifybot_tui.llm.browser.first_start import NewProfile

            self._profiles[self.llm_spec] = NewProfile(cfg)

    def discard_new_profiles(self) -> None:
        """What a failed start made of a profile that was not there before goes again:
        no half-made profile that `doctor` would take for a used one."""
        for profile in self._profiles.values():
            with contextlib.suppress(OSError):
                profile.discard()

    def make_target(self, name: str) -> Target:
        target = self.targets.get(name)
        if target is None:
            from verifybot_tui.targets import make_target

            target = make_target(self.config, name, self.workspace, prompter=self.prompter)
            target.on_state(lambda state: self.on_backend_state("target", name, state))
            self.targets[name] = target
        return target

    async def start_llm(self) -> LLMBackend:
        """Start the backend once; concurrent callers share the one start. One that cannot
        work here (a visible browser and no display) is refused before it runs:
        first_start.LLMNotReady, with what to do."""
        check_start(self.config, self.llm_spec)
        self._watch_profile()
        llm = self.make_llm()
        return await self._shared("_llm_start", llm.start, llm)

    async def connect(self, name: str) -> Target:
        """Connect and probe a target once at a time; a failed try can be repeated."""
        task = self._connecting.get(name)
        if task is None or (task.done() and (task.cancelled() or task.exception() is not None
                                             or self.targets[name].state != "connected")):
            async def go() -> Target:
                target = await self.prepare_target(name)
                await target.connect()
                await target.probe()
                return target
            task = asyncio.ensure_future(go())
            self._connecting[name] = task
        return await asyncio.shield(task)

    async def prepare_target(self, name: str) -> Target:
        """The target, built once its files from others are approved: an mcu target's
        board file that sets commands is asked about before it is even read for use."""
        if name not in self.targets:
            await self.approve_files(self.files_to_trust(name))
        return self.make_target(name)

    def files_to_trust(self, name: str) -> list[trust.FileToTrust]:
        """The board files of an mcu target that set commands nobody approved yet."""
        from verifybot_tui.targets.mcu.boards import target_board_files

        return target_board_files(self.config, name)

    async def approve_files(self, files: list[trust.FileToTrust]) -> None:
        """Approve ``files`` that set commands (asked in the app's dialog, or --trust), or
        raise trust.RefusedFile (the user said no) / trust.UntrustedFile (nobody to ask).

        One question per content at a time: a connect and a run that need the same
        board file wait for the one answer."""
        todo = trust.once_per_content(files)
        if not todo:
            return
        if self.ask_trust is None:
            raise trust.UntrustedFile(todo, TRUST_HOW)
        key = frozenset(f.digest for f in todo)
        task = self._asking.get(key)
        if task is None or task.done():
            task = asyncio.ensure_future(self._ask(self.ask_trust, todo))
            self._asking[key] = task
        if not await asyncio.shield(task):
            raise trust.RefusedFile(todo, TRUST_HOW)

    async def _ask(self, ask: Callable[[list[trust.FileToTrust]], Awaitable[bool]],
                   todo: list[trust.FileToTrust]) -> bool:
        yes = await ask(todo)
        if yes:
            for f in todo:
                trust.approve(f)
        return yes

    async def _shared(self, attr: str, start: Callable[[], Awaitable[None]], value: T) -> T:
        task: asyncio.Task[None] | None = getattr(self, attr)
        if task is None or (task.done() and (task.cancelled() or task.exception())):
            task = asyncio.ensure_future(start())
            setattr(self, attr, task)
        await asyncio.shield(task)
        return value

    def stop_loop(self) -> str:
        """Stop the running loop, as Ctrl+C does in ``run``: the first call stops the
        program's tree (TERM, a grace period, KILL); a second one while that is still
        going on KILLs every local program's tree at once, so a program that ignores
        TERM is not waited for. Returns "stopping", "killed" or "idle"."""
        if self.loop is None or not self.loop.running:
            return "idle"
        if self.stopping:
            from verifybot_tui.targets.containment.tree import kill_all_now

            kill_all_now()
            return "killed"
        self.stopping = True
        self.loop.stop()
        return "stopping"

    def ensure_loop(self) -> VerifyLoop:
        """The loop, built on first use; later calls follow the current target."""
        llm = self.make_llm()
        target = self.make_target(self.target_name)
        if self.loop is None:
            from verifybot_tui.core.loop.verify_loop import VerifyLoop  # after the first frame

            self.loop = VerifyLoop(config=self.config, llm=llm, target=target,
                                   history=self.history, review_feedback=self.review_feedback,
                                   auto_accept=self.auto_accept, workspace=self.workspace,
                                   verification=self.verification)
        elif self.loop.target is not target:
            self.loop.set_target(target)
        return self.loop

    def use_recipe(self, recipe: Recipe) -> None:
        """A recipe's criteria, sanity switch, judge and build become this session's.

        Its auto_accept is the screen's to apply (the status bar shows it).
        """
        self.judge_choice = recipe.resolve(recipe.judge) or None
        v = build_verification(self.config, llm_spec=self.llm_spec,
                               judge=self.judge_choice, workspace=self.workspace,
                               sanity=recipe.sanity)
        v.criteria = list(recipe.criteria)
        v.compiler, v.flags = recipe.compiler, list(recipe.flags)
        old = self.verification
        self.verification = v
        if self.loop is not None:
            self.loop.set_verification(v)
        if old.judge_llm is not None:
            asyncio.ensure_future(old.judge_llm.close())

    def set_auto_accept(self, on: bool) -> None:
        self.auto_accept = on
        if self.loop is not None:
            self.loop.auto_accept = on

    def set_review_feedback(self, on: bool) -> None:
        self.review_feedback = on
        if self.loop is not None:
            self.loop.review_feedback = on

    def use_target(self, name: str) -> None:
        """Make ``name`` current: the loop runs on it from its next attempt (a target not
        built yet is built, its files from others asked about, when a run needs it)."""
        self.target_name = name
        target = self.targets.get(name)
        if self.loop is not None and target is not None:
            self.loop.set_target(target)

    async def close(self) -> None:
        if self.loop is not None and self.loop.running:
            self.loop.stop()
        for task in [self._llm_start, *self._connecting.values(), *self._asking.values()]:
            if task is not None and not task.done():
                task.cancel()
        closers = [t.close() for t in self.targets.values()]
        if self.llm is not None:
            closers.append(self.llm.close())
        if self.verification.judge_llm is not None:
            closers.append(self.verification.judge_llm.close())
        for coro in closers:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(coro, 10)
        self.discard_new_profiles()  # the browsers are closed: nothing holds them now
        self.history.close()


# -- the first start anywhere -------------------------------------------------------------
# With no config and no display the default LLM (a chat site in a visible browser) cannot
# start: the app says so before Chromium runs (a failed Chromium leaves a half-made
# profile), names the config file to put ``headless = true`` in by its full path, and the
# offline replay to try the whole loop now. A logged-out site gets the same calm notice
# with ``verifybot login``.

EXAMPLE = Path("examples") / "word_count.md"


class LLMNotReady(LLMError):
    """The LLM cannot start here as configured; nothing was started. ``state`` is what
    the status bar shows for it."""

    def __init__(self, message: str, state: str) -> None:
        super().__init__(message)
        self.state = state


def config_file(config: Config) -> Path:
    """The config file a fix goes into: the one read, else where the app would read one."""
    return (config.path or user_config_dir() / "config.toml").expanduser().resolve()


def command() -> str:
    """`verifybot` as the user can type it again: the bare name when that is what the
    shell finds, else the path this app was started by (``.venv/bin/verifybot``)."""
    started = sys.argv[0] if sys.argv and sys.argv[0].endswith("verifybot") else ""
    on_path = shutil.which("verifybot")
    if not started or (on_path and Path(on_path).resolve() == Path(started).resolve()):
        return "verifybot"
    return started


def offline_example(cwd: Path | None = None) -> str:
    """The recorded example to replay, as the user can type it from here."""
    here = (cwd or Path.cwd()).resolve()
    if (here / EXAMPLE).is_file():
        return str(EXAMPLE)
    clone = Path(__file__).resolve().parents[2] / EXAMPLE  # an editable install's clone
    return str(clone) if clone.is_file() else str(EXAMPLE)


def no_display_notice(config: Config, name: str, why: str) -> str:
    """A visible browser cannot open: the fix here, the fix elsewhere, the offline try."""
    path = config_file(config)
    where = "in" if path.is_file() else "in a new file"
    return (f"{name} logs in through a visible browser window, and this terminal has no "
            f"display ({why}): nothing was started.\n"
            f"• To use {name} here: add headless = true under [llm.{name}] {where} {path} "
            f"(its profile needs a login: `{command()} login --llm {name}` where there is a "
            "display)\n"
            f"• To try VerifyBot offline now: {command()} --llm replay:{offline_example()}")


def logged_out_notice(config: Config, name: str, can_show_window: bool) -> str:
    """The site asks for a login: the one command, and the offline try meanwhile."""
    if can_show_window:
        fix = f"run `{command()} login --llm {name}` (a window opens; log in there)"
    else:
        fix = (f"run `{command()} login --llm {name}` where there is a display, then use that "
               f"profile here ([llm.{name}] profile_dir in {config_file(config)})")
    return (f"{name} is not logged in: {fix}, then send the prompt again.\n"
            f"• To try VerifyBot offline meanwhile: {command()} --llm replay:{offline_example()}")


def check_start(config: Config, spec: str) -> None:
    """Raise LLMNotReady when ``spec`` cannot start here (before anything is started)."""
    cfg = config.llm.get(spec)
    if cfg is None:  # a replay: nothing to open
        return
    from verifybot_tui.llm.browser.first_start import cannot_open

    why = cannot_open(cfg)
    if why:
        raise LLMNotReady(no_display_notice(config, spec, why), "no_display")


@dataclass
class Notice:
    title: str
    text: str
    severity: Literal["information", "warning", "error"]
    timeout: float
    state: str = ""  # the LLM state the status bar shows, when the notice sets one


def not_ready_notice(config: Config, name: str, error: BaseException, llm_state: str,
                     kept: bool = False) -> Notice:
    """What the app says when the LLM cannot answer: calm, with the command that fixes
    it, when that is known (no display, not logged in); else the error as it came.
    ``kept``: a prompt was refused and put back in the prompt box."""
    if isinstance(error, LLMNotReady):
        title = f"{name} cannot start here" + (" (your prompt is kept in the box)"
                                              if kept else "")
        return Notice(title, str(error), "warning", 60, error.state)
    if llm_state == "logged_out":
        from verifybot_tui.llm.browser.first_start import needs_display

        return Notice(f"{name}: log in first",
                      logged_out_notice(config, name, not needs_display()), "warning", 60)
    return Notice("LLM not ready", one_line(str(error)), "error", 15)
