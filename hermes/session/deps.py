"""What a session works with besides its settings: collaborators shared by many sessions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

from hermes.memory import MemoryStore
from hermes.model import ModelClient
from hermes.processes import HandoffTarget, ProcessConfig
from hermes.store import StoreClient
from hermes.tools import AllowlistSaver, ToolRegistry

if TYPE_CHECKING:
    from .children import ChildHost


@attrs.frozen(slots=True, kw_only=True)
class SessionDeps:
    """A session's collaborators (shared by many sessions)."""

    store: StoreClient
    client: ModelClient
    registry: ToolRegistry
    environ: Mapping[str, str] | None = None
    """Environment the tools' children start from (default: the daemon's), minus secrets."""
    allowlist: frozenset[str] = frozenset()
    """Dangerous-command keys approved *always* (from the config)."""
    allowlist_source: Callable[[], frozenset[str]] | None = None
    """The config file's allowlist as it is now (re-read when it changes)."""
    save_always: AllowlistSaver | None = None
    """Writes keys approved *always* to the config file."""
    processes: ProcessConfig = attrs.field(factory=ProcessConfig)
    """Limits of each session's background-process registry."""
    subagents: ChildHost | None = None
    """Hosts this session's subagents (``hermes.subagents``); None: it cannot delegate."""
    handoff: HandoffTarget | None = None
    """A subagent's parent: where the ``process`` tool's ``handoff`` moves a process."""
    memory: MemoryStore | None = None
    """Long-term memory: its snapshot goes into the system prompt, the ``memory`` tool
    writes it, the background reviewer drafts into it. None: no memory."""
