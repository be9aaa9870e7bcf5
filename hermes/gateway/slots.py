"""Connection slots: who may hold a connection open, and how many.

- A connection that has not presented the token yet holds a *handshake* slot.
  Each listener kind (TCP, the unix socket) has its own pool of
  ``max_unauthenticated``; when a pool is full, its oldest handshake is
  dropped to make room, so idle connections cannot keep a client with the
  token out (it sends its head at once and is through before it is oldest).
- Once the token checks out the connection moves to an *authenticated* slot:
  at most ``max_connections`` in all, plus ``owner_reserve`` more that only
  unix-socket connections (the owner's uid, checked by peer credentials) may
  use.
"""

from __future__ import annotations

from collections import OrderedDict

import trio


class Slots:
    """The gateway's connection pools (one per gateway incarnation)."""

    def __init__(self, max_unauthenticated: int, max_connections: int, owner_reserve: int) -> None:
        self.max_unauthenticated = max_unauthenticated
        self.max_connections = max_connections
        self.owner_reserve = owner_reserve
        self._handshakes: dict[bool, OrderedDict[int, trio.CancelScope]] = {
            False: OrderedDict(),
            True: OrderedDict(),
        }
        self._authenticated: set[int] = set()
        self.dropped = 0
        """Handshakes dropped to make room for newer ones."""

    @property
    def handshaking(self) -> int:
        return sum(len(pool) for pool in self._handshakes.values())

    @property
    def authenticated(self) -> int:
        return len(self._authenticated)

    def admit(self, conn: int, scope: trio.CancelScope, unix: bool) -> None:
        """Give ``conn`` a handshake slot; the oldest handshake of the pool is cancelled
        (its ``scope``) if the pool is full."""
        pool = self._handshakes[unix]
        while len(pool) >= self.max_unauthenticated:
            _, oldest = pool.popitem(last=False)
            oldest.cancel()
            self.dropped += 1
        pool[conn] = scope

    def authenticate(self, conn: int, unix: bool) -> bool:
        """Move ``conn`` to an authenticated slot; False (and no slot) if none is free."""
        self._handshakes[unix].pop(conn, None)
        limit = self.max_connections + (self.owner_reserve if unix else 0)
        if len(self._authenticated) >= limit:
            return False
        self._authenticated.add(conn)
        return True

    def release(self, conn: int) -> None:
        """``conn`` has ended: free whatever slot it held."""
        for pool in self._handshakes.values():
            pool.pop(conn, None)
        self._authenticated.discard(conn)
