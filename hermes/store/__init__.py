"""Persistence: sessions, transcripts and full-text search in one SQLite file.

One actor owns the database (``StoreActor``, apsw in trio mode, WAL) and is
its only writer; everyone else talks to it through ``StoreClient``::

    client = await spawn_store(system, data_dir)
    info = await client.create_session(model="claude-sonnet-4-5")
    await client.append(info.id, Message.user("hello"), expected_seq=0)
    transcript = await client.load(info.id)      # resume: the same messages
    hits = await client.search("hello")           # (session id, seq, snippet), best first

See ``docs/store.md`` for the schema, durability and the concurrency model.
"""

from .actor import StoreActor, StoreLane, Sync
from .client import CallTarget, StoreClient, spawn_store
from .errors import (
    CorruptRecord,
    InvalidRequest,
    InvalidTranscript,
    RequestAborted,
    SeqConflict,
    SessionEnded,
    SessionExists,
    SessionNotFound,
    StaleWriter,
    StoreError,
    StoreTimeout,
    StoreUnavailable,
)
from .records import (
    DELEGATION_STATUSES,
    PROCESS_STATUSES,
    AppendResult,
    CompactionRecord,
    DelegationRecord,
    DelegationStatus,
    ProcessRecord,
    ProcessRecordStatus,
    SearchHit,
    SessionInfo,
    StoreConfig,
    Transcript,
)
from .requests import (
    AddUsage,
    AppendMessages,
    ClaimProcess,
    Compact,
    CreateSession,
    EndSession,
    EndSessions,
    ForgetProcess,
    GetSession,
    ListCompactions,
    ListDelegations,
    ListProcesses,
    ListSessions,
    LoadSession,
    RecordDelegationDelivered,
    RecordDelegationFinish,
    RecordDelegationStart,
    RecordProcessFinish,
    RecordProcessStart,
    ReopenSession,
    ReplaceLast,
    Request,
    Search,
    SetTitle,
    Truncate,
)
from .schema import MIGRATIONS, Migration, migrate, schema_version

__all__ = [
    "DELEGATION_STATUSES",
    "MIGRATIONS",
    "PROCESS_STATUSES",
    "AddUsage",
    "AppendMessages",
    "AppendResult",
    "CallTarget",
    "ClaimProcess",
    "Compact",
    "CompactionRecord",
    "CorruptRecord",
    "CreateSession",
    "DelegationRecord",
    "DelegationStatus",
    "EndSession",
    "EndSessions",
    "ForgetProcess",
    "GetSession",
    "InvalidRequest",
    "InvalidTranscript",
    "ListCompactions",
    "ListDelegations",
    "ListProcesses",
    "ListSessions",
    "LoadSession",
    "Migration",
    "ProcessRecord",
    "ProcessRecordStatus",
    "RecordDelegationDelivered",
    "RecordDelegationFinish",
    "RecordDelegationStart",
    "RecordProcessFinish",
    "RecordProcessStart",
    "ReopenSession",
    "ReplaceLast",
    "Request",
    "RequestAborted",
    "Search",
    "SearchHit",
    "SeqConflict",
    "SessionEnded",
    "SessionExists",
    "SessionInfo",
    "SessionNotFound",
    "SetTitle",
    "StaleWriter",
    "StoreActor",
    "StoreClient",
    "StoreConfig",
    "StoreError",
    "StoreLane",
    "StoreTimeout",
    "StoreUnavailable",
    "Sync",
    "Transcript",
    "Truncate",
    "migrate",
    "schema_version",
    "spawn_store",
]
