"""Actors on trio: bounded mailboxes, refs, call/cast, monitors, links, liveness.

This package knows nothing about agents. Start with ``open_system()`` and
subclass ``Actor``::

    class Counter(Actor):
        async def on_start(self) -> None:
            self.n = 0

        async def receive(self, message):
            self.n += message
            return self.n

    async with open_system() as system:
        ref = await system.spawn(Counter(), name="counter")
        await ref.cast(1)
        assert await ref.call(2) == 3
"""

from ._actor import Actor
from ._calls import Call, CallTarget
from ._checks import is_count, is_number
from ._context import ActorContext, Reply
from ._current import current_path
from ._deadletters import DeadLetters
from ._errors import (
    ActorError,
    ActorExited,
    CallTimeout,
    CallToSelf,
    MailboxFull,
    NameTaken,
    NotRunning,
    StartFailed,
    TaskCancelled,
    TaskFailed,
    UnhandledMessage,
)
from ._events import (
    ActorExitedEvent,
    ActorStarted,
    DeadLetter,
    EventBus,
    LoopStall,
    Subscription,
    UnkillableFinished,
    UnkillableReported,
)
from ._exits import ExitKind, ExitReason
from ._gc_pauses import GcPauses, gc_pauses
from ._gc_tuning import tune_gc
from ._introspect import trio_task_count
from ._liveness import LivenessSpec
from ._mailbox import MailboxConfig, MailboxStats, Overflow
from ._messages import Down, Exit, MonitorRef, Stale, TaskEnded
from ._oneshot import Task, TaskRef
from ._ref import ActorRef, kill_all
from ._stall import LoopStallDetector, StallReport
from ._system import ActorSystem, open_system
from ._tasks import OwnedTask
from ._timers import Timer
from ._watchable import Watchable

__all__ = [
    "Actor",
    "ActorContext",
    "ActorError",
    "ActorExited",
    "ActorExitedEvent",
    "ActorRef",
    "ActorStarted",
    "ActorSystem",
    "Call",
    "CallTarget",
    "CallTimeout",
    "CallToSelf",
    "DeadLetter",
    "DeadLetters",
    "Down",
    "EventBus",
    "Exit",
    "ExitKind",
    "ExitReason",
    "GcPauses",
    "LivenessSpec",
    "LoopStall",
    "LoopStallDetector",
    "MailboxConfig",
    "MailboxFull",
    "MailboxStats",
    "MonitorRef",
    "NameTaken",
    "NotRunning",
    "Overflow",
    "OwnedTask",
    "Reply",
    "Stale",
    "StallReport",
    "StartFailed",
    "Subscription",
    "Task",
    "TaskCancelled",
    "TaskEnded",
    "TaskFailed",
    "TaskRef",
    "Timer",
    "UnhandledMessage",
    "UnkillableFinished",
    "UnkillableReported",
    "Watchable",
    "current_path",
    "gc_pauses",
    "is_count",
    "is_number",
    "kill_all",
    "open_system",
    "trio_task_count",
    "tune_gc",
]
