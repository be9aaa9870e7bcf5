"""A summary failure's cooldown survives a daemon restart (issue 24, item 2; seed #196).

A real store file and the fake provider across a restart: the first half runs
turns in one actor system until a summary fails (cut at its output limit: the
compaction aborts, every message is kept, automatic compaction holds for the
cooldown) and stops; the second opens a new actor system and store over the
same data directory and resumes the session by id.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import attrs
import trio

from actors import open_system
from hermes.compression import FailureState, SummaryFailure
from hermes.fake import FakeProvider, Reply
from hermes.session import SessionConfig, SessionDeps, SessionHandle, TurnEnd, start_session
from hermes.session.cooldown_record import from_stored, to_stored
from hermes.store import StoreClient, spawn_store
from hermes.store.cooldown_queries import GetCooldown, StoredCooldown

from .conftest import (
    FILLER,
    MAX_TOKENS,
    SETTINGS,
    SUMMARY,
    WINDOW,
    big,
    collect_until,
    events_of,
    four_turns_then_big,
    is_summary,
    small,
)

CUT = Reply.of(SUMMARY, stop_reason="max_tokens")
"""A summary cut at its output limit: a truncated summary aborts the compaction."""


@attrs.frozen(slots=True)
class _Life:
    session: SessionHandle
    store: StoreClient

    async def cooldown(self) -> StoredCooldown | None:
        """What the session's row holds of its summary failures."""
        return await self.store.request(GetCooldown(self.session.id))


@asynccontextmanager
async def _daemon(
    data: Path, config: SessionConfig, deps: SessionDeps, session_id: str | None
) -> AsyncIterator[_Life]:
    """One life of the daemon: an actor system and a store over ``data``, the session."""
    async with open_system("half", kill_grace=1.0, call_timeout=5.0) as system:
        store = await spawn_store(system, data, register=None)
        session = await start_session(
            system, config, attrs.evolve(deps, store=store), session_id=session_id
        )
        yield _Life(session, store)
        await session.close("the daemon stops")


def _summaries(fake: FakeProvider) -> int:
    return len([r for r in fake.message_requests if is_summary(r)])


def _config(config: SessionConfig, **compression: object) -> SessionConfig:
    settings = attrs.evolve(SETTINGS, aux_model=None, **compression)  # the main model summarises
    return attrs.evolve(
        config,
        compression=settings,
        context_window=WINDOW,
        max_tokens=MAX_TOKENS,
        load_context_files=False,
    )


async def _fail_a_summary(life: _Life, fake: FakeProvider) -> StoredCooldown:
    """Turns 1-5, the 5th's compaction aborting on a cut summary; the row's cooldown."""
    session = life.session
    fake.when(CUT, times=1, predicate=is_summary)
    with session.subscribe() as sub:
        await four_turns_then_big(session, fake)
        fake.enqueue(small(f"answer 5: {FILLER}"))
        assert (await session.run("question 5")).reason is TurnEnd.COMPLETED
        skipped, _ = await collect_until(sub, "CompactionSkipped")
    assert "the summary failed (truncated:" in skipped.reason, skipped.reason
    stored = await life.cooldown()
    assert stored is not None
    return stored


async def test_a_summary_failures_cooldown_is_in_force_after_a_restart(
    fake: FakeProvider, config: SessionConfig, deps: SessionDeps, tmp_path: Path
) -> None:
    data, config = tmp_path / "restart-data", _config(config)
    with trio.fail_after(60):
        async with _daemon(data, config, deps, None) as life:
            failed_at = time.time()
            stored = await _fail_a_summary(life, fake)
            session_id = life.session.id
        assert failed_at + 59 < (stored.until or 0) < time.time() + 60  # 60 s, wall clock
        assert (stored.failures, stored.climbs, stored.held) == (1, (("truncated", 1),), True)
        calls = _summaries(fake)
        fake.when(Reply.of(SUMMARY), predicate=is_summary)  # a summary would succeed now
        async with _daemon(data, config, deps, session_id) as life:
            session = life.session
            with session.subscribe() as sub:
                fake.enqueue(big(f"answer 6: {FILLER}"))  # over the threshold again...
                assert (await session.run("question 6")).reason is TurnEnd.COMPLETED
                fake.enqueue(small("answer 7"))
                assert (await session.run("question 7")).reason is TurnEnd.COMPLETED
                _, held = await collect_until(sub, "TurnCompleted")
                _, later = await collect_until(sub, "TurnCompleted")
                held += later
                still = await life.cooldown()
                # ...but held: the cooldown the first daemon started is still running.
                assert events_of(held, "CompactionStarted") == []
                assert _summaries(fake) == calls
                await session.compress(None)  # a manual /compress gets past it
                done, _ = await collect_until(sub, "CompactionCompleted")
                cleared = await life.cooldown()
    assert still == stored  # a held turn neither moves nor clears it
    assert (done.trigger, done.method) == ("request", "model")
    assert _summaries(fake) == calls + 1
    assert cleared is None  # a model summary cleared the row


async def test_a_restored_cooldown_ends_at_its_stored_time(
    fake: FakeProvider, config: SessionConfig, deps: SessionDeps, tmp_path: Path
) -> None:
    data, config = tmp_path / "restart-data", _config(config, cooldowns=(3.0, 300.0, 900.0))
    with trio.fail_after(60):
        async with _daemon(data, config, deps, None) as life:
            stored = await _fail_a_summary(life, fake)
            session_id = life.session.id
        assert stored.until is not None
        fake.when(Reply.of(SUMMARY), predicate=is_summary)
        async with _daemon(data, config, deps, session_id) as life:
            session = life.session
            # The wall clock passes the stored end (the deadline itself is what is tested).
            await trio.sleep(max(stored.until - time.time(), 0.0) + 0.05)
            with session.subscribe() as sub:
                fake.enqueue(big(f"answer 6: {FILLER}"))
                assert (await session.run("question 6")).reason is TurnEnd.COMPLETED
                fake.enqueue(small("answer 7"))
                assert (await session.run("question 7")).reason is TurnEnd.COMPLETED
                done, _ = await collect_until(sub, "CompactionCompleted")
                cleared = await life.cooldown()
    assert (done.trigger, done.method) == ("threshold", "model")
    assert cleared is None


def test_the_stored_end_is_wall_clock_and_the_rest_runs_on() -> None:
    """What is left of a stored cooldown runs on the new clock; a passed one is gone."""
    state = FailureState(
        until=110.0, failures=2, climbs=((SummaryFailure.TIMEOUT, 2),), overloads=1
    )
    stored = to_stored(state, now=100.0, wall=5_000.0)
    assert stored == StoredCooldown(
        until=5_010.0, failures=2, climbs=(("timeout", 2),), overloads=1
    )
    assert from_stored(stored, now=7.0, wall=5_004.0) == attrs.evolve(state, until=13.0)
    passed = from_stored(stored, now=7.0, wall=5_011.0)
    assert passed == attrs.evolve(state, until=None)  # never negative: the counters stay
    assert to_stored(FailureState(), now=1.0, wall=2.0) is None  # nothing kept: cleared
    unknown = StoredCooldown(climbs=(("from a later build", 1),), failures=1)
    assert from_stored(unknown, now=0.0, wall=0.0) == FailureState(failures=1)
