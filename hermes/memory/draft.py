"""``MemoryDraft``: one background review's memory writes, held in memory until commit.

The unattended reviewer may add entries but only *propose* replacements and
removals. The draft is an overlay over a ``MemoryStore``:

- ``add`` applies to the draft's copy of the store, cap-checked against it;
- ``replace``/``remove`` are validated against the draft (so the model gets
  the same precise error as live) and recorded as staged ``Proposal``s; they
  do not change the draft, so they free no space;
- ``commit(origin)`` applies every add and records every proposal in one
  locked transaction, re-validated against the files as they are then. An add
  that no longer fits (or a proposal that no longer applies) is reported in
  the ``CommitReport``, never half-written.

An *attended* draft (a review the person asked for with ``/refine``, seed
#274) applies ``replace`` and ``remove`` to its copy too (so they free
space) and its commit writes them, in the order made, with the adds: each
edit names the whole entry it changed, so an entry changed meanwhile by
another session is skipped, not overwritten. Every add and replacement is
threat-scanned twice, as drafted and as written (``Entries``).

Nothing is written before ``commit``: a review that is cancelled never
commits and leaves no trace. A draft commits once.
"""

from __future__ import annotations

from typing import Literal

import attrs

from .entries import FILE_NAMES, Entries, MemoryChange, MemoryKind, check_kind, preview
from .errors import DraftClosed, MemoryFull, MemoryStoreError, NoMatch, TooManyProposals
from .proposals import Proposal, ProposalOp, new_proposal, validate_edit
from .service import MemoryService
from .store import MemoryStore

DRAFT_NOTE = (
    "Kept in this review's draft: it is saved when the review completes and is in the "
    "system prompt from the next session on."
)


@attrs.frozen(slots=True)
class Skipped:
    """A drafted write that commit did not carry out, and why."""

    op: Literal["add", "replace", "remove"]
    kind: MemoryKind
    text: str
    """The entry text of an add, the match of a proposal."""
    reason: str


@attrs.frozen(slots=True)
class CommitReport:
    """What a draft's commit wrote and staged, and what it left out."""

    added: tuple[MemoryChange, ...] = ()
    proposed: tuple[Proposal, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    edited: tuple[MemoryChange, ...] = ()
    """Replacements and removals written (an attended draft's only)."""

    def summary(self) -> str:
        """A few lines for the person or the log; ``"No memory changes."`` when empty."""
        lines = [change.describe() for change in (*self.added, *self.edited)]
        lines += [f"Proposed (awaiting approval): {p.describe()}" for p in self.proposed]
        lines += [
            f"Not saved ({s.op} {FILE_NAMES[s.kind]} {preview(s.text)}): {s.reason}"
            for s in self.skipped
        ]
        return "\n".join(lines) or "No memory changes."


@attrs.frozen(slots=True)
class _Write:
    """A write an attended draft made: the add's text, or the edit's whole old entry."""

    op: Literal["add", "replace", "remove"]
    kind: MemoryKind
    text: str
    new: str | None = None


class MemoryDraft(MemoryService):
    """An in-memory overlay over ``store`` for one background review; ``attended``: the
    person asked for it (``/refine``), so its replacements and removals are written."""

    def __init__(self, store: MemoryStore, *, attended: bool = False) -> None:
        self.store = store
        self.attended = attended
        self._books: dict[MemoryKind, Entries] = {}
        self._writes: list[_Write] = []
        self._staged: list[Proposal] = []
        self._committed = False

    @property
    def saved_note(self) -> str:
        return DRAFT_NOTE

    @property
    def adds(self) -> tuple[tuple[MemoryKind, str], ...]:
        """The drafted adds, in order: ``(kind, entry text)``."""
        return tuple((w.kind, w.text) for w in self._writes if w.op == "add")

    @property
    def staged(self) -> tuple[Proposal, ...]:
        """The drafted proposals, in order (their ``origin`` is set at commit)."""
        return tuple(self._staged)

    @property
    def committed(self) -> bool:
        return self._committed

    def entries(self, kind: MemoryKind | str) -> list[str]:
        return list(self._book(kind).items)

    def usage(self, kind: MemoryKind | str) -> tuple[int, int]:
        book = self._book(kind)
        return book.used(), book.cap

    def add(self, kind: MemoryKind | str, text: str) -> MemoryChange:
        book = self._book(kind)
        try:
            change = book.add(text)
        except MemoryFull as exc:
            if self.attended:
                raise
            raise MemoryFull(
                f"{exc} (In this review, replacements and removals are only proposals for a "
                "person to approve, so they free no space now.)"
            ) from None
        if change.changed:
            self._writes.append(_Write("add", book.kind, change.new or ""))
        return change

    def replace(self, kind: MemoryKind | str, match: str, text: str) -> Proposal | MemoryChange:
        if self.attended:
            return self._edit("replace", kind, match, text)
        return self._stage("replace", kind, match, text)

    def remove(self, kind: MemoryKind | str, match: str) -> Proposal | MemoryChange:
        if self.attended:
            return self._edit("remove", kind, match, None)
        return self._stage("remove", kind, match, None)

    def commit(self, origin: str) -> CommitReport:
        """Write the adds and stage the proposals in one locked step; see the module docstring.

        Raises ``DraftClosed`` on a second commit and ``MemoryLocked`` when the
        lock cannot be had (the draft stays uncommitted and may be committed again).
        """
        self._check_open()
        if not self._writes and not self._staged:
            self._committed = True
            return CommitReport()
        added: list[MemoryChange] = []
        edited: list[MemoryChange] = []
        proposed: list[Proposal] = []
        skipped: list[Skipped] = []
        with self.store.transaction() as txn:
            for write in self._writes:
                kind, text = write.kind, write.text
                book = txn.entries(kind)
                try:
                    if write.op == "add":
                        change = book.add(text)
                    elif write.op == "replace":
                        change = book.replace(_exactly(book, text), write.new or "")
                    else:
                        change = book.remove(_exactly(book, text))
                except MemoryStoreError as exc:
                    skipped.append(Skipped(write.op, kind, text, str(exc)))
                    continue
                if change.changed:
                    (added if write.op == "add" else edited).append(change)
                else:
                    skipped.append(Skipped(write.op, kind, text, f"already in {FILE_NAMES[kind]}"))
            for proposal in self._staged:
                try:
                    proposed.append(txn.stage(attrs.evolve(proposal, origin=origin)))
                except MemoryStoreError as exc:
                    skipped.append(Skipped(proposal.op, proposal.kind, proposal.match, str(exc)))
        self._committed = True
        return CommitReport(tuple(added), tuple(proposed), tuple(skipped), tuple(edited))

    def _book(self, kind: MemoryKind | str) -> Entries:
        self._check_open()
        k = check_kind(kind)
        if k not in self._books:
            self._books[k] = self.store.load(k)
        return self._books[k]

    def _edit(
        self, op: ProposalOp, kind: MemoryKind | str, match: str, text: str | None
    ) -> MemoryChange:
        """An attended edit: applied to the draft's copy, written at commit."""
        book = self._book(kind)
        # A replacement's text is threat-scanned here (Entries.replace -> clean_entry).
        change = book.replace(match, text or "") if op == "replace" else book.remove(match)
        if change.changed:
            self._writes.append(_Write(op, book.kind, change.old or "", change.new))
        return change

    def _stage(
        self, op: ProposalOp, kind: MemoryKind | str, match: str, text: str | None
    ) -> Proposal:
        book = self._book(kind)
        change = validate_edit(book, op, match, text)
        proposal = new_proposal(op, book.kind, match.strip(), change.new, change.old or "", "")
        for existing in self._staged:
            if existing.same_edit(proposal):
                return existing
        waiting = len(self.store.proposals()) + len(self._staged)
        if waiting >= self.store.max_pending:
            raise TooManyProposals(
                f"{waiting} memory proposals are already waiting for approval (the limit is "
                f"{self.store.max_pending}); nothing more can be staged in this review."
            )
        self._staged.append(proposal)
        return proposal

    def _check_open(self) -> None:
        if self._committed:
            raise DraftClosed("This review's memory draft was already committed.")


def _exactly(book: Entries, entry: str) -> str:
    """``entry`` as a match that selects that whole entry only: ``NoMatch`` when the file no
    longer holds it (another session changed it since the review read it)."""
    if entry not in book.items:
        raise NoMatch(
            f"{book.file_name} no longer has the entry {preview(entry)} (it changed since "
            "the review read it); left as it is."
        )
    return entry
