"""Long-term memory: MEMORY.md (agent notes) and USER.md (user profile), and the memory tool.

Two small stores of plain-text entries in one directory (the daemon uses
``<data_dir>/memories``), as in Hermes: entries joined by ``"\\n§\\n"``, capped
in characters (2,200 and 1,375 by default). Every write holds a flock on the
directory's ``.lock``, verifies that the file it replaces could be read, and
replaces it atomically. ``docs/memory.md`` has the full rules.

| module | one job |
|---|---|
| ``errors.py`` | ``MemoryStoreError`` and its subclasses, with actionable messages |
| ``files.py`` | the flock, verified reads, atomic writes |
| ``entries.py`` | one store's entries: parsing, caps, unique-substring matching |
| ``proposals.py`` | ``Proposal`` and ``pending.json`` |
| ``store.py`` | ``MemoryStore``: reads, locked writes, snapshot, proposals lifecycle |
| ``service.py`` | ``MemoryService`` (the tool's backend) and ``LiveMemory`` |
| ``draft.py`` | ``MemoryDraft``: a background review's writes, committed in one step |
| ``tool.py`` | ``MemoryTool``: the ``memory`` tool |

Use::

    store = MemoryStore(data_dir / "memories")
    prompt_tail = store.snapshot()                 # once, at session start
    ctx = ToolContext.create(cwd, spill, services={MemoryService: LiveMemory(store)})

    draft = MemoryDraft(store)                     # a background review
    review_ctx = ToolContext.create(cwd, spill, services={MemoryService: draft})
    report = draft.commit(origin=session_id)       # only if the review finished
"""

from .draft import DRAFT_NOTE, CommitReport, MemoryDraft, Skipped
from .entries import (
    ENTRY_DELIMITER,
    FILE_NAMES,
    KINDS,
    Entries,
    MemoryChange,
    MemoryKind,
    MemoryLimits,
    check_kind,
)
from .errors import (
    AmbiguousMatch,
    DraftClosed,
    DuplicateEntry,
    InvalidEntry,
    MemoryFull,
    MemoryLocked,
    MemoryStoreError,
    MemoryUnreadable,
    NoMatch,
    ProposalNotFound,
    StaleProposal,
    TooManyProposals,
    UnsafeEntry,
)
from .proposals import MAX_PENDING, PENDING_FILE, Proposal, ProposalOp
from .service import SAVED_NOTE, LiveMemory, MemoryService
from .store import DEFAULT_LOCK_TIMEOUT, LOCK_FILE, MemoryStore, Transaction
from .tool import MemoryTool

__all__ = [
    "DEFAULT_LOCK_TIMEOUT",
    "DRAFT_NOTE",
    "ENTRY_DELIMITER",
    "FILE_NAMES",
    "KINDS",
    "LOCK_FILE",
    "MAX_PENDING",
    "PENDING_FILE",
    "SAVED_NOTE",
    "AmbiguousMatch",
    "CommitReport",
    "DraftClosed",
    "DuplicateEntry",
    "Entries",
    "InvalidEntry",
    "LiveMemory",
    "MemoryChange",
    "MemoryDraft",
    "MemoryFull",
    "MemoryKind",
    "MemoryLimits",
    "MemoryLocked",
    "MemoryService",
    "MemoryStore",
    "MemoryStoreError",
    "MemoryTool",
    "MemoryUnreadable",
    "NoMatch",
    "Proposal",
    "ProposalNotFound",
    "ProposalOp",
    "Skipped",
    "StaleProposal",
    "TooManyProposals",
    "Transaction",
    "UnsafeEntry",
    "check_kind",
]
