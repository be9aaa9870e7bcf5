"""``HandleWorker``: a worker session over a ``SessionHandle``, with an inactivity limit.

Each turn's deadline is pushed out by every event of the session (as a cron
run's, seed #186); past it the turn ends ``timeout``. ``close`` is what the
opener gave (the daemon closes through its sessions manager).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import trio

from hermes.session import SessionHandle, TurnEnd

from .worker import Reply

TURN_CALL_LIMIT = 10 * 365 * 86400.0


class HandleWorker:
    def __init__(
        self,
        session_id: str,
        handle: SessionHandle,
        close: Callable[[str], Awaitable[None]],
        timeout: float,
    ) -> None:
        self.session_id = session_id
        self.handle = handle
        self._close = close
        self.timeout = timeout

    async def turn(self, text: str) -> Reply:
        scope = trio.CancelScope()

        def push() -> None:
            if self.timeout > 0:
                scope.deadline = trio.current_time() + self.timeout

        push()
        with self.handle.subscribe(capacity=256) as sub:
            async with trio.open_nursery() as nursery:

                async def watch() -> None:
                    async for _event in sub.receive:
                        push()

                nursery.start_soon(watch)
                with scope:
                    result = await self.handle.run(text, timeout=TURN_CALL_LIMIT)
                nursery.cancel_scope.cancel()
        if scope.cancelled_caught:
            return Reply("timeout", "", f"no activity for {self.timeout:g}s")
        ended = "completed" if result.reason is TurnEnd.COMPLETED else result.reason.value
        return Reply(ended, result.text, result.detail)

    async def close(self, reason: str) -> None:
        await self._close(reason)
