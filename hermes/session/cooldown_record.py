"""A session's summary-failure cooldown across restarts (seed #196: "persisted on the session row").

The compaction policy runs on trio's clock, which starts again with the
process, so the store keeps the cooldown's end in wall-clock time
(``hermes.store.cooldown_queries``) with the counters its ladder climbs on.
The keeper writes them when a failed summary starts or climbs a cooldown and
clears them when a model summary succeeds (``ContextKeeper.compact``); a
session that starts (resumed, or its actor restarted) takes them back, the
cooldown running for what is left of it (the stored end minus now, never
below zero). A store failure is only logged: the session then runs on what
it has in memory.
"""

from __future__ import annotations

import logging
import time

import trio

from hermes.compression import CompressionPolicy, FailureState, SummaryFailure
from hermes.store import StoreClient, StoreError
from hermes.store.cooldown_queries import GetCooldown, SaveCooldown, StoredCooldown

log = logging.getLogger(__name__)

_CLASSES = {failure.value: failure for failure in SummaryFailure}


def to_stored(state: FailureState, now: float, wall: float) -> StoredCooldown | None:
    """``state`` (its end on the clock that reads ``now``) as the store keeps it, with
    the end in wall-clock time (``wall`` read at the same moment); None when clear."""
    if state.clear:
        return None
    until = None if state.until is None else wall + (state.until - now)
    return StoredCooldown(
        until=until,
        failures=state.failures,
        climbs=tuple((failure.value, steps) for failure, steps in state.climbs),
        held=state.held,
        overloads=state.overloads,
    )


def from_stored(stored: StoredCooldown, now: float, wall: float) -> FailureState:
    """The kept state on the clock that reads ``now``: the cooldown runs for what is
    left of it (``stored.until - wall``, never negative; none once it has passed)."""
    remaining = 0.0 if stored.until is None else max(stored.until - wall, 0.0)
    return FailureState(
        until=now + remaining if remaining > 0 else None,
        failures=stored.failures,
        climbs=tuple((_CLASSES[k], n) for k, n in stored.climbs if k in _CLASSES),
        held=stored.held,
        overloads=stored.overloads,
    )


async def restore_cooldown(
    policy: CompressionPolicy, store: StoreClient, session_id: str, timeout: float
) -> None:
    """Give ``policy`` the session's kept summary failures (nothing kept: unchanged)."""
    try:
        stored = await store.request(GetCooldown(session_id), timeout=timeout)
    except StoreError as error:
        log.warning("session %s: its summary cooldown could not be read: %s", session_id, error)
        return
    if stored is not None:
        policy.restore_failures(from_stored(stored, trio.current_time(), time.time()))


async def keep_cooldown(
    store: StoreClient, session_id: str, state: FailureState, timeout: float
) -> None:
    """Write ``state`` on the session's row (clear it when ``state`` is clear)."""
    request = SaveCooldown(session_id, to_stored(state, trio.current_time(), time.time()))
    try:
        await store.request(request, timeout=timeout)
    except StoreError as error:
        log.warning("session %s: its summary cooldown was not stored: %s", session_id, error)
