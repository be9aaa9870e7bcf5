"""The entry rules of one store, in memory: parsing, caps, unique-substring matching.

A store file is its entries joined by ``ENTRY_DELIMITER`` (``"\\n§\\n"``, as in
Hermes); the cap counts the characters of that joined text. ``Entries`` holds
one store's list and applies ``add``/``replace``/``remove`` with every rule,
raising a ``MemoryStoreError`` (and changing nothing) when a rule says no. It
knows nothing about files or locks; the store and the draft both use it.

Rules:

- Entry text is stripped. Empty text, text that is not encodable as UTF-8 and
  text with a line holding only ``§`` (it would split the entry) are refused.
- Adding an exact duplicate is a no-op reported with ``changed=False``.
- ``match`` selects the entry that contains it as a substring; it must select
  exactly one. An entry *equal* to ``match`` wins over entries that merely
  contain it.
- A write must keep the joined text within the cap. A replace that shrinks a
  store already over its cap (edited by hand) is allowed; a remove always is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import attrs

from hermes.checks import count
from hermes.skills import Blocked, BlockReport, blocked_notice, scan_text

from .errors import AmbiguousMatch, DuplicateEntry, InvalidEntry, MemoryFull, NoMatch, UnsafeEntry

ENTRY_DELIMITER = "\n§\n"
"""Separates entries in a store file (Hermes' ``ENTRY_DELIMITER``)."""

MemoryKind = Literal["memory", "user"]
"""Which store: ``memory`` (agent notes, MEMORY.md) or ``user`` (user profile, USER.md)."""

KINDS: tuple[MemoryKind, ...] = ("memory", "user")
FILE_NAMES: dict[MemoryKind, str] = {"memory": "MEMORY.md", "user": "USER.md"}
TITLES: dict[MemoryKind, str] = {"memory": "Agent notes", "user": "User profile"}

Op = Literal["add", "replace", "remove"]

_PREVIEW = 60


def check_kind(kind: str) -> MemoryKind:
    """``kind`` as a ``MemoryKind``; ``InvalidEntry`` naming the choices otherwise."""
    if kind == "memory":
        return "memory"
    if kind == "user":
        return "user"
    raise InvalidEntry(f"Unknown memory store {kind!r}; use 'memory' or 'user'.")


_positive = count("memory limits")


@attrs.frozen(slots=True)
class MemoryLimits:
    """Character caps of the two stores (Hermes' defaults)."""

    memory_chars: int = attrs.field(default=2200, validator=_positive)
    user_chars: int = attrs.field(default=1375, validator=_positive)

    def cap(self, kind: MemoryKind) -> int:
        return self.memory_chars if kind == "memory" else self.user_chars


@attrs.frozen(slots=True)
class MemoryChange:
    """What one applied write did, and the store's usage after it.

    ``old`` is the entry replaced or removed, ``new`` the entry added or written;
    ``changed`` is False for a no-op (an exact duplicate add, a replace with the
    same text).
    """

    op: Op
    kind: MemoryKind
    old: str | None
    new: str | None
    used: int
    cap: int
    changed: bool = True

    @property
    def file_name(self) -> str:
        return FILE_NAMES[self.kind]

    @property
    def usage_text(self) -> str:
        """``"1,034/2,200 chars"``."""
        return usage_text(self.used, self.cap)

    def describe(self) -> str:
        """One sentence for the model or the person: what happened to which entry."""
        name = self.file_name
        if not self.changed:
            if self.op == "add":
                return f"This exact entry is already in {name}; nothing changed."
            return f"The entry in {name} already has this text; nothing changed."
        if self.op == "add":
            return f"Added to {name}: {preview(self.new or '')}."
        if self.op == "replace":
            return f"Replaced in {name}: {preview(self.old or '')} -> {preview(self.new or '')}."
        return f"Removed from {name}: {preview(self.old or '')}."


def usage_text(used: int, cap: int) -> str:
    return f"{used:,}/{cap:,} chars"


def preview(text: str, width: int = _PREVIEW) -> str:
    """``text`` on one line, quoted, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    return f"'{flat}'"


def parse(text: str) -> list[str]:
    """The entries of a store file: split on the delimiter, stripped, empties dropped."""
    return [e.strip() for e in text.split(ENTRY_DELIMITER) if e.strip()]


def render(entries: Iterable[str]) -> str:
    return ENTRY_DELIMITER.join(entries)


def clean_entry(text: str) -> str:
    """``text`` stripped; ``InvalidEntry`` when it cannot be an entry."""
    entry = text.strip()
    if not entry:
        raise InvalidEntry("The entry is empty; give the text to save. Nothing changed.")
    try:
        entry.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidEntry(
            "The entry is not valid Unicode text (it has unpaired surrogates). Nothing changed."
        ) from None
    if any(line.strip() == "§" for line in entry.splitlines()):
        raise InvalidEntry(
            "The entry has a line holding only '§', which separates entries in the file; "
            "remove that line. Nothing changed."
        )
    scan = scan_text(entry)
    if scan.blocked:  # seed #142: memory goes into every prompt; refuse with the first hit
        raise UnsafeEntry(
            f"The entry was refused by the threat scan: {scan.reason()}. Memory goes into "
            "every future system prompt, so it must not carry instructions like that. "
            "Nothing changed."
        )
    return entry


def prompt_items(
    items: list[str], file_name: str, report: BlockReport | None = None, path: str = ""
) -> list[str]:
    """``items`` as the system prompt shows them: an entry the scan blocks becomes a
    ``[BLOCKED: ...]`` note (the file keeps it, so the person can see and remove it);
    ``report`` is told of each (``path``: the file's)."""
    shown = []
    for number, item in enumerate(items, 1):
        scan = scan_text(item)
        if not scan.blocked:
            shown.append(item)
            continue
        label = f"entry {number} of {file_name}"
        notice = blocked_notice(label, scan)
        shown.append(notice)
        if report is not None:
            report(Blocked(f"memory {label}", path or file_name, scan.reason(), notice, "blocked"))
    return shown


@attrs.define(slots=True)
class Entries:
    """One store's entries and cap, with the write rules (see the module docstring)."""

    kind: MemoryKind
    cap: int
    items: list[str] = attrs.field(factory=list)

    @classmethod
    def from_text(cls, kind: MemoryKind, cap: int, text: str | None) -> Entries:
        return cls(kind, cap, parse(text) if text else [])

    @property
    def file_name(self) -> str:
        return FILE_NAMES[self.kind]

    def text(self) -> str:
        return render(self.items)

    def used(self) -> int:
        return _joined_len(self.items)

    def copy(self) -> Entries:
        return Entries(self.kind, self.cap, list(self.items))

    def add(self, text: str) -> MemoryChange:
        entry = clean_entry(text)
        if entry in self.items:
            return self._change("add", None, entry, changed=False)
        used = self.used()
        needs = len(entry) + (len(ENTRY_DELIMITER) if self.items else 0)
        if len(entry) > self.cap:
            raise MemoryFull(
                f"The entry is {len(entry):,} characters; {self.file_name} holds at most "
                f"{self.cap:,}. Shorten it. Nothing changed."
            )
        if used + needs > self.cap:
            raise MemoryFull(
                f"{self.file_name} is full: {used:,} of {self.cap:,} characters used; this "
                f"entry needs {needs:,}. Replace or remove entries first."
            )
        self.items.append(entry)
        return self._change("add", None, entry)

    def replace(self, match: str, text: str) -> MemoryChange:
        index = self.find(match)
        entry = clean_entry(text)
        old = self.items[index]
        if entry == old:
            return self._change("replace", old, entry, changed=False)
        if entry in self.items:
            raise DuplicateEntry(
                f"Another entry in {self.file_name} already reads {preview(entry)}; remove "
                f"the entry matching {preview(match)} instead. Nothing changed."
            )
        used = self.used()
        after = used - len(old) + len(entry)
        if after > self.cap and after > used:
            raise MemoryFull(
                f"{self.file_name} is full: {used:,} of {self.cap:,} characters used; this "
                f"replacement needs {len(entry) - len(old):,} more. Shorten it, or remove "
                "entries first."
            )
        self.items[index] = entry
        return self._change("replace", old, entry)

    def remove(self, match: str) -> MemoryChange:
        index = self.find(match)
        old = self.items.pop(index)
        return self._change("remove", old, None)

    def find(self, match: str) -> int:
        """The index of the one entry ``match`` selects; ``NoMatch``/``AmbiguousMatch``."""
        needle = match.strip()
        if not needle:
            raise NoMatch(
                "old_text is empty; give a short unique part of the entry to change. "
                "Nothing changed."
            )
        exact = [i for i, e in enumerate(self.items) if e == needle]
        if len(exact) == 1:
            return exact[0]
        hits = [i for i, e in enumerate(self.items) if needle in e]
        if not hits:
            raise NoMatch(
                f"No entry in {self.file_name} contains {preview(needle)}. Nothing changed."
            )
        if len(hits) > 1:
            shown = "; ".join(preview(self.items[i], 40) for i in hits[:5])
            more = f" and {len(hits) - 5} more" if len(hits) > 5 else ""
            raise AmbiguousMatch(
                f"{len(hits)} entries in {self.file_name} contain {preview(needle)}: "
                f"{shown}{more}. Give a longer part of one entry so exactly one matches. "
                "Nothing changed."
            )
        return hits[0]

    def _change(
        self, op: Op, old: str | None, new: str | None, *, changed: bool = True
    ) -> MemoryChange:
        return MemoryChange(op, self.kind, old, new, self.used(), self.cap, changed)


def _joined_len(items: list[str]) -> int:
    if not items:
        return 0
    return sum(len(e) for e in items) + len(ENTRY_DELIMITER) * (len(items) - 1)
