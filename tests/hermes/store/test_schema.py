"""Schema version table and forward migrations, on real files."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
import trio

from actors import ActorSystem
from hermes.store import (
    MIGRATIONS,
    Migration,
    StoreUnavailable,
    migrate,
    schema_version,
    spawn_store,
)
from hermes.store.schema import APPLICATION_ID

LATEST = len(MIGRATIONS)
NEXT = Migration(
    LATEST + 1,
    "session cost",
    "ALTER TABLE sessions ADD COLUMN cost_usd REAL NOT NULL DEFAULT 0",
)


def connect(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.pragma("journal_mode", "wal")
    return conn


def test_fresh_database_gets_every_table(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.db")
    assert schema_version(conn) == 0
    assert migrate(conn) == LATEST
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    assert {"sessions", "messages", "tool_calls", "messages_fts", "schema_version"} <= tables
    assert conn.pragma("application_id") == APPLICATION_ID
    rows = list(conn.execute("SELECT version, description FROM schema_version"))
    assert rows == [(m.version, m.description) for m in MIGRATIONS]
    # Migrating again is a no-op.
    assert migrate(conn) == LATEST
    assert conn.execute("SELECT count(*) FROM schema_version").get == LATEST


def test_forward_migration_keeps_data(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.db")
    migrate(conn)
    conn.execute(
        "INSERT INTO sessions (id, model, created_at, updated_at) VALUES ('s1', 'm', 1, 1)"
    )
    assert migrate(conn, (*MIGRATIONS, NEXT)) == LATEST + 1
    assert conn.execute("SELECT id, cost_usd FROM sessions").get == ("s1", 0.0)
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    assert versions == list(range(1, LATEST + 2))


def test_failed_migration_changes_nothing(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.db")
    migrate(conn)
    broken = Migration(LATEST + 1, "half done", "CREATE TABLE extra (x); THIS IS NOT SQL")
    with pytest.raises(apsw.SQLError):
        migrate(conn, (*MIGRATIONS, broken))
    assert schema_version(conn) == LATEST
    assert conn.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'extra'").get == 0
    assert conn.get_autocommit()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.db")
    migrate(conn, (*MIGRATIONS, NEXT))
    with pytest.raises(
        StoreUnavailable,
        match=rf"schema version {LATEST + 1}, newer than this build knows \({LATEST}\)",
    ):
        migrate(conn)


def test_foreign_databases_are_refused(tmp_path: Path) -> None:
    other = connect(tmp_path / "other.db")
    other.execute("CREATE TABLE invoices (id)")
    with pytest.raises(StoreUnavailable, match=r"not a Hermes store: .*other tables \(invoices\)"):
        migrate(other)

    tagged = connect(tmp_path / "tagged.db")
    tagged.pragma("application_id", 1234)
    with pytest.raises(StoreUnavailable, match="belongs to another application"):
        migrate(tagged)


def test_migrations_must_be_numbered_in_order(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a.db")
    with pytest.raises(ValueError, match="numbered 1, 2, 3"):
        migrate(conn, (Migration(2, "skips one", "SELECT 1"),))


async def test_store_refuses_a_newer_database(system: ActorSystem, tmp_path: Path) -> None:
    directory = tmp_path / "data"
    directory.mkdir()
    conn = connect(directory / "hermes.db")
    migrate(conn, (*MIGRATIONS, NEXT))
    conn.close()
    with trio.fail_after(10):
        with pytest.raises(StoreUnavailable) as error:
            await spawn_store(system, directory, register=None)
    assert error.value.operation == "open"
    assert str(directory / "hermes.db") in str(error.value)
    assert "newer than this build knows" in str(error.value)
