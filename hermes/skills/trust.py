"""Trusting a project's skills: ``[skills] trusted_projects`` in the config file.

``hermes skills trust PROJECT`` adds the project's root (its git root, else
the directory) here, ``untrust`` removes it. Writes go through ``tomlkit`` (the
file keeps its comments and order), atomically (temporary file, ``fsync``,
``os.replace``) under an ``flock`` on a sidecar lock file; the file's mode is
kept (0600 for a new one). A running daemon reads the list when it starts.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable
from pathlib import Path
from typing import Any

import tomlkit

from hermes.files import replace_file

from .library import project_root

SECTION = "skills"
KEY = "trusted_projects"


class TrustError(Exception):
    """The config file could not be read or written (the message says which and why)."""


def trusted_projects(config_file: Path) -> list[str]:
    """The trusted project roots in ``config_file`` (empty without a file)."""
    if not config_file.exists():
        return []
    return [str(v) for v in _array(_load(config_file), create=False)]


def set_trust(config_file: Path, project: Path, trusted: bool) -> tuple[Path, bool]:
    """Trust (or stop trusting) ``project``'s root; (the root, whether the file changed)."""
    root = project_root(project)
    changed = False

    def change(doc: tomlkit.TOMLDocument) -> None:
        nonlocal changed
        array = _array(doc, create=trusted)
        present = [str(v) for v in array]
        if trusted and str(root) not in present:
            array.append(str(root))
            changed = True
        if not trusted:
            for index in range(len(array) - 1, -1, -1):
                if Path(str(array[index])).expanduser().resolve() == root:
                    del array[index]
                    changed = True

    _edit(config_file, change)
    return root, changed


def _load(path: Path) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TrustError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except Exception as exc:  # tomlkit's parse errors share no public base class
        raise TrustError(f"{path} is not valid TOML: {exc}") from exc


def _array(doc: tomlkit.TOMLDocument, *, create: bool) -> Any:
    table: Any = doc.get(SECTION)
    if table is None:
        if not create:
            return []
        table = tomlkit.table()
        doc.add(SECTION, table)
    elif not isinstance(table, dict):
        raise TrustError(f"'{SECTION}' in the config file is not a table")
    array: Any = table.get(KEY)
    if array is None:
        if not create:
            return []
        array = tomlkit.array()
        table.add(KEY, array)
    elif not isinstance(array, list):
        raise TrustError(f"[{SECTION}] {KEY} in the config file is not a list")
    return array


def _edit(path: Path, change: Callable[[tomlkit.TOMLDocument], None]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        doc = _load(path) if path.exists() else tomlkit.document()
        before = tomlkit.dumps(doc)
        change(doc)
        text = tomlkit.dumps(doc)
        if text == before:
            return
        replace_file(path, text)
