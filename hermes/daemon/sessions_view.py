"""``SessionsView``: the running sessions, readable without a call to the manager.

Every gateway method that names a session looks it up first. Through the
manager's mailbox that is two scheduler passes (the manager wakes, then the
caller) before the real work starts, and every lookup of every client queues
behind whatever the manager is doing, such as resuming a session from the store.
With a hundred busy sessions a pass takes a few milliseconds, so those two passes
were a large share of a cancel's latency.

So the manager shares a read-only view of the sessions it runs. The pattern is
Erlang's ETS table: shared reads under the owner's rules, with the owner keeping
the table's life. The manager attaches its own lookup while it runs and detaches
it when it stops, so a restarted manager is attached again.

The manager's status (``daemon.status``: its model and how many sessions run) is
read the same way, so a status probe never waits behind the manager's work either.

The view answers only for a session that is running. Anything else goes through
the manager's mailbox, which resumes a session that is not running and reports an
unknown or closed one. A lookup races with a concurrent close on either path, and
the session's own errors report that case.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .manager_api import Entry

EntryOf = Callable[[str], "Entry | None"]
StatusOf = Callable[[], "dict[str, Any]"]


class SessionsView:
    """The running sessions' entries, as the attached manager sees them now."""

    __slots__ = ("_entry_of", "_status_of")

    def __init__(self) -> None:
        self._entry_of: EntryOf | None = None
        self._status_of: StatusOf | None = None

    def attach(self, entry_of: EntryOf, status_of: StatusOf | None = None) -> None:
        """Called by the manager as it starts: ``entry_of`` answers for running sessions,
        ``status_of`` with the manager's status."""
        self._entry_of = entry_of
        self._status_of = status_of

    def detach(self, entry_of: EntryOf) -> None:
        """Called by the manager as it stops (a newer manager's lookup is left alone)."""
        if self._entry_of == entry_of:
            self._entry_of = None
            self._status_of = None

    def running(self, session_id: str) -> Entry | None:
        """The entry of ``session_id`` if it is running now; None: ask the manager."""
        entry_of = self._entry_of
        return entry_of(session_id) if entry_of is not None else None

    def status(self) -> dict[str, Any] | None:
        """The attached manager's status now; None: ask the manager."""
        status_of = self._status_of
        return status_of() if status_of is not None else None
