"""Staged replace/remove proposals and their file, ``pending.json``.

An unattended background review may add entries but not change or delete
them: those edits become ``Proposal``s that wait for a person. The file is
``{"version": 1, "proposals": [...]}``, each proposal a flat object with the
fields of ``Proposal``; a file that does not have that shape is reported as
unreadable (and never overwritten), like a store file.
"""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path
from typing import Any, Literal

import attrs

from .entries import FILE_NAMES, Entries, MemoryChange, MemoryKind, check_kind, preview
from .errors import InvalidEntry, MemoryUnreadable

ProposalOp = Literal["replace", "remove"]

PENDING_FILE = "pending.json"
MAX_PENDING = 50
"""Default bound of the pending list; proposing beyond it is refused."""

_VERSION = 1


@attrs.frozen(slots=True)
class Proposal:
    """A replace or remove waiting for a person's approval.

    ``match`` selects the entry as in ``replace``/``remove``; ``entry`` is the
    entry it selected when proposed (for showing the person); ``text`` is the
    replacement (``None`` for a remove); ``origin`` says who proposed it (a
    session id); ``created_at`` is wall-clock Unix time.
    """

    id: str
    op: ProposalOp
    kind: MemoryKind
    match: str
    text: str | None
    entry: str
    origin: str
    created_at: float

    def same_edit(self, other: Proposal) -> bool:
        """Whether ``other`` asks for the same edit (ids, origins and times aside)."""
        return (self.op, self.kind, self.match, self.text) == (
            other.op,
            other.kind,
            other.match,
            other.text,
        )

    def summary(self) -> str:
        """The edit without the id: ``replace in MEMORY.md: 'old' -> 'new'``."""
        name = FILE_NAMES[self.kind]
        if self.op == "replace":
            return f"replace in {name}: {preview(self.entry)} -> {preview(self.text or '')}"
        return f"remove from {name}: {preview(self.entry)}"

    def describe(self) -> str:
        """One line for the person: ``mp-1a2b3c4d replace in MEMORY.md: 'old' -> 'new'``."""
        return f"{self.id} {self.summary()}"


def new_proposal(
    op: ProposalOp, kind: MemoryKind, match: str, text: str | None, entry: str, origin: str
) -> Proposal:
    """A proposal with a fresh ``mp-<8 hex>`` id, stamped now."""
    return Proposal(
        id=f"mp-{secrets.token_hex(4)}",
        op=op,
        kind=kind,
        match=match,
        text=text,
        entry=entry,
        origin=origin,
        created_at=time.time(),
    )


def validate_edit(entries: Entries, op: ProposalOp, match: str, text: str | None) -> MemoryChange:
    """What the edit would do to ``entries`` now (``entries`` is left unchanged).

    Raises the error the edit would raise if applied, and ``InvalidEntry`` for
    a replace that changes nothing or lacks its text.
    """
    trial = entries.copy()
    if op == "replace":
        if text is None:
            raise InvalidEntry("A replace needs the new text of the entry. Nothing changed.")
        change = trial.replace(match, text)
        if not change.changed:
            raise InvalidEntry(
                f"The entry in {entries.file_name} already reads {preview(change.new or '')}; "
                "there is nothing to propose."
            )
        return change
    return trial.remove(match)


def encode(proposals: list[Proposal]) -> str:
    items = [attrs.asdict(p) for p in proposals]
    return json.dumps({"version": _VERSION, "proposals": items}, ensure_ascii=False, indent=1)


def decode(path: Path, text: str | None) -> list[Proposal]:
    """The proposals in ``pending.json``'s text; ``MemoryUnreadable`` when malformed."""
    if text is None or not text.strip():
        return []
    try:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("version") != _VERSION:
            raise ValueError(f"expected an object with version {_VERSION}")
        items = data.get("proposals")
        if not isinstance(items, list):
            raise ValueError("'proposals' is not a list")
        return [_proposal(item) for item in items]
    except ValueError as exc:  # json.JSONDecodeError is a ValueError
        raise MemoryUnreadable(path, f"malformed pending list: {exc}") from None


def _proposal(item: Any) -> Proposal:
    if not isinstance(item, dict):
        raise ValueError("a proposal is not an object")
    fields = {f.name for f in attrs.fields(Proposal)}
    if set(item) != fields:
        raise ValueError(f"a proposal has fields {sorted(item)}, expected {sorted(fields)}")
    op = item["op"]
    if op not in ("replace", "remove"):
        raise ValueError(f"unknown proposal op {op!r}")
    for name in ("id", "match", "entry", "origin"):
        if not isinstance(item[name], str):
            raise ValueError(f"proposal field {name!r} is not a string")
    text = item["text"]
    if not (text is None or isinstance(text, str)) or (op == "replace") != isinstance(text, str):
        raise ValueError("proposal field 'text' does not fit its op")
    created = item["created_at"]
    if isinstance(created, bool) or not isinstance(created, int | float):
        raise ValueError("proposal field 'created_at' is not a number")
    if item["kind"] not in ("memory", "user"):
        raise ValueError(f"unknown memory store {item['kind']!r}")
    kind = check_kind(item["kind"])
    return Proposal(
        id=item["id"],
        op="replace" if op == "replace" else "remove",
        kind=kind,
        match=item["match"],
        text=text,
        entry=item["entry"],
        origin=item["origin"],
        created_at=float(created),
    )
