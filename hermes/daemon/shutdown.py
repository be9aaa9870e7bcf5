"""The daemon's shutdown phases, run by ``supervisors.run_application`` in order:

    stop-input      the gateway refuses new connections and requests (``shutting_down``)
    cancel-turns    every running session's turn and subagents cancelled (``CancelAll``)
    flush-stores    the event log written, then the store commits and checkpoints
    close-surfaces  WebSocket clients get ``daemon.stopping`` and 1001; HTTP connections end
    stop-runtime    (supervisors) the tree stops in reverse spec order

Each phase has its own timeout (``TIMEOUTS``; ``stop-runtime`` has
``daemon.shutdown_timeout``). What ran over or failed is logged, and written
with the rest of the report to ``shutdown.json`` in the runtime directory,
where ``hermes daemon stop`` reads it (``shutdown_report.py``).
"""

from __future__ import annotations

import math

from actors import ActorRef, ActorSystem
from hermes.store import Sync
from supervisors import Phase, Step

from .eventlog import FlushEvents
from .manager import CancelAll, ManagerClient
from .surface import CloseSurfaces, StopInput

REASON = "the daemon is stopping"
TIMEOUTS = {"stop-input": 2.0, "cancel-turns": 20.0, "flush-stores": 10.0, "close-surfaces": 5.0}
"""Seconds for each phase before ``stop-runtime``: cancel-turns covers a session's
cancel budget (``SESSION_SHUTDOWN``) with room; close-surfaces the gateway's grace."""


def daemon_phases(system: ActorSystem, root: ActorRef) -> list[Phase]:
    """The phases of ``root`` (the daemon's tree) as it is now; see the module docstring."""

    def at(name: str) -> ActorRef | None:
        return system.lookup(f"{root.path}/{name}")

    gateway, sessions, store = at("gateway"), at("sessions"), at("store")
    events = at("sessions/events")

    async def cancel_turns() -> None:
        if sessions is not None:
            await ManagerClient(sessions).call(CancelAll(REASON), timeout=math.inf)

    async def flush_stores() -> None:
        if events is not None:
            await events.call(FlushEvents(), timeout=math.inf)  # the turns' last events first
        if store is not None:
            await store.call(Sync(), timeout=math.inf)

    def to_gateway(request: object) -> list[Step]:
        return [Step.calling("gateway", gateway, request)] if gateway is not None else []

    return [
        Phase("stop-input", to_gateway(StopInput()), TIMEOUTS["stop-input"]),
        Phase("cancel-turns", [Step("sessions", cancel_turns)], TIMEOUTS["cancel-turns"]),
        Phase("flush-stores", [Step("store", flush_stores)], TIMEOUTS["flush-stores"]),
        Phase("close-surfaces", to_gateway(CloseSurfaces()), TIMEOUTS["close-surfaces"]),
    ]
