"""The install step: what the program imports and the target lacks, installed after asking.

Installing runs outside the sandbox, so it has a consent of its own (a
``PermissionNeeded`` question, or the user's standing --install). A name that only
looks like a package (a URL, a path) is never given to pip. A package.json's
dependencies go through npm the same way (node_step). The result is the python the
run should use: the workspace's virtual environment on that target once it has one.
"""

from __future__ import annotations

from verifybot_tui.core.answers.deps import not_an_index_name, requirements, wanted_packages
from verifybot_tui.core.answers.extract import Extraction
from verifybot_tui.core.base.errors import TargetError, VerifyBotError
from verifybot_tui.core.base.offload import in_thread
from verifybot_tui.core.base.ports import ProgramFile, Target
from verifybot_tui.core.loop.events import Notice, Output, PermissionNeeded
from verifybot_tui.core.loop.node_step import install_node_packages
from verifybot_tui.core.loop.steps.state import LoopState


async def install_missing(loop: LoopState, target: Target, files: list[ProgramFile],
                          ex: Extraction) -> str | None:
    """Install what the program imports and the target lacks (asking first); its python."""
    await _node_packages(loop, target, files)
    python = loop.pythons.get(target.name)
    if not any(f.language == "python" for f in files):
        return python
    listed, notes = requirements(files)
    for note in notes:
        loop.emit(Notice(note, "warning"))
    wanted = await in_thread(wanted_packages, files, [*ex.dependencies, *listed],
                             loop.tree.ever)
    for name in [p for p in wanted if not_an_index_name(p)]:
        del wanted[name]  # pip would take it for what it looks like: never given to pip
        loop.emit(Notice(f"not installing {name!r}: it looks like "
                         f"{not_an_index_name(name)}, and only package names from the "
                         "index are installed", "warning"))
        loop.recorder.dependencies(f"refused: {name} ({not_an_index_name(name)})")
    if not wanted:
        return python
    missing_mods = set(await target.missing_modules(sorted(set(wanted.values())), python))
    packages = sorted(p for p, m in wanted.items() if m in missing_mods)
    if not packages:
        return python
    question = (f"The program needs {', '.join(packages)}, not installed on {target.name}. "
                f"Install into the workspace's virtual environment there?")
    ok = loop.auto_install or await loop.wait(
        lambda fut: PermissionNeeded(question, packages, fut))
    if not ok:
        loop.emit(Notice(f"not installing {', '.join(packages)}: the run will likely fail",
                         "warning"))
        loop.recorder.dependencies(f"declined: {', '.join(packages)}")
        return python
    return await _install(loop, target, packages, python)


async def _node_packages(loop: LoopState, target: Target, files: list[ProgramFile]) -> None:
    """A package.json's dependencies, installed with npm (asking first, as for pip)."""
    async def ask(question: str, specs: list[str]) -> bool:
        return loop.auto_install or await loop.wait(
            lambda fut: PermissionNeeded(question, specs, fut))

    await install_node_packages(target, files, ask=ask, emit=loop.emit,
                                record=loop.recorder.dependencies)


async def _install(loop: LoopState, target: Target, packages: list[str],
                   python: str | None) -> str | None:
    loop.emit(Notice(f"installing {', '.join(packages)} on {target.name}"))
    try:
        python = await target.install(packages, lambda s, t: loop.emit(Output(s, t)))
    except TargetError:
        raise
    except VerifyBotError as e:
        loop.emit(Notice(f"installing failed: {e}", "error"))
        loop.recorder.dependencies(f"install of {', '.join(packages)} failed: {e}")
        return python
    loop.pythons[target.name] = python
    loop.recorder.dependencies(f"installed: {', '.join(packages)} ({python})")
    return python
