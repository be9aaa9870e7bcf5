"""Background processes as supervised actors: one registry per session, one watcher each.

    registry (ProcessRegistry, one per session)      answers list/poll/log/wait,
    |                                                  admits starts, pushes notices
    |-- proc_1a2b3c (ProcessWatcher)                   owns one process group; its
    |                                                  OutputPump tasks read the output
    |                                                  and wait for the exit
    `-- proc_4d5e6f (AdoptedWatcher)                   adopted after a daemon restart

Tools reach it through ``ProcessService`` in their context
(``ctx.service(ProcessService)``): the ``process`` tool and ``terminal``'s
background modes are ``hermes/tools/builtin/process_tool.py`` and
``background.py`` (this package imports no tool); process groups are
``hermes/procgroup.py``; notices (``ProcessNotice``) go to the
``notify`` sink given to the registry. See ``docs/processes.md``.

| module | one job |
|---|---|
| ``config.py`` | ``ProcessConfig``: every limit and budget, Hermes' defaults |
| ``buffer.py`` | ``OutputBuffer``: rolling output with absolute offsets |
| ``lines.py`` | line splitting (bounded) and pattern matching |
| ``limits.py`` | ``PatternLimiter`` and ``Breaker``: pure rate limits |
| ``gate.py`` | ``NoticeGate``: the breaker in front of the session, with summaries |
| ``notices.py`` | ``ProcessNotice`` and its kinds |
| ``state.py`` | ``ProcessState`` (live), ``ProcessInfo`` and results (snapshots) |
| ``procfs.py`` | ``/proc``: start-time fingerprints, groups; killing a group by id |
| ``watcher.py`` / ``adopted.py`` | the watcher actors (``watcher_base.py``: what both share) |
| ``pump.py`` | ``OutputPump``: the watcher's tasks reading the pipe and waiting for the exit |
| ``registry.py`` | ``ProcessRegistry`` and ``spawn_process_registry`` |
| ``waits.py`` | ``Waits``: the registry's pending waits and their timeouts |
| ``adoption.py`` | processes taken over: recovered after a restart, handed over by a subagent |
| ``service.py`` | ``ProcessService``: the typed client tools use |
| ``checkpoint.py`` / ``orphans.py`` | the crash checkpoint in the store; orphan listing/killing |
| ``foreground.py`` | foreground commands' groups: recorded before they run, swept at start |
"""

from .buffer import OutputBuffer, Page
from .checkpoint import Checkpoint, Recovery
from .config import ProcessConfig
from .errors import (
    ProcessError,
    ProcessNotFound,
    ProcessNotRunning,
    ProcessServiceUnavailable,
    ProcessStartFailed,
    StdinClosed,
    TooManyProcesses,
)
from .foreground import (
    ForegroundLedger,
    Leftover,
    LeftoverNotes,
    describe_leftovers,
    sweep_leftovers,
)
from .handoff import HandoffTarget
from .limits import Breaker, PatternLimiter
from .notices import NoticeKind, NoticeSink, ProcessNotice
from .orphans import Orphan, OrphanOutcome, kill_orphans, list_orphans
from .procfs import Fingerprint, Liveness
from .registry import ProcessRegistry, spawn_process_registry
from .service import ProcessService
from .state import (
    LogResult,
    PollResult,
    ProcessInfo,
    ProcessState,
    ProcessStatus,
    WaitOutcome,
    WaitResult,
)

__all__ = [
    "Breaker",
    "Checkpoint",
    "Fingerprint",
    "ForegroundLedger",
    "HandoffTarget",
    "Leftover",
    "LeftoverNotes",
    "Liveness",
    "LogResult",
    "NoticeKind",
    "NoticeSink",
    "Orphan",
    "OrphanOutcome",
    "OutputBuffer",
    "Page",
    "PatternLimiter",
    "PollResult",
    "ProcessConfig",
    "ProcessError",
    "ProcessInfo",
    "ProcessNotFound",
    "ProcessNotRunning",
    "ProcessNotice",
    "ProcessRegistry",
    "ProcessService",
    "ProcessServiceUnavailable",
    "ProcessStartFailed",
    "ProcessState",
    "ProcessStatus",
    "Recovery",
    "StdinClosed",
    "TooManyProcesses",
    "WaitOutcome",
    "WaitResult",
    "describe_leftovers",
    "kill_orphans",
    "list_orphans",
    "spawn_process_registry",
    "sweep_leftovers",
]
