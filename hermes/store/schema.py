"""The database schema, its forward migrations, and the connection's settings.

Plain synchronous functions on an ``apsw.Connection``: the store runs them in
its connection's worker thread; tests may call them on an ordinary connection.

Tables (version 1):

- ``sessions``: one row per session (lineage through ``parent_id``, title,
  model, wall-clock times, end reason, message count and token usage).
- ``messages``: one row per transcript message, ``(session_id, seq)`` unique,
  ``content`` the msgpack of its plain content blocks (``hermes.codec``),
  ``text`` the searchable text (text blocks and tool-result text).
- ``tool_calls``: one row per tool_use block: its message (``use_seq``), the
  message holding its tool_result (``result_seq``, NULL while unanswered),
  the tool name and the result's ``is_error``.
- ``messages_fts``: an FTS5 index over ``messages.text`` (external content,
  kept in step by triggers).
- ``schema_version``: one row per applied migration.

Version 2 adds ``processes``: one row per background process (the crash
checkpoint of ``hermes.processes``): pid, process group, start-time
fingerprint, command, owning session and daemon, status and exit code.

Version 3 adds ``delegations``: one row per background delegation of
``hermes.subagents`` (parent session, goals, status, the result text to
deliver), so a daemon restart neither loses a finished result nor forgets one
that was running.

Version 4 adds ``events``: a session's published events (type, time, the
msgpack of the payload), written in batches by the daemon, so ``since=``
replay works across restarts (``event_queries.py``).

Version 5 adds context compaction (``compaction_queries.py``): a session's
rows replaced by a compaction move, untouched, to an *archive* session
(``sessions.archive_of`` names the live one), so nothing is lost and search
still finds them; ``compactions`` records each one (archive, method, sizes).

Version 6 defers the full-text index: a new or changed message only puts its
row id in ``fts_pending`` (one small insert), and ``index_pending`` (in
``queries.py``) indexes the queue in one batch: before every search, so a
search sees every committed message, and in the background once enough rows
wait (see ``actor.py``). Indexing a message with its own write cost about a
sixth of each append (``python -m bench session``); a batch shares the
index's per-transaction work. Deleting an indexed row still takes it out of
the index at once; deleting a queued one just drops it from the queue.

Version 7 adds ``processes.tool_use_id``: a foreground tool command's process
group is recorded in ``processes`` too (before its command runs), with the
tool call it belongs to, so a restarted daemon can find it, kill or list it,
and say so in that call's result (``hermes.processes.foreground``). NULL for
background processes.

Version 16 adds ``sessions.summary_cooldown_until`` (wall-clock time) and
``sessions.summary_failures`` (JSON counters): a session's summary-failure
cooldown survives a restart (``cooldown_queries.py``; seed #196).
"""

from __future__ import annotations

import time

import apsw
import attrs

from .errors import StoreUnavailable
from .records import StoreConfig

APPLICATION_ID = 0x48524D53
"""``PRAGMA application_id`` of a Hermes store ("HRMS"), so a foreign file is refused."""


@attrs.frozen(slots=True)
class Migration:
    version: int
    description: str
    sql: str


_V1 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
    parent_id TEXT REFERENCES sessions (id),
    title TEXT,
    model TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER NOT NULL DEFAULT 0 CHECK (message_count >= 0),
    input_tokens INTEGER NOT NULL DEFAULT 0 CHECK (input_tokens >= 0),
    output_tokens INTEGER NOT NULL DEFAULT 0 CHECK (output_tokens >= 0),
    cache_creation_input_tokens INTEGER NOT NULL DEFAULT 0
        CHECK (cache_creation_input_tokens >= 0),
    cache_read_input_tokens INTEGER NOT NULL DEFAULT 0 CHECK (cache_read_input_tokens >= 0),
    CHECK ((ended_at IS NULL) = (end_reason IS NULL))
);
CREATE INDEX sessions_by_parent ON sessions (parent_id);
CREATE INDEX sessions_by_updated ON sessions (updated_at);

CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    seq INTEGER NOT NULL CHECK (seq >= 0),
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content BLOB NOT NULL,
    text TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (session_id, seq)
);

CREATE TABLE tool_calls (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    tool_use_id TEXT NOT NULL,
    name TEXT NOT NULL,
    use_seq INTEGER NOT NULL,
    block INTEGER NOT NULL,
    result_seq INTEGER CHECK (result_seq IS NULL OR result_seq > use_seq),
    is_error INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    PRIMARY KEY (session_id, tool_use_id)
) WITHOUT ROWID;
CREATE INDEX tool_calls_by_use ON tool_calls (session_id, use_seq, block);

CREATE VIRTUAL TABLE messages_fts USING fts5 (
    text, content = 'messages', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text) VALUES ('delete', old.id, old.text);
    INSERT INTO messages_fts (rowid, text) VALUES (new.id, new.text);
END;
"""

_V2 = """
CREATE TABLE processes (
    id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
    session_id TEXT NOT NULL CHECK (length(session_id) > 0),
    command TEXT NOT NULL,
    cwd TEXT NOT NULL,
    pid INTEGER NOT NULL CHECK (pid > 0),
    pgid INTEGER NOT NULL CHECK (pgid > 0),
    start_time INTEGER NOT NULL CHECK (start_time >= 0),
    boot_id TEXT NOT NULL,
    owner_pid INTEGER NOT NULL CHECK (owner_pid > 0),
    owner_start_time INTEGER NOT NULL CHECK (owner_start_time >= 0),
    status TEXT NOT NULL CHECK (status IN ('running', 'exited', 'killed', 'lost')),
    exit_code INTEGER,
    started_at REAL NOT NULL,
    finished_at REAL,
    CHECK ((status = 'running') = (finished_at IS NULL))
);
CREATE INDEX processes_by_session ON processes (session_id, status);
CREATE INDEX processes_by_status ON processes (status);
"""

_V3 = """
CREATE TABLE delegations (
    id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
    session_id TEXT NOT NULL REFERENCES sessions (id),
    goals TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'delivered')),
    result TEXT,
    created_at REAL NOT NULL,
    finished_at REAL,
    delivered_at REAL,
    CHECK ((status = 'running') = (result IS NULL)),
    CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
);
CREATE INDEX delegations_by_session ON delegations (session_id, status);
"""

_V4 = """
CREATE TABLE events (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    at REAL NOT NULL,
    payload BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""

_V5 = """
ALTER TABLE sessions ADD COLUMN archive_of TEXT REFERENCES sessions (id);
CREATE INDEX sessions_by_archive_of ON sessions (archive_of);
CREATE TABLE compactions (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    archive_id TEXT NOT NULL UNIQUE REFERENCES sessions (id),
    created_at REAL NOT NULL,
    method TEXT NOT NULL CHECK (length(method) > 0),
    focus TEXT,
    messages_before INTEGER NOT NULL CHECK (messages_before >= 0),
    messages_after INTEGER NOT NULL CHECK (messages_after >= 0),
    tokens_before INTEGER NOT NULL CHECK (tokens_before >= 0),
    tokens_after INTEGER NOT NULL CHECK (tokens_after >= 0)
);
CREATE INDEX compactions_by_session ON compactions (session_id, id);
"""

_V6 = """
CREATE TABLE fts_pending (id INTEGER PRIMARY KEY);
DROP TRIGGER messages_fts_insert;
DROP TRIGGER messages_fts_delete;
DROP TRIGGER messages_fts_update;
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO fts_pending (id) VALUES (new.id);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text)
        SELECT 'delete', old.id, old.text
        WHERE NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.id);
    DELETE FROM fts_pending WHERE id = old.id;
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF text ON messages BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, text)
        SELECT 'delete', old.id, old.text
        WHERE NOT EXISTS (SELECT 1 FROM fts_pending WHERE id = old.id);
    INSERT OR IGNORE INTO fts_pending (id) VALUES (new.id);
END;
"""

_V7 = """
ALTER TABLE processes ADD COLUMN tool_use_id TEXT
    CHECK (tool_use_id IS NULL OR length(tool_use_id) > 0);
CREATE INDEX processes_of_tool_calls ON processes (session_id, tool_use_id)
    WHERE tool_use_id IS NOT NULL;
"""

_V8 = """
CREATE TABLE session_flags (
    session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (id),
    yolo INTEGER NOT NULL DEFAULT 0 CHECK (yolo IN (0, 1))
);
"""

_V9 = """
CREATE TABLE cron_jobs (
    id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
    name TEXT NOT NULL,
    schedule TEXT NOT NULL CHECK (length(schedule) > 0),
    tz TEXT NOT NULL,
    prompt TEXT NOT NULL,
    cwd TEXT,
    model TEXT,
    toolsets TEXT,
    overlap TEXT NOT NULL CHECK (overlap IN ('skip', 'queue', 'cancel')),
    timeout REAL NOT NULL CHECK (timeout >= 0),
    state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'done')),
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    next_run_at REAL,
    last_run_at REAL,
    last_outcome TEXT,
    last_detail TEXT,
    last_session_id TEXT,
    runs INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE cron_runs (
    id INTEGER PRIMARY KEY,
    job_id TEXT NOT NULL,
    scheduled_for REAL,
    started_at REAL NOT NULL,
    finished_at REAL NOT NULL,
    outcome TEXT NOT NULL,
    detail TEXT NOT NULL,
    session_id TEXT
);
CREATE INDEX cron_runs_by_job ON cron_runs (job_id, id);
"""

_V10 = """
ALTER TABLE cron_jobs ADD COLUMN script TEXT;
ALTER TABLE cron_jobs ADD COLUMN deliver TEXT;
ALTER TABLE cron_jobs ADD COLUMN origin TEXT;
ALTER TABLE cron_runs ADD COLUMN delivery TEXT;
"""

_V11 = """
CREATE TABLE session_prompts (
    session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (id),
    model TEXT NOT NULL CHECK (length(model) > 0),
    cwd TEXT NOT NULL CHECK (length(cwd) > 0),
    blocks BLOB NOT NULL
) WITHOUT ROWID;
"""

_V12 = """
CREATE TABLE session_goals (
    session_id TEXT PRIMARY KEY NOT NULL REFERENCES sessions (id),
    state TEXT NOT NULL
) WITHOUT ROWID;
"""

_V13 = """
ALTER TABLE sessions ADD COLUMN writer INTEGER NOT NULL DEFAULT 0;
"""
_V14 = """
CREATE TABLE kanban_cards (
    id TEXT PRIMARY KEY NOT NULL CHECK (length(id) > 0),
    title TEXT NOT NULL CHECK (length(title) > 0),
    body TEXT NOT NULL,
    status TEXT NOT NULL
        CHECK (status IN ('triage', 'todo', 'running', 'review', 'blocked', 'done')),
    parent TEXT,
    depends TEXT NOT NULL,
    assignee TEXT,
    goal INTEGER NOT NULL CHECK (goal IN (0, 1)),
    block_reason TEXT,
    result TEXT,
    author TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    runs INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
"""

_V15 = """
ALTER TABLE session_prompts ADD COLUMN tools TEXT;
"""

_V16 = """
ALTER TABLE sessions ADD COLUMN summary_cooldown_until REAL;
ALTER TABLE sessions ADD COLUMN summary_failures TEXT;
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions, messages, tool calls, full-text index", _V1),
    Migration(2, "background processes (crash checkpoint)", _V2),
    Migration(3, "background delegations (results delivered once)", _V3),
    Migration(4, "session events (replay across restarts)", _V4),
    Migration(5, "context compaction (archived rows, compaction records)", _V5),
    Migration(6, "full-text index in batches (fts_pending queue)", _V6),
    Migration(7, "foreground tool process groups (processes.tool_use_id)", _V7),
    Migration(8, "session flags (the yolo switch survives restarts)", _V8),
    Migration(9, "scheduled jobs and their runs (cron)", _V9),
    Migration(10, "cron jobs' pre-run script, delivery target and origin; runs' delivery", _V10),
    Migration(11, "the system prompt each session sends (reused on resume)", _V11),
    Migration(12, "a session's standing goal and loop (they survive restarts)", _V12),
    Migration(13, "a transcript's writer epoch (a stale writer is refused)", _V13),
    Migration(14, "the kanban board's cards (hermes/kanban)", _V14),
    Migration(15, "the tool list each session sends, beside its prompt (reused on resume)", _V15),
    Migration(16, "a session's summary-failure cooldown (it survives restarts)", _V16),
)
"""Every schema change ever made, in order; append, never edit."""

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""


def _check_migrations(migrations: tuple[Migration, ...]) -> None:
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migrations must be numbered 1, 2, 3... in order, got {versions}")


_check_migrations(MIGRATIONS)


def configure(conn: apsw.Connection, config: StoreConfig) -> None:
    """Connection settings: WAL, sync level, foreign keys, busy timeout, size limit."""
    mode = conn.pragma("journal_mode", "wal")
    if str(mode).lower() != "wal":
        raise StoreUnavailable(
            "open",
            f"cannot put the database in WAL mode (SQLite kept journal_mode={mode!r}; "
            "WAL needs a local file system with shared memory)",
        )
    conn.pragma("synchronous", config.synchronous)
    conn.pragma("foreign_keys", 1)
    conn.pragma("journal_size_limit", 64 * 1024 * 1024)
    conn.set_busy_timeout(int(config.busy_timeout * 1000))
    if config.max_size_bytes is not None:
        page_size = int(conn.pragma("page_size"))
        conn.pragma("max_page_count", max(1, config.max_size_bytes // page_size))


def schema_version(conn: apsw.Connection) -> int:
    """The highest applied migration (0 for an empty database)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'"
    ).get
    if not exists:
        return 0
    version = conn.execute("SELECT max(version) FROM schema_version").get
    return int(version or 0)


def migrate(conn: apsw.Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """Bring the schema up to the last migration, in one transaction; returns the version.

    Refuses a database that belongs to another application or was written by a
    newer build (whose schema this one does not know).
    """
    _check_migrations(migrations)
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = _migrate(conn, migrations)
        conn.execute("COMMIT")
    except BaseException:
        if not conn.get_autocommit():
            conn.execute("ROLLBACK")
        raise
    return version


def _migrate(conn: apsw.Connection, migrations: tuple[Migration, ...]) -> int:
    app_id = int(conn.pragma("application_id"))
    tables = [
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    if app_id not in (0, APPLICATION_ID):
        raise StoreUnavailable(
            "open", f"not a Hermes store: the file belongs to another application (id {app_id:#x})"
        )
    if app_id == 0 and tables:
        shown = ", ".join(sorted(tables)[:5])
        raise StoreUnavailable(
            "open", f"not a Hermes store: the database already has other tables ({shown})"
        )
    current = schema_version(conn)
    latest = migrations[-1].version if migrations else 0
    if current > latest:
        raise StoreUnavailable(
            "open",
            f"the database has schema version {current}, newer than this build knows "
            f"({latest}); use a newer hermes",
        )
    conn.execute(_VERSION_TABLE)
    for migration in migrations[current:]:
        conn.execute(migration.sql)
        conn.execute(
            "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)",
            (migration.version, migration.description, time.time()),
        )
    conn.pragma("application_id", APPLICATION_ID)
    return latest
