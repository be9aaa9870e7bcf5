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


KNOWN_CYCLES = {
    frozenset({"daemon", "gateway"}),  # the gateway uses the manager's client and errors
}
"""Pairs of hermes subpackages that still import each other (issue 22, item 4): the
list may only shrink; a new pair fails the test below."""


def subpackage_edges() -> dict[str, set[str]]:
    """Which hermes subpackage imports which (function-level imports included)."""
    edges: dict[str, set[str]] = {}
    for path in sources("hermes"):
        parts = path.relative_to(ROOT / "hermes").parts
        if len(parts) < 2:
            continue  # a top-level module
        for module in imported_modules(path):
            names = module.split(".")
            if (
                names[0] == "hermes"
                and len(names) > 1
                and names[1] != parts[0]
                and (ROOT / "hermes" / names[1]).is_dir()
            ):
                edges.setdefault(parts[0], set()).add(names[1])
    return edges


def test_no_new_import_cycle_between_hermes_subpackages() -> None:
    edges = subpackage_edges()
    pairs = {
        frozenset({a, b}) for a, targets in edges.items() for b in targets if a in edges.get(b, ())
    }
    assert pairs - KNOWN_CYCLES == set()
    assert KNOWN_CYCLES - pairs == set(), "a known cycle is gone: take it off KNOWN_CYCLES"


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
