"""Errors of the memory stores: each message is written for the model or the person to act on.

Every error derives from ``MemoryStoreError`` (not the builtin ``MemoryError``)
and carries a short machine ``reason`` that the tool copies into its result
details. Nothing is written when one of these is raised.
"""

from __future__ import annotations

from pathlib import Path


class MemoryStoreError(Exception):
    """Base of every memory error; ``str(exc)`` is the full, actionable message."""

    reason = "memory_error"


class InvalidEntry(MemoryStoreError):
    """The text cannot be an entry (empty, not encodable, contains a separator line)."""

    reason = "invalid_entry"


class UnsafeEntry(InvalidEntry):
    """The text matches the threat scan (injection, exfiltration, invisible Unicode)."""

    reason = "unsafe_entry"


class MemoryFull(MemoryStoreError):
    """The write would take the store over its character cap."""

    reason = "memory_full"


class NoMatch(MemoryStoreError):
    """No entry contains the given text."""

    reason = "no_match"


class AmbiguousMatch(MemoryStoreError):
    """More than one entry contains the given text."""

    reason = "ambiguous_match"


class DuplicateEntry(MemoryStoreError):
    """A replacement would make the entry identical to another one."""

    reason = "duplicate_entry"


class MemoryUnreadable(MemoryStoreError):
    """A store file exists but cannot be read or decoded; writes to it are refused."""

    reason = "unreadable"

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(
            f"{path} exists but cannot be read ({problem}). Refusing to write it so its "
            "contents are not lost; a person must fix or move the file."
        )


class MemoryLocked(MemoryStoreError):
    """Another process held the memory lock for longer than the wait bound."""

    reason = "locked"

    def __init__(self, path: Path, waited: float) -> None:
        self.path = path
        self.waited = waited
        super().__init__(
            f"Memory is busy: another process holds the lock {path} (waited {waited:.1f} s). "
            "Nothing was written; try again."
        )


class ProposalNotFound(MemoryStoreError):
    """No pending proposal has this id."""

    reason = "proposal_not_found"


class StaleProposal(MemoryStoreError):
    """The proposal no longer applies to the current files; it stays pending."""

    reason = "stale_proposal"


class TooManyProposals(MemoryStoreError):
    """The pending list is at its bound."""

    reason = "too_many_proposals"


class DraftClosed(MemoryStoreError):
    """The review draft was already committed."""

    reason = "draft_closed"
