"""``Bell``: a one-shot signal that cancels the scopes hung on it, without a task.

A turn's interrupt and its batch's redirect are signals many waits must end
on: a foreground command waiting for its process, a ``process wait``, a
command that may move to the background. With a ``trio.Event`` each such wait
needs a watcher task (``await event.wait(); scope.cancel()``): a spawn, a
nursery and two scheduler passes, for a signal that almost never comes. A
bell is rung by its owner, and ringing it cancels every scope hung on it at
that moment, synchronously (``cancelled_by``); a scope hung on a bell that has
already rung is cancelled at once. It keeps ``trio.Event``'s ``set``,
``is_set`` and ``wait``, so a bell stands wherever an event was read.
"""

from __future__ import annotations

from types import TracebackType

import trio


class Bell:
    """A one-shot signal (see the module docstring); ``set`` rings it."""

    __slots__ = ("_event", "_scopes")

    def __init__(self) -> None:
        self._event = trio.Event()
        self._scopes: set[trio.CancelScope] = set()
        """Scopes hung on the bell now; each is cancelled when it rings."""

    def set(self) -> None:
        """Ring it: every scope hung on it is cancelled (later rings change nothing)."""
        if self._event.is_set():
            return
        self._event.set()
        for scope in tuple(self._scopes):
            scope.cancel()

    def is_set(self) -> bool:
        """Whether it has rung."""
        return self._event.is_set()

    async def wait(self) -> None:
        """Return once it has rung."""
        await self._event.wait()


class HungScope:
    """``cancelled_by``'s context manager: ``scope`` entered, hung on ``bells`` meanwhile."""

    __slots__ = ("_bells", "_scope")

    def __init__(self, scope: trio.CancelScope, bells: tuple[Bell, ...]) -> None:
        self._scope = scope
        self._bells = bells

    def __enter__(self) -> trio.CancelScope:
        scope = self._scope
        for bell in self._bells:
            if bell.is_set():
                scope.cancel()
            bell._scopes.add(scope)
        return scope.__enter__()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> bool:
        for bell in self._bells:
            bell._scopes.discard(self._scope)
        return self._scope.__exit__(kind, error, trace)


def cancelled_by(scope: trio.CancelScope, *bells: Bell | None) -> HungScope:
    """Enter ``scope``; while it is entered a ring of any of ``bells`` cancels it (one
    that has rung already cancels it at once). ``None`` bells are ignored."""
    return HungScope(scope, tuple(bell for bell in bells if bell is not None))


__all__ = ["Bell", "HungScope", "cancelled_by"]
