"""``TailCache``: where each session's transcript ended after this connection's appends.

An append must know the transcript's end to validate the new messages (the
role of the last one, its open tool uses) and the session's row (its length,
whether it ended). Reading them is three statements of the eight an append
runs, and with the event loop's other work in between they run cold: about a
third of an append's CPU (``python -m bench session``). The store is the
database's only writer, so what its last append to a session left is known
without reading: the ``Tail`` that validating that append produced.

An entry is used only through a guarded claim (``queries.append_messages``):
one ``UPDATE`` of the session row that succeeds only while the row still has
the entry's length and has not ended, else the append reads everything as
before. Entries change only when a transaction commits (``stage`` then
``commit``); ``forget`` drops a session's entry before any other write to it
(a rewrite, a truncation, a compaction keep or change its length), and any
failure drops them all.
"""

from __future__ import annotations

from .validate import Tail

DEFAULT_SIZE = 4096
"""Sessions remembered (the least recently appended to are dropped first)."""


class TailCache:
    """Session id -> the ``Tail`` its last committed append left (see the module doc)."""

    __slots__ = ("_staged", "_tails", "size")

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.size = size
        self._tails: dict[str, Tail] = {}
        self._staged: dict[str, Tail] = {}

    def __len__(self) -> int:
        return len(self._tails)

    def lookup(self, session_id: str) -> Tail | None:
        return self._tails.get(session_id)

    def stage(self, session_id: str, tail: Tail) -> None:
        """Remember ``tail`` once the current transaction commits."""
        self._staged[session_id] = tail

    def commit(self) -> None:
        """The transaction committed: its staged tails become entries."""
        if not self._staged:
            return
        tails = self._tails
        for session_id, tail in self._staged.items():
            tails.pop(session_id, None)  # re-insert: most recently used last
            tails[session_id] = tail
        self._staged.clear()
        while len(tails) > self.size:
            del tails[next(iter(tails))]

    def forget(self, session_id: str | None) -> None:
        """Before another write to ``session_id`` (``None``: to any session)."""
        if session_id is None:
            self.clear()
            return
        self._tails.pop(session_id, None)
        self._staged.pop(session_id, None)

    def clear(self) -> None:
        """After a failure: trust nothing remembered or staged."""
        self._tails.clear()
        self._staged.clear()
