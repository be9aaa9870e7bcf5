"""A session's summary-failure cooldown on its row (migration 16; seed #196)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
import trio

from actors import ActorSystem
from hermes.store import (
    MIGRATIONS,
    InvalidRequest,
    SessionNotFound,
    StoreClient,
    migrate,
    spawn_store,
)
from hermes.store.cooldown_queries import GetCooldown, SaveCooldown, StoredCooldown

Peek = Callable[[], apsw.Connection]

KEPT = StoredCooldown(
    until=1_900_000_000.5, failures=2, climbs=(("timeout", 2),), held=True, overloads=1
)


async def test_a_cooldown_is_kept_read_back_and_cleared(store: StoreClient, peek: Peek) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        assert await store.request(GetCooldown(info.id)) is None
        await store.request(SaveCooldown(info.id, KEPT))
        kept = await store.request(GetCooldown(info.id))
        columns = peek().execute(
            "SELECT summary_cooldown_until, summary_failures FROM sessions WHERE id = ?",
            (info.id,),
        )
        until, counters = columns.fetchone()
        await store.request(SaveCooldown(info.id, None))
        cleared = await store.request(GetCooldown(info.id))
        after = await store.get_session(info.id)
    assert kept == KEPT
    assert until == 1_900_000_000.5  # on the session's own row, in wall-clock seconds
    assert '"timeout": 2' in counters and '"held": true' in counters
    assert cleared is None
    assert after.message_count == 0 and after.ended_at is None  # the row is otherwise untouched


async def test_counters_without_a_deadline_are_kept(store: StoreClient) -> None:
    """An expired cooldown keeps its counters: the next failure climbs from them."""
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        counters = StoredCooldown(failures=3, climbs=(("truncated", 3),))
        await store.request(SaveCooldown(info.id, counters))
        assert await store.request(GetCooldown(info.id)) == counters


@pytest.mark.parametrize(
    ("cooldown", "named"),
    [
        (StoredCooldown(until=math.inf), "until must be a finite time"),
        (StoredCooldown(until="soon"), "until must be a finite time"),  # type: ignore[arg-type]
        (StoredCooldown(failures=-1), "failures must be a count"),
        (StoredCooldown(overloads=True), "overloads must be a count"),
        (StoredCooldown(held="yes"), "held must be a bool"),  # type: ignore[arg-type]
        (StoredCooldown(climbs=(("timeout", 0),)), "climbs must be (failure class, steps > 0)"),
        (StoredCooldown(climbs=(("", 1),)), "climbs must be (failure class, steps > 0)"),
        (StoredCooldown(climbs=7), "climbs must be a tuple"),  # type: ignore[arg-type]
        ("later", "cooldown must be a StoredCooldown or None"),
    ],
)
async def test_a_bad_cooldown_is_refused_by_name(
    store: StoreClient, cooldown: object, named: str
) -> None:
    with trio.fail_after(10):
        info = await store.create_session(model="m")
        await store.request(SaveCooldown(info.id, KEPT))
        with pytest.raises(InvalidRequest, match=rf"save_cooldown.*{re.escape(named)}"):
            await store.request(SaveCooldown(info.id, cooldown))  # type: ignore[arg-type]
        assert await store.request(GetCooldown(info.id)) == KEPT  # nothing changed


async def test_an_unknown_session_is_named(store: StoreClient) -> None:
    with trio.fail_after(10):
        with pytest.raises(SessionNotFound, match="nosuch"):
            await store.request(SaveCooldown("nosuch", KEPT))
        with pytest.raises(SessionNotFound, match="nosuch"):
            await store.request(GetCooldown("nosuch"))


def test_migration_16_adds_the_columns_to_existing_rows(tmp_path: Path) -> None:
    conn = apsw.Connection(str(tmp_path / "a.db"))
    conn.pragma("journal_mode", "wal")
    assert migrate(conn, MIGRATIONS[:15]) == 15
    conn.execute(
        "INSERT INTO sessions (id, model, created_at, updated_at) VALUES ('old', 'm', 1, 1)"
    )
    assert migrate(conn, MIGRATIONS[:16]) == 16
    row = conn.execute(
        "SELECT id, summary_cooldown_until, summary_failures FROM sessions"
    ).fetchone()
    assert row == ("old", None, None)
    assert MIGRATIONS[15].version == 16 and "cooldown" in MIGRATIONS[15].description


def _version_15_database(store_dir: Path) -> None:
    store_dir.mkdir(parents=True)
    conn = apsw.Connection(str(store_dir / "hermes.db"))
    conn.pragma("journal_mode", "wal")
    migrate(conn, MIGRATIONS[:15])
    conn.execute(
        "INSERT INTO sessions (id, model, created_at, updated_at) VALUES ('old', 'm', 1, 1)"
    )
    conn.close()


async def test_a_version_15_database_reads_no_cooldown(
    system: ActorSystem, store_dir: Path
) -> None:
    _version_15_database(store_dir)
    store = await spawn_store(system, store_dir, register=None)
    with trio.fail_after(10):
        assert await store.request(GetCooldown("old")) is None
        await store.request(SaveCooldown("old", KEPT))
        assert await store.request(GetCooldown("old")) == KEPT
