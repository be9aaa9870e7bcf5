"""``memory.*`` methods: show the long-term memory, and approve or reject staged edits.

Background reviews may only *add* memory entries; the replacements and
removals they want wait as proposals until a person decides here (or with
``hermes memory``). The files are shared with the sessions' memory tool
through the store's file lock (``hermes.memory``).
"""

from __future__ import annotations

from typing import Any

from hermes import codec
from hermes.daemon.errors import RequestError
from hermes.memory import KINDS, MemoryStore, MemoryStoreError

from .params import Method, Params


def memory_methods(store: MemoryStore | None) -> dict[str, Method]:
    """The method table entries (each refuses clearly when memory is disabled)."""

    def need() -> MemoryStore:
        if store is None:
            raise RequestError(
                "memory is disabled in this daemon ([memory] enabled = false)", "unavailable"
            )
        return store

    async def show(p: Params) -> Any:
        p.done()
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

    async def pending(p: Params) -> Any:
        p.done()
        return codec.to_plain(need().proposals())

    async def approve(p: Params) -> Any:
        proposal = p.text("proposal")
        p.done()
        return codec.to_plain(_checked(lambda: need().approve(proposal)))

    async def reject(p: Params) -> Any:
        proposal = p.text("proposal")
        p.done()
        return codec.to_plain(_checked(lambda: need().reject(proposal)))

    return {
        "memory.show": show,
        "memory.pending": pending,
        "memory.approve": approve,
        "memory.reject": reject,
    }


def _checked(action: Any) -> Any:
    try:
        return action()
    except MemoryStoreError as error:
        raise RequestError(str(error), error.reason) from None
