"""The permanent command allowlist: ``[approvals] command_allowlist`` in the config file.

An approval answered *always* adds the command's finding keys
(``recursive_delete``...) here; ``hermes approvals list|revoke`` reads and
edits it; a hand edit takes effect at the next check (the file is re-read
when its size or modification time changes). Writes go through ``tomlkit``,
so the file keeps its comments, order and formatting, and are atomic: a
temporary file beside it, ``fsync``, ``os.replace``, under an ``flock`` on a
sidecar lock file so two writers never lose each other's keys. The file's mode
is kept (0600 for a new one).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import tomlkit
import trio

from hermes.files import replace_file

SECTION = "approvals"
KEY = "command_allowlist"


class AllowlistError(Exception):
    """The config file could not be read or written (the message says which and why)."""


@attrs.define(slots=True)
class AllowlistFile:
    """The allowlist of one config file (see the module docstring)."""

    path: Path
    _seen: tuple[int, int] | None = attrs.field(default=None, init=False)
    _keys: frozenset[str] = attrs.field(default=frozenset(), init=False)

    def current(self) -> frozenset[str]:
        """The keys now in the file (re-read only when it changed); empty without a file."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return frozenset()
        except OSError:
            return self._keys
        stamp = (info.st_size, info.st_mtime_ns)
        if stamp != self._seen:
            try:
                self._keys = frozenset(_keys_of(_load(self.path)))
            except AllowlistError:
                return self._keys  # a broken hand edit keeps what was read before
            self._seen = stamp
        return self._keys

    def add(self, keys: Iterable[str]) -> frozenset[str]:
        """Add ``keys`` (the ones not there yet); returns the keys added."""
        wanted = [k for k in dict.fromkeys(keys) if k]
        added: list[str] = []

        def change(doc: tomlkit.TOMLDocument) -> None:
            array = _array(doc)
            present = {str(item) for item in array}
            for key in wanted:
                if key not in present:
                    array.append(key)
                    added.append(key)

        self._edit(change)
        return frozenset(added)

    def revoke(self, keys: Iterable[str]) -> frozenset[str]:
        """Remove ``keys``; returns the ones that were there."""
        unwanted = set(keys)
        removed: list[str] = []

        def change(doc: tomlkit.TOMLDocument) -> None:
            array = _array(doc)
            for index in range(len(array) - 1, -1, -1):
                if str(array[index]) in unwanted:
                    removed.append(str(array[index]))
                    del array[index]

        self._edit(change)
        return frozenset(removed)

    async def save(self, keys: frozenset[str]) -> None:
        """The approval gate's ``AllowlistSaver``: ``add`` in a worker thread."""
        await trio.to_thread.run_sync(self.add, keys)

    def _edit(self, change: Any) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock_path = self.path.with_name(self.path.name + ".lock")
        with open(lock_path, "a") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            doc = _load(self.path) if self.path.exists() else tomlkit.document()
            before = tomlkit.dumps(doc)
            change(doc)
            text = tomlkit.dumps(doc)
            if text != before:
                replace_file(self.path, text)


def _load(path: Path) -> tomlkit.TOMLDocument:
    try:
        return tomlkit.parse(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AllowlistError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except Exception as exc:  # tomlkit's parse errors share no public base class
        raise AllowlistError(f"{path} is not valid TOML: {exc}") from exc


def _keys_of(doc: tomlkit.TOMLDocument) -> list[str]:
    table = doc.get(SECTION)
    if not isinstance(table, dict):
        return []
    value = table.get(KEY)
    if not isinstance(value, list):
        return []
    return [str(item) for item in value if isinstance(item, str)]


def _array(doc: tomlkit.TOMLDocument) -> Any:
    table: Any = doc.get(SECTION)
    if table is None:
        table = tomlkit.table()
        doc.add(SECTION, table)
    elif not isinstance(table, dict):
        raise AllowlistError(f"'{SECTION}' in the config file is not a table")
    array: Any = table.get(KEY)
    if array is None:
        array = tomlkit.array()
        table.add(KEY, array)
    elif not isinstance(array, list):
        raise AllowlistError(f"[{SECTION}] {KEY} in the config file is not a list")
    return array
