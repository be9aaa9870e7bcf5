"""The import rules of the project's layers, checked on the source.

Dependencies point one way (hermes -> supervisors -> actors -> trio), and only a
package's ``__init__`` is public: no module outside ``actors/`` or ``supervisors/``
imports one of their underscored modules.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> Iterator[str]:
    """Every absolute module name a file imports (relative imports resolved)."""
    package = list(path.relative_to(ROOT).parts[:-1])
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def sources(*packages: str) -> Iterator[Path]:
    for package in packages:
        yield from sorted((ROOT / package).rglob("*.py"))


def test_the_runtime_imports_nothing_above_it() -> None:
    above = {
        "actors": ("supervisors", "hermes", "bench"),
        "supervisors": ("hermes", "bench"),
    }
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for package, forbidden in above.items()
        for path in sources(package)
        for module in imported_modules(path)
        if module.split(".")[0] in forbidden
    ]
    assert wrong == []


def test_nothing_outside_the_runtime_imports_its_private_modules() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sources("hermes", "bench")
        for module in imported_modules(path)
        if module.split(".")[0] in ("actors", "supervisors")
        and any(part.startswith("_") for part in module.split(".")[1:2])
    ]
    assert wrong == []


def test_the_runtime_modules_are_private() -> None:
    public = [
        str(path.relative_to(ROOT))
        for path in sources("actors", "supervisors")
        if path.parent.name in ("actors", "supervisors") and not path.name.startswith("_")
    ]
    assert public == []


def hermes_node(module: str) -> str | None:
    """The part of ``hermes`` a module name belongs to: a subpackage, a top-level
    module (``text``, ``procgroup``...), or None outside ``hermes``."""
    names = module.split(".")
    if names[0] != "hermes" or len(names) < 2:
        return None
    if (ROOT / "hermes" / names[1]).is_dir() or (ROOT / "hermes" / f"{names[1]}.py").is_file():
        return names[1]
    return None  # a name imported from hermes/__init__


def subpackage_edges() -> dict[str, set[str]]:
    """Which part of hermes (subpackage or top-level module) imports which: every
    import statement counts, at module level or inside a function, a class or an
    ``if TYPE_CHECKING:`` block, so no late import hides a cycle."""
    edges: dict[str, set[str]] = {}
    for path in sources("hermes"):
        parts = path.relative_to(ROOT / "hermes").parts
        source = parts[0] if len(parts) > 1 else path.stem
        for module in imported_modules(path):
            target = hermes_node(module)
            if target is not None and target != source:
                edges.setdefault(source, set()).add(target)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)


def test_imports_inside_functions_are_counted() -> None:
    """The walk sees a late import (the old check's blind spot for cycles)."""
    source = ROOT / "hermes" / "tools" / "builtin" / "__init__.py"
    tree = ast.parse(source.read_text())
    late = [
        node
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    assert late, "default_registry imports the process tool late"
    assert "hermes.tools.builtin.process_tool.ProcessTool" in set(imported_modules(source))
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_inside_hermes() -> None:
    """Subpackages and top-level modules of hermes import each other one way only
    (issue 22, item 4: tools and processes, gateway and daemon were such pairs)."""
    assert cycles(subpackage_edges()) == []


BASE_MODULES = ("files.py", "paths.py", "procgroup.py", "text.py")
"""Top-level modules every subpackage may use: they import none of them."""


def test_the_base_modules_import_no_hermes_subpackage() -> None:
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in (ROOT / "hermes" / name for name in BASE_MODULES)
        for module in imported_modules(path)
        if module.startswith("hermes.") and (ROOT / "hermes" / module.split(".")[1]).is_dir()
    ]
    assert wrong == []
