"""``MemoryService``: what the memory tool writes through, live or drafted.

The tool finds its backend with ``ctx.service(MemoryService)``. Two
implementations exist:

- ``LiveMemory`` (here) writes the store at once; for a session a person is
  attending.
- ``MemoryDraft`` (``draft.py``) collects a background review's writes in
  memory and stages replace/remove as proposals.

``ToolContext.service`` checks ``isinstance``, so this is an ABC, and the
context maps the ABC itself to the instance:
``services={MemoryService: LiveMemory(store)}``.
"""

from __future__ import annotations

import abc

from .entries import MemoryChange, MemoryKind
from .proposals import Proposal
from .store import MemoryStore

SAVED_NOTE = (
    "Saved. It will be in the system prompt from the next session on (this session "
    "keeps the snapshot it started with until its context is next compacted)."
)


class MemoryService(abc.ABC):
    """A memory backend for the tool. Every method raises ``MemoryStoreError`` on refusal."""

    @property
    @abc.abstractmethod
    def saved_note(self) -> str:
        """What the tool tells the model after a write was applied (when it takes effect)."""

    @abc.abstractmethod
    def add(self, kind: MemoryKind | str, text: str) -> MemoryChange:
        """Add an entry."""

    @abc.abstractmethod
    def replace(self, kind: MemoryKind | str, match: str, text: str) -> MemoryChange | Proposal:
        """Replace the entry ``match`` selects: applied (a change) or staged (a proposal)."""

    @abc.abstractmethod
    def remove(self, kind: MemoryKind | str, match: str) -> MemoryChange | Proposal:
        """Remove the entry ``match`` selects: applied or staged."""

    @abc.abstractmethod
    def entries(self, kind: MemoryKind | str) -> list[str]:
        """The entries as this backend sees them."""

    @abc.abstractmethod
    def usage(self, kind: MemoryKind | str) -> tuple[int, int]:
        """``(characters used, cap)`` as this backend sees them."""


class LiveMemory(MemoryService):
    """Writes straight to a ``MemoryStore``: every call is one locked, atomic write."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    @property
    def saved_note(self) -> str:
        return SAVED_NOTE

    def add(self, kind: MemoryKind | str, text: str) -> MemoryChange:
        return self.store.add(kind, text)

    def replace(self, kind: MemoryKind | str, match: str, text: str) -> MemoryChange:
        return self.store.replace(kind, match, text)

    def remove(self, kind: MemoryKind | str, match: str) -> MemoryChange:
        return self.store.remove(kind, match)

    def entries(self, kind: MemoryKind | str) -> list[str]:
        return self.store.entries(kind)

    def usage(self, kind: MemoryKind | str) -> tuple[int, int]:
        return self.store.usage(kind)
