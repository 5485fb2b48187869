"""The loop's npm step: a package.json's dependencies installed before the run.

Kept beside the loop rather than in it: the loop gives the question (the same
PermissionNeeded as for pip, or the user's standing consent), its notices and the
recorder's line; this module decides what is asked and what the target does.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from verifybot_tui.core.answers.deps import node_packages
from verifybot_tui.core.base.errors import TargetError, VerifyBotError
from verifybot_tui.core.base.ports import InstallsNodePackages, ProgramFile, Target
from verifybot_tui.core.loop.events import Event, Notice, Output

Ask = Callable[[str, list[str]], Awaitable[bool]]


async def install_node_packages(target: Target, files: list[ProgramFile], *, ask: Ask,
                                emit: Callable[[Event], None],
                                record: Callable[[str], None]) -> None:
    """Install what the project's package.json names and the target lacks (asking first)."""
    wanted, notes = node_packages(files)
    for note in notes:
        emit(Notice(note, "warning"))
    if not wanted:
        return
    if not isinstance(target, InstallsNodePackages):
        emit(Notice(f"{target.name} cannot install npm packages: install "
                    f"{', '.join(wanted)} there yourself", "warning"))
        return
    specs = [wanted[n] for n in await target.missing_node_packages(list(wanted))]
    if not specs:
        return
    question = (f"package.json needs {', '.join(specs)}, not installed on {target.name}. "
                "Install them with npm (its install scripts not run) for the workspace's runs?")
    if not await ask(question, specs):
        emit(Notice(f"not installing {', '.join(specs)}: the run will likely fail", "warning"))
        record(f"npm declined: {', '.join(specs)}")
        return
    emit(Notice(f"installing {', '.join(specs)} with npm on {target.name}"))
    try:
        await target.install_node_packages(specs, lambda s, t: emit(Output(s, t)))
    except TargetError:
        raise
    except VerifyBotError as e:
        emit(Notice(f"installing failed: {e}", "error"))
        record(f"npm install of {', '.join(specs)} failed: {e}")
        return
    record(f"installed with npm: {', '.join(specs)}")
