"""``memory.*`` methods: show the long-term memory, and approve or reject staged edits.

Background reviews may only *add* memory entries; the replacements and
removals they want wait as proposals until a person decides here (or with
``hermes memory``). The files are shared with the sessions' memory tool
through the store's file lock (``hermes.memory``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import trio

from hermes import codec
from hermes.daemon.errors import RequestError
from hermes.memory import KINDS, MemoryStore, MemoryStoreError

from .params import Method, Params

T = TypeVar("T")


def memory_methods(store: MemoryStore | None) -> dict[str, Method]:
    """The method table entries (each refuses clearly when memory is disabled)."""

    def need() -> MemoryStore:
        if store is None:
            raise RequestError(
                "memory is disabled in this daemon ([memory] enabled = false)", "unavailable"
            )
        return store

    def shown() -> dict[str, Any]:
        memory = need()
        out: dict[str, Any] = {}
        for kind in KINDS:
            used, cap = memory.usage(kind)
            out[kind] = {
                "file": str(memory.path(kind)),
                "entries": memory.entries(kind),
                "used": used,
                "cap": cap,
            }
        out["pending"] = len(memory.proposals())
        return out

    async def show(p: Params) -> Any:
        p.done()
        return await _checked(shown)

    async def pending(p: Params) -> Any:
        p.done()
        return codec.to_plain(await _checked(lambda: need().proposals()))

    async def approve(p: Params) -> Any:
        proposal = p.text("proposal")
        p.done()
        return codec.to_plain(await _checked(lambda: need().approve(proposal)))

    async def reject(p: Params) -> Any:
        proposal = p.text("proposal")
        p.done()
        return codec.to_plain(await _checked(lambda: need().reject(proposal)))

    return {
        "memory.show": show,
        "memory.pending": pending,
        "memory.approve": approve,
        "memory.reject": reject,
    }


async def _checked(action: Callable[[], T]) -> T:
    """Run ``action`` in a thread (a held file lock must not stall the daemon's loop);
    a refusal becomes a ``RequestError`` with the memory error's reason as its code."""
    try:
        return await trio.to_thread.run_sync(action)
    except MemoryStoreError as error:
        raise RequestError(str(error), error.reason) from None
