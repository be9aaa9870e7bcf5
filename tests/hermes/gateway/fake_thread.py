"""A scripted fake provider served from a thread of the test process (its own trio loop).

A daemon subprocess started with ``ANTHROPIC_API_KEY`` and ``model.base_url``
pointing here talks to it like to Claude: tests script tool calls the demo
model never makes (background processes, dangerous commands, floods).
"""

from __future__ import annotations

import threading
from types import TracebackType

import trio

from hermes.fake import FakeProvider


class ThreadedFake:
    def __init__(self, provider: FakeProvider) -> None:
        self.provider = provider
        self._token: trio.lowlevel.TrioToken | None = None
        self._scope: trio.CancelScope | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        return self.provider.base_url

    def __enter__(self) -> ThreadedFake:
        ready = threading.Event()

        async def main() -> None:
            async with trio.open_nursery() as nursery:
                await nursery.start(self.provider.serve, "127.0.0.1", 0)
                self._token = trio.lowlevel.current_trio_token()
                self._scope = nursery.cancel_scope
                ready.set()

        self._thread = threading.Thread(target=trio.run, args=(main,), daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fake provider did not start")
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._token is not None and self._scope is not None:
            scope = self._scope
            trio.from_thread.run_sync(scope.cancel, trio_token=self._token)
        if self._thread is not None:
            self._thread.join(10)
