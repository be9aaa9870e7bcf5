"""``MemoryStore``: the two store files and the pending proposals in one directory.

Layout of the directory (created 0700 on the first write)::

    MEMORY.md      agent notes     (entries joined by "\\n§\\n", 0600)
    USER.md        user profile    (same format, 0600)
    pending.json   staged replace/remove proposals (0600)
    .lock          the flock every write holds

Reads (``entries``, ``usage``, ``snapshot``, ``proposals``) take no lock:
writes replace files atomically, so a reader sees a whole old or a whole new
file. Every write is one ``transaction()``: take the lock, read and verify the
files it touches, apply the change in memory, write back what changed with
``atomic_write``. A file that exists but cannot be read makes the write fail
with ``MemoryUnreadable`` before anything is written.

All methods are synchronous: the files are a few kilobytes, so they run in the
calling (trio) thread. Only lock contention with another process can make one
wait, at most ``lock_timeout`` seconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import attrs

from hermes.skills import BlockReport

from .entries import (
    FILE_NAMES,
    KINDS,
    TITLES,
    Entries,
    MemoryChange,
    MemoryKind,
    MemoryLimits,
    check_kind,
    prompt_items,
    render,
    usage_text,
)
from .errors import (
    AmbiguousMatch,
    DuplicateEntry,
    InvalidEntry,
    MemoryFull,
    MemoryUnreadable,
    NoMatch,
    ProposalNotFound,
    StaleProposal,
    TooManyProposals,
)
from .files import atomic_write, ensure_dir, locked, read_verified
from .proposals import (
    MAX_PENDING,
    PENDING_FILE,
    Proposal,
    ProposalOp,
    decode,
    encode,
    new_proposal,
    validate_edit,
)

LOCK_FILE = ".lock"
DEFAULT_LOCK_TIMEOUT = 2.0


class MemoryStore:
    """The long-term memory in ``directory`` (the daemon passes ``<data_dir>/memories``)."""

    def __init__(
        self,
        directory: Path | str,
        limits: MemoryLimits | None = None,
        *,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        max_pending: int = MAX_PENDING,
    ) -> None:
        if lock_timeout < 0:
            raise ValueError(f"lock_timeout must be >= 0, got {lock_timeout!r}")
        if max_pending <= 0:
            raise ValueError(f"max_pending must be > 0, got {max_pending!r}")
        self.directory = Path(directory)
        self.limits = limits or MemoryLimits()
        self.lock_timeout = lock_timeout
        self.max_pending = max_pending

    def __repr__(self) -> str:
        return f"MemoryStore({str(self.directory)!r})"

    # -- paths ----------------------------------------------------------------------------

    def path(self, kind: MemoryKind | str) -> Path:
        """The file of store ``kind`` (``MEMORY.md`` or ``USER.md``)."""
        return self.directory / FILE_NAMES[check_kind(kind)]

    @property
    def lock_path(self) -> Path:
        return self.directory / LOCK_FILE

    @property
    def pending_path(self) -> Path:
        return self.directory / PENDING_FILE

    # -- reads ----------------------------------------------------------------------------

    def load(self, kind: MemoryKind | str) -> Entries:
        """Store ``kind`` as read now (a copy: changing it changes nothing on disk)."""
        k = check_kind(kind)
        return Entries.from_text(k, self.limits.cap(k), read_verified(self.path(k)))

    def entries(self, kind: MemoryKind | str) -> list[str]:
        """The entries of store ``kind``, in file order."""
        return self.load(kind).items

    def usage(self, kind: MemoryKind | str) -> tuple[int, int]:
        """``(characters used, cap)`` of store ``kind``."""
        book = self.load(kind)
        return book.used(), book.cap

    def proposals(self) -> list[Proposal]:
        """The pending proposals, oldest first."""
        return decode(self.pending_path, read_verified(self.pending_path))

    def snapshot(self, report: BlockReport | None = None) -> str | None:
        """Both stores as system-prompt text, with headers and usage; ``None`` when both are empty.

        The session takes this at start and keeps it (the frozen snapshot) until
        its context is compacted: writes in between show up in the next session,
        or after the next compaction. A store that
        cannot be read is shown as such instead of failing the session. ``report`` is
        told of each entry the threat scan blocks.
        """
        sections: list[str] = []
        content = False
        for kind in KINDS:
            title, name = TITLES[kind], FILE_NAMES[kind]
            try:
                book = self.load(kind)
            except MemoryUnreadable as exc:
                sections.append(f"## {title} ({name}, unreadable)\n{exc}")
                content = True
                continue
            content = content or bool(book.items)
            header = f"## {title} ({name}, {usage_text(book.used(), book.cap)})"
            shown = render(prompt_items(book.items, name, report, str(self.path(kind))))
            sections.append(f"{header}\n{shown or '(empty)'}")
        return "\n\n".join(sections) if content else None

    # -- writes ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One locked read-modify-write step; changed files are written when the block ends.

        An exception in the block writes nothing. Never nest two transactions.
        """
        ensure_dir(self.directory)
        with locked(self.lock_path, self.lock_timeout):
            txn = Transaction(self)
            yield txn
            txn.flush()

    def add(self, kind: MemoryKind | str, text: str) -> MemoryChange:
        """Append an entry; an exact duplicate is a no-op (``changed=False``)."""
        with self.transaction() as txn:
            return txn.entries(kind).add(text)

    def replace(self, kind: MemoryKind | str, match: str, text: str) -> MemoryChange:
        """Replace the one entry containing ``match`` with ``text``."""
        with self.transaction() as txn:
            return txn.entries(kind).replace(match, text)

    def remove(self, kind: MemoryKind | str, match: str) -> MemoryChange:
        """Remove the one entry containing ``match``."""
        with self.transaction() as txn:
            return txn.entries(kind).remove(match)

    def propose(
        self,
        op: ProposalOp,
        kind: MemoryKind | str,
        match: str,
        text: str | None = None,
        origin: str = "",
    ) -> Proposal:
        """Stage a replace/remove for a person to approve; validated against the files now.

        Proposing an edit that is already pending returns the pending proposal.
        """
        proposal = new_proposal(op, check_kind(kind), match, text, "", origin)
        with self.transaction() as txn:
            return txn.stage(proposal)

    def approve(self, proposal_id: str) -> MemoryChange:
        """Apply a pending proposal with the normal rules and drop it from the pending list.

        A proposal that no longer applies (its entry changed or went away, or the
        replacement no longer fits) raises ``StaleProposal`` and stays pending.
        """
        with self.transaction() as txn:
            proposal = txn.pending_by_id(proposal_id)
            book = txn.entries(proposal.kind)
            try:
                if proposal.op == "replace":
                    change = book.replace(proposal.match, proposal.text or "")
                else:
                    change = book.remove(proposal.match)
            except (NoMatch, AmbiguousMatch, MemoryFull, DuplicateEntry, InvalidEntry) as exc:
                raise StaleProposal(
                    f"Proposal {proposal_id} no longer applies: {exc} It stays pending: "
                    "reject it, or make room and approve it again."
                ) from None
            txn.pending().remove(proposal)
            return change

    def reject(self, proposal_id: str) -> Proposal:
        """Drop a pending proposal without applying it; returns it."""
        with self.transaction() as txn:
            proposal = txn.pending_by_id(proposal_id)
            txn.pending().remove(proposal)
            return proposal


class Transaction:
    """The files one locked step has read; ``MemoryStore.transaction`` writes back the changes."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self._books: dict[MemoryKind, tuple[Entries, str]] = {}
        self._pending: tuple[list[Proposal], str] | None = None

    def entries(self, kind: MemoryKind | str) -> Entries:
        """Store ``kind`` as read under the lock; changes to it are written at the end."""
        k = check_kind(kind)
        if k not in self._books:
            book = self.store.load(k)
            self._books[k] = (book, book.text())
        return self._books[k][0]

    def pending(self) -> list[Proposal]:
        """The pending list as read under the lock; changes to it are written at the end."""
        if self._pending is None:
            items = self.store.proposals()
            self._pending = (items, encode(items))
        return self._pending[0]

    def pending_by_id(self, proposal_id: str) -> Proposal:
        for proposal in self.pending():
            if proposal.id == proposal_id:
                return proposal
        raise ProposalNotFound(
            f"No pending memory proposal {proposal_id!r}; it was approved, rejected or "
            "never existed."
        )

    def stage(self, proposal: Proposal) -> Proposal:
        """Validate ``proposal`` against the current entries and add it to the pending list.

        Returns the pending proposal: ``proposal`` with its text cleaned and its
        ``entry`` set, or an already pending one asking for the same edit.
        ``TooManyProposals`` when the list is full.
        """
        change = validate_edit(
            self.entries(proposal.kind), proposal.op, proposal.match, proposal.text
        )
        staged = attrs.evolve(
            proposal, match=proposal.match.strip(), text=change.new, entry=change.old or ""
        )
        pending = self.pending()
        for existing in pending:
            if existing.same_edit(staged):
                return existing
        if len(pending) >= self.store.max_pending:
            raise TooManyProposals(
                f"{len(pending)} memory proposals are already waiting for approval (the "
                f"limit is {self.store.max_pending}); a person must approve or reject some "
                "first. Nothing was staged."
            )
        pending.append(staged)
        return staged

    def flush(self) -> None:
        """Write every file whose content changed (store files first, then pending.json)."""
        for kind, (book, original) in self._books.items():
            text = book.text()
            if text != original:
                atomic_write(self.store.path(kind), text)
        if self._pending is not None:
            items, original = self._pending
            text = encode(items)
            if text != original:
                atomic_write(self.store.pending_path, text)
