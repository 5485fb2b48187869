"""The import graph of the package has no circles and no private names crossing modules.

Two modules that import each other cannot be read, tested or moved one without the
other, and a circle that works today breaks the day someone moves an import to the
top of a file. An import inside a function counts as much as one at the top: it
is the same dependency, only later. What two modules share belongs in a module below
both. A name with a leading underscore is its module's own business; a module that
needs it from another is asking for something that should be public, or moved.
"""

from __future__ import annotations

import ast
from pathlib import Path

from project import PACKAGE, ROOT


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
            if "__pycache__" not in p.parts}


def _absolute(name: str, level: int, here: str, is_package: bool) -> str:
    if not level:
        return name
    base = here.split(".") if is_package else here.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def _imports(modules: dict[str, Path]) -> dict[str, set[tuple[str, str]]]:
    """For each module: (module imported, name taken from it or "") for every import
    statement anywhere in it, resolved to the package's own modules."""
    found: dict[str, set[tuple[str, str]]] = {}
    for here, path in modules.items():
        is_package = path.name == "__init__.py"
        edges: set[tuple[str, str]] = set()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {(a.name, "") for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(node.module or "", node.level, here, is_package)
                for alias in node.names:
                    child = f"{source}.{alias.name}"
                    if child in modules:  # `from package import module`
                        edges.add((child, ""))
                    elif source in modules:
                        edges.add((source, alias.name))
        found[here] = {(m, n) for m, n in edges if m != here}
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.append(member)
                    if member == node:
                        break
                if len(part) > 1:
                    circles.append(sorted(part))
    return circles


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    # A package's __init__ that gathers its children is not a circle with them: the
    # edge from a child up to its own package's __init__ is where Python starts anyway.
    return {m: {t for t, _ in edges if not m.startswith(t + ".")}
            for m, edges in _imports(modules).items()}


def test_the_check_sees_the_imports() -> None:
    graph = _graph()
    assert "verifybot_tui.core.loop.verify_loop" in graph
    assert any(t.startswith("verifybot_tui.core.") for t in
               graph["verifybot_tui.core.loop.verify_loop"])


def test_the_check_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(graph) == [["a", "b", "c"]]


def test_no_module_imports_itself_back_through_others() -> None:
    assert _circles(_graph()) == []


def test_no_private_name_is_imported_from_another_module() -> None:
    crossing = sorted(f"{m} takes {name} from {source}"
                      for m, edges in _imports(_modules()).items()
                      for source, name in edges
                      if name.startswith("_") and not name.startswith("__"))
    assert crossing == []
